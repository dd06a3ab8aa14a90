// Optional NVML readings through dlopen (see nvml.h). The few entry points used are declared
// here with NVML's documented C signatures, so no NVML header or library is needed to build.
#include "nvml.h"

#include <dlfcn.h>

#include <mutex>

namespace ktune::nvml {

namespace {

using nvmlReturn = int;  // NVML_SUCCESS == 0
using InitFn = nvmlReturn (*)();
using ByPciFn = nvmlReturn (*)(const char*, void**);
using ClockFn = nvmlReturn (*)(void*, int, unsigned*);
using TempFn = nvmlReturn (*)(void*, int, unsigned*);
using PowerFn = nvmlReturn (*)(void*, unsigned*);  // milliwatts

constexpr int kClockSm = 1;          // NVML_CLOCK_SM
constexpr int kTemperatureGpu = 0;   // NVML_TEMPERATURE_GPU

struct Library {
  bool ok = false;
  ByPciFn by_pci = nullptr;
  ClockFn clock = nullptr;
  TempFn temperature = nullptr;
  PowerFn power = nullptr;  // optional: readings are -1 without it
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
    lib.ok = init && lib.by_pci && lib.clock && lib.temperature && init() == 0;
  });
  return lib;
}

}  // namespace

GpuSensor::GpuSensor(const std::string& pci_bus_id) {
  const auto& lib = library();
  if (!lib.ok || pci_bus_id.empty()) return;
  void* h = nullptr;
  if (lib.by_pci(pci_bus_id.c_str(), &h) == 0) handle_ = h;
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
  unsigned mw = 0;
  if (!handle_ || !library().power || library().power(handle_, &mw) != 0) return -1;
  return mw / 1000.0;
}

}  // namespace ktune::nvml
