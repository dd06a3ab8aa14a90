// User templates at their edges (from a mutation audit of lib/user_template.cc): CUDA launch
// limits at their boundaries, OpenCL global sizes, argument roles, types, tolerances and
// fills, scalar kinds and values (a float scalar keeps its fraction), documents with four
// dimensions and a GlobalSize, GridDiv over sizes beyond 2^31, and more mistakes named by field;
// a parameter whose macro breaks a CUDA header is named in the compile log.
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <random>

#include "host_dtype.h"
#include "ktune/build.h"
#include "ktune/error.h"
#include "ktune/user_template.h"
#include "cli_fixtures.h"

using namespace ktune;
using Json = nlohmann::json;

namespace {
const std::string kDir = test::source_path("examples/custom_template") + "/";
std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
Json example_json() { return Json::parse(read_file(kDir + "transpose.T1.json")); }
std::shared_ptr<const KernelTemplate> make_example(const Json& doc) {
  return make_user_template(doc.dump(), read_file(kDir + "transpose.cu"),
                            read_file(kDir + "transpose_reference.cu"), "transpose.T1.json");
}
/// The example with KernelSpecification edited.
template <class F>
std::shared_ptr<const KernelTemplate> with_kernel_spec(F edit) {
  Json d = example_json();
  edit(d["KernelSpecification"], d);
  return make_example(d);
}
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
const Problem kP{"my_transpose", {{"rows", 4096}, {"cols", 3000}}, {}};
/// The example's default config: block_size_x=32, block_size_y=8, tile_size_y=1, ...
Config default_config() { return make_example(example_json())->space(kP, Device::h200()).default_config(); }
}  // namespace

TEST_CASE("user template: CUDA launch limits are checked at their boundaries", "[user_template]") {
  const Config c = default_config();
  std::string why;
  auto t = with_kernel_spec([](Json& k, Json&) { k["LocalSize"] = {{"X", "1"}, {"Y", "1"}, {"Z", "128"}}; });
  CHECK_FALSE(t->can_implement(kP, c, &why));  // block.z <= 64
  CHECK_THAT(why, Catch::Contains("1x1x128") && Catch::Contains("block limits"));
  t = with_kernel_spec([](Json& k, Json&) { k["LocalSize"] = {{"X", "64"}, {"Y", "32"}}; });
  CHECK_FALSE(t->can_implement(kP, c, &why));  // 2048 threads, each axis within its limit
  CHECK_THAT(why, Catch::Contains("64x32x1"));
  t = with_kernel_spec([](Json& k, Json&) { k["SharedMemory"] = 232448; });
  CHECK(t->can_implement(kP, c, &why));  // "at most 232448": the limit itself is allowed
  t = with_kernel_spec([](Json& k, Json&) { k["SharedMemory"] = 232449; });
  CHECK_FALSE(t->can_implement(kP, c, &why));
  t = with_kernel_spec([](Json& k, Json&) { k["SharedMemory"] = "block_size_x - 33"; });
  CHECK_FALSE(t->can_implement(kP, c, &why));
  CHECK_THAT(why, Catch::Contains("SharedMemory = -1 < 0"));
}

TEST_CASE("user template: GlobalSizeType OpenCL and the default GridDiv", "[user_template]") {
  const Config c = default_config();
  // OpenCL: GlobalSize in threads, divided by the block and rounded up.
  auto t = with_kernel_spec([](Json& k, Json&) {
    k.erase("GridDivX");
    k.erase("GridDivY");
    k["GlobalSize"] = {{"X", "cols"}, {"Y", "rows + 1"}};
    k["GlobalSizeType"] = "OpenCL";
  });
  LaunchStep s = t->launch(kP, c, Device::h200()).steps.at(0);
  CHECK(s.grid[0] == 94);   // ceil(3000 / 32)
  CHECK(s.grid[1] == 513);  // ceil(4097 / 8)
  // No GridDivX: Kernel Tuner divides ProblemSize[0] by the block's x size.
  t = with_kernel_spec([](Json& k, Json&) { k.erase("GridDivX"); });
  s = t->launch(kP, c, Device::h200()).steps.at(0);
  CHECK(s.grid[0] == 94);
}

TEST_CASE("user template: argument roles, types and tolerances", "[user_template]") {
  auto t = with_kernel_spec([](Json& k, Json& d) {
    d["KtuneExtensions"].erase("Tolerance");
    k["Arguments"].push_back({{"Name", "idx"}, {"Type", "long*"}, {"Size", "rows"}});
    k["Arguments"].push_back({{"Name", "tmp"}, {"Type", "float*"}, {"AccessType", "WriteOnly"}, {"Output", 0}, {"Size", "rows"}});
    k["Arguments"].push_back({{"Name", "res"}, {"Type", "float*"}, {"Output", 1}, {"Size", "rows"}});
    k["Arguments"].push_back({{"Name", "acc"}, {"Type", "float*"}, {"AccessType", "ReadWrite"}, {"Size", "rows"}, {"Tolerance", 1e-3}});
  });
  auto w = t->workload(kP);
  const auto b = w->buffers();
  REQUIRE(b.size() == 6);
  CHECK(b[2].dtype == DType::i64);        // long
  CHECK(b[3].role == Role::scratch);      // WriteOnly, Output 0
  CHECK(b[4].role == Role::output);       // Output 1, no AccessType
  CHECK(b[5].role == Role::inout);
  CHECK(w->tolerance(b[0]).rel_l2 == 1e-5);  // f32 default
  // Default bytes: inputs read once, outputs written once, in-place vectors both, scratch not at all.
  CHECK(w->bytes() == 2.0 * 4 * 4096 * 3000 + 8.0 * 4096 + 4.0 * 4096 + 2 * 4.0 * 4096);
  CHECK(w->tolerance(b[5]).rel_l2 == 1e-3);  // the argument's own
  std::vector<HostBuffer> host;
  for (const auto& spec : b) host.push_back(make_host_buffer(spec));
  w->fill(host, 7);
  double sum = 0;
  for (std::size_t i = 0; i < b[5].elements; ++i) sum += std::abs(read_element(host[5], i));
  CHECK(sum > 0);  // a ReadWrite vector is an input too: filled
  // The argument's Tolerance wins over KtuneExtensions.Tolerance.
  t = with_kernel_spec([](Json& k, Json&) { k["Arguments"][0]["Tolerance"] = 1e-3; });
  w = t->workload(kP);
  CHECK(w->tolerance(w->buffers()[0]).rel_l2 == 1e-3);
  // Refused by field.
  CHECK_THAT(error_of([] { with_kernel_spec([](Json& k, Json&) { k["Arguments"][0]["Tolerance"] = -1; }); }),
             Catch::Contains("Arguments[0].Tolerance"));
  CHECK_THAT(error_of([] {
               with_kernel_spec([](Json& k, Json&) {
                 k["Arguments"].push_back({{"Name", "h"}, {"Type", "half"}, {"MemoryType", "Scalar"}, {"FillValue", 1}});
               });
             }),
             Catch::Contains("Arguments[4].Type"));
}

TEST_CASE("user template: values of a problem at their boundaries", "[user_template]") {
  const Config c = default_config();
  const Device h200 = Device::h200();
  // 2^31 does not fit an int; 2^31 - 1 does.
  auto t = with_kernel_spec([](Json& k, Json&) { k["Arguments"][2]["Value"] = "rows + 2147479552"; });
  CHECK_THROWS_WITH(t->launch(kP, c, h200), Catch::Contains("32-bit"));
  t = with_kernel_spec([](Json& k, Json&) { k["Arguments"][2]["Value"] = "rows + 2147479551"; });
  CHECK(t->launch(kP, c, h200).steps.at(0).args.at(2).i == 2147483647);
  // An integer scalar's FillValue must be an integer.
  t = with_kernel_spec([](Json& k, Json&) {
    k["Arguments"][2].erase("Value");
    k["Arguments"][2]["FillValue"] = 2.5;
  });
  CHECK_THROWS_WITH(t->launch(kP, c, h200), Catch::Contains("FillValue"));
  // An integer Value that divides by zero is refused by name, never passed as 0.
  for (const char* division : {"rows // (cols - 3000)", "rows % (cols - 3000)", "rows / (cols - 3000)"}) {
    INFO(division);
    t = with_kernel_spec([&](Json& k, Json&) { k["Arguments"][2]["Value"] = division; });
    CHECK_THROWS_WITH(t->launch(kP, c, h200), Catch::Contains("division by zero") &&
                                                  Catch::Contains(division));
  }
  // A 64-bit scalar past 64 bits is refused with its value, never clamped to 2^63 - 1.
  for (const char* huge : {"rows ** 6", "2 ** 63", "1e30", "-(2 ** 64)"}) {
    INFO(huge);
    t = with_kernel_spec([&](Json& k, Json&) {
      k["Arguments"][2]["Type"] = "int64_t";
      k["Arguments"][2]["Value"] = huge;
    });
    CHECK_THROWS_WITH(t->launch(kP, c, h200), Catch::Contains("beyond a 64-bit integer") && Catch::Contains(huge));
  }
  t = with_kernel_spec([](Json& k, Json&) {
    k["Arguments"][2]["Type"] = "int64_t";
    k["Arguments"][2]["Value"] = "2 ** 62 + (2 ** 62 - 1)";  // 2^63 - 1: the largest that fits
  });
  CHECK(t->launch(kP, c, h200).steps.at(0).args.at(2).i == 9223372036854775807LL);
  // A root of a negative number is not a division by zero.
  t = with_kernel_spec([](Json& k, Json&) { k["Arguments"][2]["Value"] = "(-8) ** 0.5"; });
  CHECK_THROWS_WITH(t->launch(kP, c, h200), Catch::Contains("not a number"));
  // A half vector's constant fill must be a half.
  CHECK_THAT(error_of([] {
               with_kernel_spec([](Json& k, Json&) {
                 k["Arguments"][1]["Type"] = "half";
                 k["Arguments"][1]["FillType"] = "Constant";
                 k["Arguments"][1]["FillValue"] = 70000;
               });
             }),
             Catch::Contains("Arguments[1].FillValue") && Catch::Contains("range of half"));
  // A vector of no elements is refused for the problem.
  t = with_kernel_spec([](Json& k, Json&) { k["Arguments"][1]["Size"] = "rows - 4096"; });
  CHECK_THROWS_WITH(t->workload(kP), Catch::Contains("in") && Catch::Contains("0 elements"));
}

// Documented: scalars' Value is "an expression over the problem dimensions, or a number".
TEST_CASE("user template: a float scalar's Value keeps its fraction", "[user_template]") {
  const Config c = default_config();
  auto alpha = [&](Json value) {
    auto t = with_kernel_spec([&](Json& k, Json&) {
      k["Arguments"].push_back({{"Name", "alpha"}, {"Type", "float"}, {"MemoryType", "Scalar"}, {"Value", value}});
    });
    return t->launch(kP, c, Device::h200()).steps.at(0).args.at(4).f;
  };
  CHECK(alpha("0.5") == 0.5);                      // was 0
  CHECK(alpha("rows / 3") == Approx(4096.0 / 3));  // was 1365
  CHECK(alpha(0.5) == 0.5);                        // was refused: "expected an integer ..."
  CHECK(alpha(2) == 2.0);
  CHECK_THROWS_WITH(alpha("rows / (cols - 3000)"), Catch::Contains("alpha") &&
                                                       Catch::Contains("division by zero"));
}

TEST_CASE("user template: four dimensions with a GlobalSize need no ProblemSize", "[user_template]") {
  Json d = example_json();
  auto& k = d["KernelSpecification"];
  k.erase("ProblemSize");
  k.erase("GridDivX");
  k.erase("GridDivY");
  k["GlobalSize"] = {{"X", "(cols + block_size_x - 1) // block_size_x"}, {"Y", "rows"}};
  d["KtuneExtensions"]["Dimensions"].push_back({{"Name", "n"}, {"Default", 1}});
  d["KtuneExtensions"]["Dimensions"].push_back({{"Name", "c"}, {"Default", 1}});
  CHECK(error_of([&] { make_example(d); }) == "");  // was "ProblemSize: 4 entries"
  // With GridDiv the grid divides ProblemSize, which four dimensions cannot be: named.
  Json grid_div = example_json();
  grid_div["KernelSpecification"].erase("ProblemSize");
  grid_div["KtuneExtensions"]["Dimensions"].push_back({{"Name", "n"}, {"Default", 1}});
  grid_div["KtuneExtensions"]["Dimensions"].push_back({{"Name", "c"}, {"Default", 1}});
  CHECK_THAT(error_of([&] { make_example(grid_div); }),
             Catch::Contains("ProblemSize: absent") && Catch::Contains("4 dimensions"));
}

TEST_CASE("user template: GridDiv over a size beyond 2^31 gives the exact grid", "[user_template]") {
  auto t = with_kernel_spec([](Json& k, Json&) {
    k["ProblemSize"] = {"rows * cols", "1"};
    k["GridDivX"] = {"1048576", "1048576"};  // 2^40: the whole size in one block's share
    k["GridDivY"] = {"1"};
  });
  const Problem big{"my_transpose", {{"rows", 1 << 20}, {"cols", 1 << 20}}, {}};
  const Config c = t->space(big, Device::h200()).default_config();
  std::string why;
  REQUIRE(t->can_implement(big, c, &why));
  CHECK(t->launch(big, c, Device::h200()).steps.at(0).grid[0] == 1);  // was 513
  auto grid_x = [&](Json divisors) {
    auto tmpl = with_kernel_spec([&](Json& k, Json&) {
      k["ProblemSize"] = {"rows * cols", "1"};
      k["GridDivX"] = divisors;
      k["GridDivY"] = {"1"};
    });
    if (!tmpl->can_implement(big, c, &why)) return std::int64_t{-1};
    return static_cast<std::int64_t>(tmpl->launch(big, c, Device::h200()).steps.at(0).grid[0]);
  };
  CHECK(grid_x(Json{"1024", "3"}) == 357913942);  // ceil(2^40 / 3072)
  CHECK(grid_x(Json{"256"}) == -1);               // 2^32 blocks
  CHECK_THAT(why, Catch::Contains("exceeds the CUDA grid limits"));
}

TEST_CASE("user template: the thread-limit constraint follows the device", "[user_template]") {
  auto t = make_example(example_json());
  Device small = Device::h200();
  small.max_threads_per_block = 512;
  const SearchSpace space = t->space(kP, small);
  CHECK(space.count_valid() < t->space(kP, Device::h200()).count_valid());
  std::mt19937_64 rng(1);
  for (int i = 0; i < 200; ++i) {
    const Config c = space.random(rng);
    REQUIRE(space.valid(c));  // random() draws valid configs
    CHECK(c["block_size_x"] * c["block_size_y"] <= 512);
  }
}

TEST_CASE("user template: more document mistakes are named by field", "[user_template]") {
  auto doc_error = [](auto edit) {
    Json d = example_json();
    edit(d);
    return error_of([&] { make_example(d); });
  };
  CHECK_THAT(doc_error([](Json& d) { d["KtuneExtensions"]["Dimensions"][0]["Default"] = 0; }),
             Catch::Contains("Dimensions[0].Default"));
  CHECK_THAT(doc_error([](Json& d) { d["KtuneExtensions"]["Dimensions"][0]["Name"] = "block_size_x"; }),
             Catch::Contains("name of a tuning parameter"));
  CHECK_THAT(doc_error([](Json& d) { d["KtuneExtensions"]["Tolerance"] = -1; }),
             Catch::Contains("KtuneExtensions.Tolerance"));
  CHECK_THAT(doc_error([](Json& d) { d["General"]["BenchmarkName"] = "my-transpose"; }),
             Catch::Contains("General.BenchmarkName"));
  CHECK_THAT(doc_error([](Json& d) { d["KernelSpecification"]["Language"] = "OpenCL"; }),
             Catch::Contains("KernelSpecification.Language"));
  CHECK_THAT(doc_error([](Json& d) { d["KernelSpecification"]["ProblemSize"] = {"cols + ProblemSize[1]", "rows"}; }),
             Catch::Contains("ProblemSize[0]"));
  // A kernel named only in a comment is not declared.
  CHECK_THAT(error_of([] {
               make_user_template(example_json().dump(),
                                  "/* transpose(float* out) */ extern \"C\" __global__ void other() {}",
                                  read_file(kDir + "transpose_reference.cu"), "transpose.T1.json");
             }),
             Catch::Contains("no kernel \"transpose\""));
}

TEST_CASE("user template: recorded reference file lists", "[user_template]") {
  const std::string path = kDir + "transpose_recorded.T1.json";
  const Json doc = Json::parse(read_file(path));
  auto recorded_error = [&](const Json& edited) {
    return error_of([&] { make_user_template(edited.dump(), read_file(kDir + "transpose.cu"), "", path); });
  };
  Json no_output = doc;
  no_output["KtuneExtensions"]["Reference"]["OutputFiles"] = Json::object();
  CHECK_THAT(recorded_error(no_output), Catch::Contains("no file for output out"));
  Json output_as_input = doc;
  output_as_input["KtuneExtensions"]["Reference"]["InputFiles"]["out"] = "transpose_out.bin";
  CHECK_THAT(recorded_error(output_as_input), Catch::Contains("InputFiles.out") && Catch::Contains("not read by the kernel"));
}

TEST_CASE("user template: scalar kinds, reference default block, integer fills", "[user_template]") {
  const Config c = default_config();
  auto t = with_kernel_spec([](Json& k, Json& d) {
    k["Arguments"].push_back({{"Name", "n64"}, {"Type", "int64_t"}, {"MemoryType", "Scalar"}, {"Value", "rows * 1048576 * 1024"}});
    k["Arguments"].push_back({{"Name", "x"}, {"Type", "double"}, {"MemoryType", "Scalar"}, {"FillValue", 0.1}});
    k["Arguments"].push_back({{"Name", "ids"}, {"Type", "int*"}, {"Size", "rows"}, {"FillValue", 100}});
    d["KtuneExtensions"]["Reference"].erase("LocalSize");
  });
  const LaunchStep s = t->launch(kP, c, Device::h200()).steps.at(0);
  CHECK(s.args.at(4).kind == KernelArg::Kind::i64);
  CHECK(s.args.at(4).i == 4096ll << 30);
  CHECK(s.args.at(5).kind == KernelArg::Kind::f64);
  CHECK(s.args.at(5).f == 0.1);
  auto w = t->workload(kP);
  CHECK(w->device_reference()->plan.steps.at(0).block[0] == 256);  // the documented default
  std::vector<HostBuffer> host;
  for (const auto& spec : w->buffers()) host.push_back(make_host_buffer(spec));
  w->fill(host, 3);
  double lo = 1e300, hi = -1e300;
  for (std::size_t i = 0; i < host[2].spec.elements; ++i) {
    lo = std::min(lo, read_element(host[2], i));
    hi = std::max(hi, read_element(host[2], i));
  }
  CHECK(lo >= 0);
  CHECK(hi <= 100);
  CHECK(hi > 50);  // integers uniform in [0, FillValue]
}

TEST_CASE("user template: names that would become macros of the language are refused",
          "[user_template]") {
  // Tuning parameters and dimensions are defined for the kernel (-DNAME=value): `float` or
  // `__CUDA_ARCH__` would rewrite CUDA itself and fail deep inside NVRTC's own headers.
  for (const char* name : {"float", "threadIdx", "__CUDA_ARCH__", "_Tile"}) {
    INFO(name);
    Json d = example_json();
    d["ConfigurationSpace"]["TuningParameters"].push_back({{"Name", name}, {"Values", "[1, 2]"}});
    const std::string e = error_of([&] { make_example(d); });
    CHECK_THAT(e, Catch::Contains(std::string("parameter \"") + name + "\"") &&
                      Catch::Contains("-D" + std::string(name)));
  }
  Json d = example_json();
  d["KtuneExtensions"]["Dimensions"][0]["Name"] = "blockDim";
  CHECK_THAT(error_of([&] { make_example(d); }),
             Catch::Contains("Dimensions[0].Name") && Catch::Contains("\"blockDim\""));
  // Ordinary names, a leading underscore with a small letter included, stay usable.
  Json fine = example_json();
  fine["ConfigurationSpace"]["TuningParameters"].push_back({{"Name", "_unroll"}, {"Values", "[1, 2]"}});
  CHECK(error_of([&] { make_example(fine); }).empty());
}

TEST_CASE("user template: a parameter named like a CUDA function is named in the compile log",
          "[user_template]") {
  // printf is no keyword or reserved name, but -Dprintf=1 rewrites CUDA's declaration of it:
  // NVRTC's error points into its own header, so the log says which parameter did it.
  Json d = example_json();
  d["ConfigurationSpace"]["TuningParameters"].push_back({{"Name", "printf"}, {"Values", "[1, 2]"}});
  const auto tmpl = make_example(d);
  const Problem problem = tmpl->example_problem();
  const Device device = Device::h200();
  Builder builder(BuilderOptions{1, "", {}});
  const BuildResult bad = builder.build(*tmpl, problem, tmpl->space(problem, device).default_config(), device);
  INFO(bad.log);
  CHECK_FALSE(bad.ok);
  CHECK_THAT(bad.log, Catch::Contains("parameter 'printf' is passed as the macro -Dprintf="));
  // An error of the kernel's own file gets no such note, though it quotes a parameter.
  const auto broken = make_user_template(example_json().dump(),
                                         read_file(kDir + "transpose.cu") + "\nint oops = block_size_x +;\n",
                                         read_file(kDir + "transpose_reference.cu"), "transpose.T1.json");
  const BuildResult own = builder.build(*broken, problem, broken->space(problem, device).default_config(), device);
  INFO(own.log);
  CHECK_FALSE(own.ok);
  CHECK_THAT(own.log, Catch::Contains("block_size_x"));
  CHECK_THAT(own.log, !Catch::Contains("is passed as the macro"));
}
