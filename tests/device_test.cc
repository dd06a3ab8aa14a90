// Device descriptions: the no-driver answer, offline targets and the H200 description; on a
// GPU machine, the queried device's fields.
#include <catch2/catch.hpp>

#include "gpu_guard.h"
#include "ktune/device.h"
#include "ktune/error.h"
#include "ktune/log.h"

using ktune::Device;

TEST_CASE("cuda_unavailable_reason says 'no CUDA device' exactly when there is none", "[device]") {
  auto why = ktune::cuda_unavailable_reason();
  if (ktune::cuda_device_count() == 0) {
    REQUIRE(why.has_value());
    CHECK(why->find("no CUDA device (") == 0);
    CHECK(why->back() == ')');
    CHECK_THROWS_MATCHES(ktune::query_device(0), ktune::Error,
                         Catch::Predicate<ktune::Error>([](const ktune::Error& e) {
                           return e.code() == ktune::ErrorCode::no_device &&
                                  std::string(e.what()).find("no CUDA device") !=
                                      std::string::npos;
                         }));
  } else {
    CHECK_FALSE(why.has_value());
  }
}

TEST_CASE("Device::h200 describes the H200 for offline sm_90 builds", "[device]") {
  Device d = Device::h200();
  CHECK(d.arch() == "sm_90");
  CHECK(d.compute_capability() == "9.0");
  CHECK(d.key() == "NVIDIA H200|sm_90|132");
  CHECK(d.sm_count == 132);
  CHECK(d.l2_bytes == 50 * 1024 * 1024);
  CHECK(d.smem_per_block == 48 * 1024);
  CHECK(d.smem_per_block_optin == 227 * 1024);
  CHECK(d.smem_per_sm == 228 * 1024);
  CHECK(d.regs_per_block == 65536);
  CHECK(d.max_threads_per_block == 1024);
  CHECK(d.max_threads_per_sm == 2048);
  CHECK(d.global_memory > std::int64_t{140} * 1000 * 1000 * 1000);
  CHECK(d.ordinal == -1);
  CHECK(d.driver_version == 0);
}

TEST_CASE("Device::offline knows sm_80 to sm_90a and rejects others by name", "[device]") {
  for (const char* arch : {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"}) {
    Device d = Device::offline(arch);
    INFO(arch);
    CHECK(d.arch() == arch);
    CHECK(d.sm_count > 0);
    CHECK(d.smem_per_block_optin > d.smem_per_block);
    CHECK(d.smem_per_sm >= d.smem_per_block_optin);
    CHECK(d.max_threads_per_sm >= d.max_threads_per_block);
    CHECK(d.key().find(arch) != std::string::npos);
  }
  CHECK(Device::offline("sm_90a").compute_capability() == "9.0");
  // The key is the hardware's: what a record of this device stores and queries find it by.
  const Device hopper_a = Device::offline("sm_90a");
  CHECK(hopper_a.key() == "offline sm_90a|sm_90|132");
  CHECK(hopper_a.key() == device_key_of(hopper_a));
  CHECK(Device::offline("sm_86").cc_minor == 6);
  CHECK_THROWS_MATCHES(Device::offline("sm_75"), ktune::Error,
                       Catch::Predicate<ktune::Error>([](const ktune::Error& e) {
                         return e.code() == ktune::ErrorCode::invalid_argument &&
                                std::string(e.what()).find("sm_75") != std::string::npos;
                       }));
}

TEST_CASE("Device::from_key reads what key() writes and names a malformed key", "[device]") {
  const Device h = Device::h200();
  const Device back = Device::from_key(h.key());
  CHECK(back.name == h.name);
  CHECK(back.cc_major == 9);
  CHECK(back.cc_minor == 0);
  CHECK(back.sm_count == h.sm_count);
  CHECK(back.key() == h.key());
  CHECK(Device::from_key("NVIDIA A100|sm_80|0").sm_count == 0);  // imported: SM count unknown
  // What `ktune import` of a Kernel Tuner cache without --arch records: arch and count unknown.
  const Device imported = Device::from_key("Test GPU|sm_00|0");
  CHECK(imported.cc_major == 0);
  CHECK(imported.key() == "Test GPU|sm_00|0");
  const Device blackwell = Device::from_key("NVIDIA B200|sm_100|148");  // compute capability 10.0
  CHECK(blackwell.cc_major == 10);
  CHECK(blackwell.cc_minor == 0);
  CHECK(blackwell.key() == "NVIDIA B200|sm_100|148");
  for (const char* bad : {"", "H200", "H200|sm_90", "H200|90|132", "H200|sm_9|132", "|sm_90|132",
                          "H200|sm_90|-1", "H200|sm_90|13x", "H200|sm_xx|132", "H200|sm_ 90| 132",
                          "H200|sm_+90|+132", "H200|sm_1000|132", "H200|sm_90|"})
    CHECK_THROWS_WITH(Device::from_key(bad), Catch::Contains(std::string("device key \"") + bad + "\""));
}

TEST_CASE("query_device reads the GPU's limits", "[device][gpu]") {
  KTUNE_REQUIRE_GPU();
  REQUIRE(ktune::cuda_device_count() >= 1);
  Device d = ktune::query_device(0);
  CHECK_FALSE(d.name.empty());
  CHECK(d.cc_major >= 7);
  CHECK(d.sm_count > 0);
  CHECK(d.global_memory > 0);
  CHECK(d.l2_bytes > 0);
  CHECK(d.smem_per_block == 48 * 1024);
  CHECK(d.smem_per_block_optin >= d.smem_per_block);
  CHECK(d.smem_per_sm >= d.smem_per_block_optin);
  CHECK(d.max_threads_per_block == 1024);
  CHECK(d.max_threads_per_sm >= 1024);
  CHECK(d.warp_size == 32);
  CHECK(d.driver_version > 0);
  CHECK(d.runtime_version >= 13000);
  CHECK(d.ordinal == 0);
  CHECK(d.arch_suffix.empty());
  WARN("device 0: " << d.key() << ", L2 " << d.l2_bytes << " B, driver " << d.driver_version);
  CHECK_THROWS_AS(ktune::query_device(ktune::cuda_device_count()), ktune::Error);
}
