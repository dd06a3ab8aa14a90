// Optional NVML readings (SM clock, temperature, board power) for the trial record and the
// benchmarks. libnvidia-ml.so.1 is loaded at run time with dlopen, so nothing links against
// it; without it every reading is -1.
#pragma once

#include <string>

namespace ktune::nvml {

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
  /// Current board power draw in watts, -1 when unknown.
  double power_w() const;

 private:
  void* handle_ = nullptr;
};

}  // namespace ktune::nvml
