// Optional NVML readings (SM clock, temperature, board power) for the trial record and the
// benchmarks. libnvidia-ml.so.1 is loaded at run time with dlopen, so nothing links against
// it; without it every reading is -1.
#pragma once

#include <optional>
#include <string>

namespace ktune::nvml {

/// NVML's nvmlValue_t: one value of a field, its type given beside it.
union FieldValueUnion {
  double d;
  unsigned int ui;
  unsigned long ul;
  unsigned long long ull;
  long long sll;
  int si;
  unsigned short us;
};

/// NVML's nvmlFieldValue_t (field queries through nvmlDeviceGetFieldValues).
struct FieldValue {
  unsigned int field_id = 0;   ///< NVML_FI_* id asked for
  unsigned int scope_id = 0;   ///< sub-unit (0: the device)
  long long timestamp = 0;     ///< microseconds since 1970 when the value was read
  long long latency_us = 0;    ///< how old the value was when read
  int value_type = 0;          ///< nvmlValueType_t: which member of `value` holds it
  int nvml_return = 0;         ///< the query's nvmlReturn_t (0: success)
  FieldValueUnion value{};     ///< the value
};

/// The number a field query returned, as a double; nullopt when the query failed or the
/// value type is not one NVML documents (nvmlValueType_t 0-6).
std::optional<double> field_number(const FieldValue& field);

/// One GPU as NVML sees it, found by PCI bus id (as cudaDeviceGetPCIBusId writes it).
class GpuSensor {
 public:
  /// Looks the device up; an unusable NVML gives a sensor that reads -1.
  explicit GpuSensor(const std::string& pci_bus_id);
  /// True when NVML was loaded and the device found.
  bool available() const { return handle_ != nullptr; }
  /// Current SM clock in MHz, -1 when unknown.
  int sm_clock_mhz() const;
  /// Current GPU temperature in degrees C, -1 when unknown.
  int temperature_c() const;
  /// Board power draw in watts, -1 when unknown: the instantaneous reading where the driver
  /// has one (NVML's POWER_INSTANT field), else nvmlDeviceGetPowerUsage, which on Ampere and
  /// later GPUs is the average of the last second and so lags any loop shorter than that.
  double power_w() const;
  /// Whether power_w() reads the instantaneous field (false: the one-second average, or none).
  bool power_is_instant() const;
  /// How long after a change of load power_w() may still show the earlier load (ms): the
  /// one-second average needs a second; the instantaneous field is refreshed far less often
  /// than it is asked (an H100 read 125 W through most 10 ms GEMM loops and 730-820 W in later
  /// ones), so 200 ms.
  double power_window_ms() const { return instant_ ? 200.0 : 1000.0; }

 private:
  void* handle_ = nullptr;
  bool instant_ = false;  // the driver answers the instantaneous power field
};

}  // namespace ktune::nvml
