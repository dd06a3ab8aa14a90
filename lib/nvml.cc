// Optional NVML readings through dlopen (see nvml.h). The few entry points used are declared
// here with NVML's documented C signatures, so no NVML header or library is needed to build.
#include "nvml.h"

#include <dlfcn.h>

#include <cstddef>
#include <mutex>

namespace ktune::nvml {

// nvmlFieldValue_t's layout on LP64 (NVML's header: two unsigned ints, two long longs, two
// enums, an 8-byte union).
static_assert(sizeof(FieldValue) == 40 && offsetof(FieldValue, value_type) == 24 &&
              offsetof(FieldValue, value) == 32);

namespace {

using nvmlReturn = int;  // NVML_SUCCESS == 0
using InitFn = nvmlReturn (*)();
using ByPciFn = nvmlReturn (*)(const char*, void**);
using ClockFn = nvmlReturn (*)(void*, int, unsigned*);
using TempFn = nvmlReturn (*)(void*, int, unsigned*);
using PowerFn = nvmlReturn (*)(void*, unsigned*);  // milliwatts
using FieldValuesFn = nvmlReturn (*)(void*, int, FieldValue*);

constexpr int kClockSm = 1;          // NVML_CLOCK_SM
constexpr int kTemperatureGpu = 0;   // NVML_TEMPERATURE_GPU
constexpr unsigned kFieldPowerInstant = 186;  // NVML_FI_DEV_POWER_INSTANT (milliwatts)

struct Library {
  bool ok = false;
  ByPciFn by_pci = nullptr;
  ClockFn clock = nullptr;
  TempFn temperature = nullptr;
  PowerFn power = nullptr;  // optional: readings are -1 without it
  FieldValuesFn field_values = nullptr;  // optional: the instantaneous power field
};

const Library& library() {
  static Library lib;
  static std::once_flag once;
  std::call_once(once, [] {
    void* so = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!so) return;
    auto init = reinterpret_cast<InitFn>(dlsym(so, "nvmlInit_v2"));
    lib.by_pci = reinterpret_cast<ByPciFn>(dlsym(so, "nvmlDeviceGetHandleByPciBusId_v2"));
    lib.clock = reinterpret_cast<ClockFn>(dlsym(so, "nvmlDeviceGetClockInfo"));
    lib.temperature = reinterpret_cast<TempFn>(dlsym(so, "nvmlDeviceGetTemperature"));
    lib.power = reinterpret_cast<PowerFn>(dlsym(so, "nvmlDeviceGetPowerUsage"));
    lib.field_values = reinterpret_cast<FieldValuesFn>(dlsym(so, "nvmlDeviceGetFieldValues"));
    lib.ok = init && lib.by_pci && lib.clock && lib.temperature && init() == 0;
  });
  return lib;
}

/// The instantaneous board power in milliwatts, nullopt where the driver lacks the field.
std::optional<double> instant_power_mw(void* handle) {
  if (!library().field_values) return std::nullopt;
  FieldValue field;
  field.field_id = kFieldPowerInstant;
  if (library().field_values(handle, 1, &field) != 0) return std::nullopt;
  return field_number(field);
}

}  // namespace

std::optional<double> field_number(const FieldValue& field) {
  if (field.nvml_return != 0) return std::nullopt;
  const FieldValueUnion& v = field.value;
  switch (field.value_type) {
    case 0: return v.d;
    case 1: return static_cast<double>(v.ui);
    case 2: return static_cast<double>(v.ul);
    case 3: return static_cast<double>(v.ull);
    case 4: return static_cast<double>(v.sll);
    case 5: return static_cast<double>(v.si);
    case 6: return static_cast<double>(v.us);
    default: return std::nullopt;
  }
}

GpuSensor::GpuSensor(const std::string& pci_bus_id) {
  const auto& lib = library();
  if (!lib.ok || pci_bus_id.empty()) return;
  void* h = nullptr;
  if (lib.by_pci(pci_bus_id.c_str(), &h) == 0) handle_ = h;
  instant_ = handle_ && instant_power_mw(handle_).has_value();
}

int GpuSensor::sm_clock_mhz() const {
  unsigned v = 0;
  if (!handle_ || library().clock(handle_, kClockSm, &v) != 0) return -1;
  return static_cast<int>(v);
}

int GpuSensor::temperature_c() const {
  unsigned v = 0;
  if (!handle_ || library().temperature(handle_, kTemperatureGpu, &v) != 0) return -1;
  return static_cast<int>(v);
}

double GpuSensor::power_w() const {
  if (!handle_) return -1;
  if (instant_) {
    if (const auto mw = instant_power_mw(handle_)) return *mw / 1000.0;
  }
  unsigned mw = 0;
  if (!library().power || library().power(handle_, &mw) != 0) return -1;
  return mw / 1000.0;
}

bool GpuSensor::power_is_instant() const { return instant_; }

}  // namespace ktune::nvml
