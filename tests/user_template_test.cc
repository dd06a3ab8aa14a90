// User templates from a T1 document plus a kernel file (lib/user_template.cc), checked on the
// shipped example examples/custom_template (a tunable transpose): the space, the launch
// geometry from LocalSize / GridDiv, buffers, fills and the GPU reference plan, errors that
// name the offending field, the announcement to worker processes, and NVRTC compiles of
// the kernel and its reference for sm_90 (no GPU needed).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "host_dtype.h"
#include "ktune/build.h"
#include "ktune/error.h"
#include "ktune/user_template.h"
#include "cli_fixtures.h"
#include "device_reference.h"
#include "nvrtc_compile.h"
#include "worker_process.h"
#include "skip.h"

using namespace ktune;
using Json = nlohmann::json;

namespace {

/// What `argv` (a child started like ktune-worker, with ktune's child environment) writes
/// to its stdout before it exits.
std::string child_output(const std::vector<std::string>& argv) {
  worker::ChildProcess child(argv);
  std::string out;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(child.fd(), buffer, sizeof buffer);
    if (n <= 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  child.reap(5000);
  return out;
}

/// A file of examples/custom_template.
std::string example_file(const std::string& name) {
  return test::source_path("examples/custom_template/" + name);
}

Json example_json() { return Json::parse(test::read_text(example_file("transpose.T1.json"))); }

/// The example template built from (possibly edited) JSON and the shipped sources.
std::shared_ptr<const KernelTemplate> make_example(const Json& doc) {
  return make_user_template(doc.dump(), test::read_text(example_file("transpose.cu")),
                            test::read_text(example_file("transpose_reference.cu")), "transpose.T1.json");
}

/// The example document with the shipped kernel plus `appended` source text.
std::shared_ptr<const KernelTemplate> make_example_kernel(const std::string& appended) {
  return make_user_template(example_json().dump(),
                            test::read_text(example_file("transpose.cu")) + "\n" + appended + "\n",
                            test::read_text(example_file("transpose_reference.cu")), "transpose.T1.json");
}

/// The default config of `tmpl` built with NVRTC for the H200, on a 256 x 256 problem.
BuildResult build_default(const KernelTemplate& tmpl) {
  const Problem p = make_problem(tmpl, "256x256");
  Builder builder;
  return builder.build(tmpl, p, tmpl.space(p, Device::h200()).default_config(), Device::h200());
}

/// The message of the Error the edited document raises ("" when none).
std::string error_of(const Json& doc) {
  try {
    make_example(doc);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("user template: the transpose example reads as a template with its space and dimensions",
          "[user_template]") {
  auto tmpl = load_user_template({example_file("transpose.T1.json"), ""});
  CHECK(tmpl->name() == "my_transpose");
  CHECK(tmpl->op() == "my_transpose");
  CHECK(tmpl->dim_names() == std::vector<std::string>{"rows", "cols"});
  CHECK(tmpl->source().find("extern \"C\" __global__") != std::string::npos);
  CHECK(tmpl->example_problem().key() == "my_transpose|rows=4096,cols=4096|");
  const Problem p = make_problem(*tmpl, "1000x3000");
  const SearchSpace space = tmpl->space(p, Device::h200());
  CHECK(space.size() == 3 * 5 * 3 * 2 * 2);
  // bx*by >= 32 leaves 14 block shapes; shared/padding leaves 3 of 4 pairs.
  CHECK(space.count_valid() == 14 * 3 * 3);
  CHECK(space.default_config().str() ==
        "block_size_x=32,block_size_y=8,tile_size_y=1,use_shared=0,use_padding=0");
  CHECK(tmpl->problem_defines(p) == std::vector<std::string>{"-std=c++17"});
}

TEST_CASE("user template: grid and block follow LocalSize and GridDiv over ProblemSize",
          "[user_template]") {
  auto tmpl = make_example(example_json());
  const Problem p = make_problem(*tmpl, "1000x3000");  // rows x cols
  const SearchSpace space = tmpl->space(p, Device::h200());
  const Config c = space.parse("block_size_x=32,block_size_y=8,tile_size_y=4,use_shared=1,use_padding=1");
  REQUIRE(tmpl->can_implement(p, c));
  const LaunchPlan plan = tmpl->launch(p, c, Device::h200());
  REQUIRE(plan.steps.size() == 1);
  const LaunchStep& s = plan.steps[0];
  CHECK(s.entry == "transpose");
  CHECK(s.grid[0] == 94);  // ceil(3000 / 32)
  CHECK(s.grid[1] == 32);  // ceil(1000 / (8 * 4))
  CHECK(s.grid[2] == 1);
  CHECK(s.block[0] == 32);
  CHECK(s.block[1] == 8);
  CHECK(s.block[2] == 1);
  REQUIRE(s.args.size() == 4);
  CHECK(s.args[0].kind == KernelArg::Kind::buffer);
  CHECK(s.args[0].buffer == 0);
  CHECK(s.args[1].buffer == 1);
  CHECK(s.args[2].kind == KernelArg::Kind::i32);
  CHECK(s.args[2].i == 1000);
  CHECK(s.args[3].i == 3000);

  // 100000 rows with one row per block need grid.y > 65535: rejected before compiling.
  const Problem tall = make_problem(*tmpl, "100000x64");
  std::string why;
  CHECK_FALSE(tmpl->can_implement(
      tall, space.parse("block_size_x=32,block_size_y=1,tile_size_y=1,use_shared=0,use_padding=0"), &why));
  CHECK(why.find("grid") != std::string::npos);
  CHECK_THROWS_AS(tmpl->launch(tall, space.parse("block_size_x=32,block_size_y=1,tile_size_y=1,"
                                                 "use_shared=0,use_padding=0"),
                               Device::h200()),
                  Error);
}

TEST_CASE("user template: buffers, random inputs and the GPU reference plan", "[user_template]") {
  auto tmpl = make_example(example_json());
  const Problem p = make_problem(*tmpl, "1000x3000");
  auto w = tmpl->workload(p);
  const auto specs = w->buffers();
  REQUIRE(specs.size() == 2);
  CHECK(specs[0].name == "out");
  CHECK(specs[0].role == Role::output);
  CHECK(specs[0].elements == 3000000);
  CHECK(specs[1].name == "in");
  CHECK(specs[1].role == Role::input);
  CHECK(w->bytes() == 2.0 * 4 * 3000000);
  CHECK(w->tolerance(specs[0]).rel_l2 == 0);  // KtuneExtensions.Tolerance

  std::vector<HostBuffer> a, b;
  for (const auto& spec : specs) {
    a.push_back(make_host_buffer(spec));
    b.push_back(make_host_buffer(spec));
  }
  w->fill(a, 7);
  w->fill(b, 7);
  CHECK(a[1].bytes == b[1].bytes);  // deterministic per seed
  std::size_t zeros = 0;
  double largest = 0;
  for (std::size_t i = 0; i < specs[1].elements; ++i) {
    const double v = read_element(a[1], i);
    zeros += v == 0;
    largest = std::max(largest, std::abs(v));
  }
  CHECK(zeros == 0);
  CHECK(largest <= 1.0);  // FillValue 1.0
  w->fill(b, 8);
  CHECK(a[1].bytes != b[1].bytes);

  auto ref = w->device_reference();
  REQUIRE(ref);
  CHECK(ref->source.find("transpose_reference") != std::string::npos);
  REQUIRE(ref->plan.steps.size() == 1);
  CHECK(ref->plan.steps[0].entry == "transpose_reference");
  CHECK(ref->plan.steps[0].grid[0] == 4096);
  CHECK(ref->plan.steps[0].block[0] == 256);
  CHECK(ref->plan.steps[0].args.size() == 4);
  CHECK(ref->plan.steps[0].args[3].i == 3000);
  CHECK_THROWS_AS(w->reference(a), Error);  // verified on the GPU only
}

TEST_CASE("user template: a bad specification names the field", "[user_template]") {
  struct Case {
    const char* what;
    std::function<void(Json&)> edit;
    const char* field;
  };
  const std::vector<Case> cases = {
      {"missing kernel name", [](Json& d) { d["KernelSpecification"].erase("KernelName"); },
       "KernelSpecification.KernelName: missing"},
      {"kernel not in the source", [](Json& d) { d["KernelSpecification"]["KernelName"] = "transpose_v2"; },
       "KernelSpecification.KernelName: the kernel source has no kernel"},
      {"unknown type", [](Json& d) { d["KernelSpecification"]["Arguments"][1]["Type"] = "float3*"; },
       "KernelSpecification.Arguments[1].Type"},
      {"size uses a tunable",
       [](Json& d) { d["KernelSpecification"]["Arguments"][0]["Size"] = "rows * block_size_x"; },
       "KernelSpecification.Arguments[0].Size: \"rows * block_size_x\" uses a tuning parameter"},
      {"size names nothing", [](Json& d) { d["KernelSpecification"]["Arguments"][0]["Size"] = "rows * depth"; },
       "KernelSpecification.Arguments[0].Size"},
      {"bad block expression", [](Json& d) { d["KernelSpecification"]["LocalSize"]["X"] = "block_size_x +"; },
       "KernelSpecification.LocalSize.X"},
      {"bad grid divisor", [](Json& d) { d["KernelSpecification"]["GridDivY"][1] = "tile_size_z"; },
       "KernelSpecification.GridDivY[1]"},
      {"constant memory", [](Json& d) { d["KernelSpecification"]["Arguments"][1]["MemType"] = "Constant"; },
       "KernelSpecification.Arguments[1].MemType"},
      {"bad access type", [](Json& d) { d["KernelSpecification"]["Arguments"][0]["AccessType"] = "Write"; },
       "KernelSpecification.Arguments[0].AccessType"},
      {"scalar without value", [](Json& d) { d["KernelSpecification"]["Arguments"][2].erase("Value"); },
       "KernelSpecification.Arguments[2]: a Scalar needs"},
      {"compiler option", [](Json& d) { d["KernelSpecification"]["CompilerOptions"] = {"-I/etc"}; },
       "KernelSpecification.CompilerOptions[0]"},
      {"no reference", [](Json& d) { d["KtuneExtensions"].erase("Reference"); },
       "KtuneExtensions.Reference: missing"},
      {"reference uses a tunable",
       [](Json& d) { d["KtuneExtensions"]["Reference"]["LocalSize"]["X"] = "block_size_x"; },
       "KtuneExtensions.Reference.LocalSize.X"},
      {"dimension without default", [](Json& d) { d["KtuneExtensions"]["Dimensions"][1].erase("Default"); },
       "KtuneExtensions.Dimensions[1].Default: missing"},
      {"no output", [](Json& d) { d["KernelSpecification"]["Arguments"][0]["AccessType"] = "ReadOnly"; },
       "KernelSpecification.Arguments: no vector is written"},
      {"bad condition", [](Json& d) { d["ConfigurationSpace"]["Conditions"][0]["Expression"] = "block_size_x >"; },
       "ConfigurationSpace.Conditions[0].Expression"},
  };
  for (const auto& c : cases) {
    Json doc = example_json();
    c.edit(doc);
    const std::string message = error_of(doc);
    INFO(c.what << ": " << message);
    CHECK(message.rfind("transpose.T1.json: ", 0) == 0);
    CHECK(message.find(c.field) != std::string::npos);
  }
  CHECK_THROWS_AS(make_user_template("{not json", "", "", "x.json"), Error);
}

TEST_CASE("user template: plain T1 documents of the benchmark hub are read or refused by field",
          "[user_template]") {
  const std::string path = std::string(KTUNE_DATASETS_DIR) + "/convolution_milo.T1.json";
  if (!std::filesystem::exists(path)) {
    KTUNE_SKIP("no dataset at " << path);
  }
  Json doc = Json::parse(test::read_text(path));
  // Kernel Tuner's max(param) sizes and constant memory are outside what ktune runs.
  try {
    make_user_template(doc.dump(), "extern \"C\" __global__ void convolution_kernel() {}", "", path);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("KernelSpecification.Arguments[1].Size") != std::string::npos);
  }
  // With those arguments replaced, ProblemSize becomes the dimensions P0, P1 and the grid
  // divides them by GridDivX / GridDivY.
  doc["KernelSpecification"]["Arguments"][1]["Size"] = "(ProblemSize[0]+14) * (ProblemSize[1]+14)";
  doc["KernelSpecification"]["Arguments"][2].erase("MemType");
  doc["KernelSpecification"]["Arguments"][2]["Size"] = "225";
  doc["KtuneExtensions"] = {{"Reference", {{"KernelFile", "ref.cu"}, {"KernelName", "ref"}}}};
  auto tmpl = make_user_template(doc.dump(), "extern \"C\" __global__ void convolution_kernel() {}",
                                 "extern \"C\" __global__ void ref() {}", path);
  CHECK(tmpl->name() == "convolution_milo");
  CHECK(tmpl->dim_names() == std::vector<std::string>{"P0", "P1"});
  const Problem p = tmpl->example_problem();
  const SearchSpace space = tmpl->space(p, Device::h200());
  const Config c = space.parse("block_size_x=32,block_size_y=4,tile_size_x=2,tile_size_y=3,read_only=0,"
                               "use_padding=0,use_shmem=1,use_cmem=1,filter_height=15,filter_width=15");
  const LaunchStep s = tmpl->launch(p, c, Device::h200()).steps.at(0);
  CHECK(s.grid[0] == 64);   // 4096 / (32 * 2)
  CHECK(s.grid[1] == 342);  // ceil(4096 / (4 * 3))
  CHECK(s.block[0] == 32);
  CHECK(s.block[1] == 4);
  CHECK(tmpl->workload(p)->buffers().at(1).elements == 4110u * 4110u);
}

TEST_CASE("user template: templates registered from several threads at once are all announced",
          "[user_template]") {
  test::TempDir dir;
  std::filesystem::copy_file(example_file("transpose.cu"), dir.file("transpose.cu"));
  std::filesystem::copy_file(example_file("transpose_reference.cu"), dir.file("transpose_reference.cu"));
  constexpr int kThreads = 8;
  for (int i = 0; i < kThreads; ++i) {
    Json doc = example_json();
    doc["General"]["BenchmarkName"] = "threaded_transpose_" + std::to_string(i);
    std::ofstream(dir.file("t" + std::to_string(i) + ".T1.json")) << doc.dump();
  }
  std::vector<std::thread> threads;
  std::vector<std::string> errors(kThreads);
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      try {
        register_user_template({dir.file("t" + std::to_string(i) + ".T1.json"), ""});
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& e : errors) CHECK(e.empty());
  const Json list = Json::parse(child_output({"/bin/sh", "-c", "printf %s \"$KTUNE_USER_TEMPLATES\""}));
  for (int i = 0; i < kThreads; ++i) {
    const std::string spec = "t" + std::to_string(i) + ".T1.json";
    INFO(spec);
    CHECK(std::count_if(list.begin(), list.end(), [&](const Json& e) {
            return e.value("spec", "").size() >= spec.size() &&
                   e.value("spec", "").compare(e.value("spec", "").size() - spec.size(), spec.size(), spec) == 0;
          }) == 1);
    CHECK(find_template("threaded_transpose_" + std::to_string(i)) != nullptr);
  }
}

TEST_CASE("user template: registering announces it to worker processes", "[user_template]") {
  const std::optional<std::string> own_before = [] {
    const char* v = std::getenv("KTUNE_USER_TEMPLATES");
    return v ? std::optional<std::string>(v) : std::nullopt;
  }();
  auto tmpl = register_user_template({example_file("transpose.T1.json"), ""});
  CHECK(find_template("my_transpose") == tmpl);
  // The process's own environment is left alone (other threads may be reading it) ...
  const char* own = std::getenv("KTUNE_USER_TEMPLATES");
  CHECK(own_before == (own ? std::optional<std::string>(own) : std::nullopt));
  // ... and a child process started now sees the announcement in its environment.
  const std::string seen = child_output({"/bin/sh", "-c", "printf %s \"$KTUNE_USER_TEMPLATES\""});
  REQUIRE_FALSE(seen.empty());
  const Json list = Json::parse(seen);
  REQUIRE(list.is_array());
  bool found = false;
  for (const auto& e : list)
    found |= e.value("spec", "").find("examples/custom_template/transpose.T1.json") != std::string::npos &&
             std::filesystem::path(e.value("spec", "")).is_absolute();
  CHECK(found);
  // What a worker does at start-up with that environment: the entry loads again into an
  // equal template (the variable set here for the call only, single-threaded).
  ::setenv("KTUNE_USER_TEMPLATES", seen.c_str(), 1);
  register_user_templates_from_environment();
  if (own_before) ::setenv("KTUNE_USER_TEMPLATES", own_before->c_str(), 1);
  else ::unsetenv("KTUNE_USER_TEMPLATES");
  auto again = find_template("my_transpose");
  CHECK(again->source() == tmpl->source());
  CHECK(again.get() != tmpl.get());

  // What the program sets in its own variable later still reaches the children, with this
  // process's announcements added (single-threaded here, restored below).
  ::setenv("KTUNE_USER_TEMPLATES", R"([{"spec":"/elsewhere/other.T1.json","kernel":""}])", 1);
  const Json merged = Json::parse(child_output({"/bin/sh", "-c", "printf %s \"$KTUNE_USER_TEMPLATES\""}));
  CHECK(merged.size() >= 2);
  CHECK(merged.at(0).value("spec", "") == "/elsewhere/other.T1.json");
  ::unsetenv("KTUNE_USER_TEMPLATES");
  const Json ours = Json::parse(child_output({"/bin/sh", "-c", "printf %s \"$KTUNE_USER_TEMPLATES\""}));
  for (const auto& e : ours) CHECK(e.value("spec", "") != "/elsewhere/other.T1.json");
  if (own_before) ::setenv("KTUNE_USER_TEMPLATES", own_before->c_str(), 1);

  // A user template may not take a built-in's name.
  test::TempDir dir;
  Json doc = example_json();
  doc["General"]["BenchmarkName"] = "copy";
  std::ofstream(dir.file("copy.T1.json")) << doc.dump();
  std::filesystem::copy_file(example_file("transpose.cu"), dir.file("transpose.cu"));
  std::filesystem::copy_file(example_file("transpose_reference.cu"), dir.file("transpose_reference.cu"));
  try {
    register_user_template({dir.file("copy.T1.json"), ""});
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::invalid_argument);
    CHECK(std::string(e.what()).find("built-in") != std::string::npos);
  }
  CHECK(find_template("copy")->description().find("user kernel") == std::string::npos);
  CHECK_THROWS_AS(load_user_template({dir.file("missing.T1.json"), ""}), Error);
}

TEST_CASE("user template: the example kernel and its reference compile with NVRTC for sm_90",
          "[user_template][nvrtc]") {
  auto tmpl = make_example(example_json());
  const Problem p = make_problem(*tmpl, "1000x3000");
  const Device device = Device::h200();
  const SearchSpace space = tmpl->space(p, device);
  Builder builder;
  const std::vector<Config> configs = {
      space.default_config(),
      space.parse("block_size_x=64,block_size_y=16,tile_size_y=4,use_shared=1,use_padding=1")};
  const auto results = builder.build_all(tmpl, p, configs, device);
  for (std::size_t i = 0; i < results.size(); ++i) {
    INFO(configs[i].str() << "\n" << results[i].log);
    CHECK(results[i].ok);
    CHECK(results[i].arch == "sm_90");
    CHECK(results[i].resources.registers > 0);
  }
  // The shared-memory variant holds a 64-row tile of 64 + 1 floats.
  CHECK(results[1].resources.shared_bytes == 64 * 65 * 4);

  auto ref = tmpl->workload(p)->device_reference();
  REQUIRE(ref);
  const auto out = detail::compile_device_reference(*ref, "sm_90");
  INFO(out.log);
  CHECK(out.ok);
}

TEST_CASE("user template: a recorded reference loads its input and expected output files",
          "[user_template]") {
  auto tmpl = load_user_template({example_file("transpose_recorded.T1.json"), ""});
  CHECK(tmpl->name() == "my_transpose_recorded");
  const Problem p = tmpl->example_problem();
  CHECK(p.key() == "my_transpose_recorded|rows=97,cols=131|");
  auto workload = tmpl->workload(p);
  CHECK_FALSE(workload->device_reference().has_value());  // checked on the host, from the files
  std::vector<HostBuffer> host;
  for (const auto& spec : workload->buffers()) host.push_back(make_host_buffer(spec));
  REQUIRE(host.size() == 2);
  workload->fill(host, 7);
  std::vector<HostBuffer> expected = host;
  workload->reference(expected);
  // The recorded output is the transpose of the recorded input (the files agree with each other
  // and were read whole, in order).
  const auto* in = reinterpret_cast<const float*>(host[1].bytes.data());
  const auto* out = reinterpret_cast<const float*>(expected[0].bytes.data());
  CHECK(test::read_text(example_file("transpose_in.bin")) ==
        std::string(host[1].bytes.begin(), host[1].bytes.end()));
  int mismatches = 0;
  for (int r = 0; r < 97; ++r)
    for (int c = 0; c < 131; ++c) mismatches += out[c * 97 + r] != in[r * 131 + c];
  CHECK(mismatches == 0);
  CHECK(in[0] != 0.0f);
}

TEST_CASE("user template: a recorded reference refuses other shapes and incomplete file lists",
          "[user_template]") {
  auto tmpl = load_user_template({example_file("transpose_recorded.T1.json"), ""});
  // Another shape, and the transposed shape whose files would have the same bytes.
  for (const char* shape : {"100x131", "131x97"}) {
    CAPTURE(shape);
    try {
      tmpl->workload(make_problem(*tmpl, shape));
      FAIL("a shape the files were not recorded for was accepted");
    } catch (const Error& e) {
      const std::string what = e.what();
      CHECK(what.find("rows=97, cols=131 (the KtuneExtensions.Dimensions defaults)") != std::string::npos);
      CHECK(what.find(std::string("rows=") + (shape[1] == '0' ? "100, cols=131" : "131, cols=97")) !=
            std::string::npos);
    }
  }
  CHECK_NOTHROW(tmpl->workload(tmpl->example_problem()));
  Json doc = Json::parse(test::read_text(example_file("transpose_recorded.T1.json")));
  auto recorded_error = [&](const Json& edited) {
    try {
      make_user_template(edited.dump(), test::read_text(example_file("transpose.cu")), "",
                         example_file("transpose_recorded.T1.json"));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(recorded_error(doc).empty());
  // Defaults that the files do not fit: their sizes are checked against the defaults' bytes.
  Json other_defaults = doc;
  other_defaults["KtuneExtensions"]["Dimensions"][0]["Default"] = 100;
  auto resized = make_user_template(other_defaults.dump(), test::read_text(example_file("transpose.cu")), "",
                                    example_file("transpose_recorded.T1.json"));
  try {
    resized->workload(resized->example_problem());
    FAIL("files of another size were accepted");
  } catch (const Error& e) {
    const std::string what = e.what();
    CHECK(what.find("transpose_out.bin") != std::string::npos);
    CHECK(what.find("50828 bytes") != std::string::npos);
    CHECK(what.find("52400") != std::string::npos);
  }
  Json no_input = doc;
  no_input["KtuneExtensions"]["Reference"].erase("InputFiles");
  CHECK(recorded_error(no_input).find("no file for input in") != std::string::npos);
  Json wrong_name = doc;
  wrong_name["KtuneExtensions"]["Reference"]["OutputFiles"] = {{"output", "x.bin"}};
  CHECK(recorded_error(wrong_name).find("OutputFiles.output: no vector argument") != std::string::npos);
  Json input_as_output = doc;
  input_as_output["KtuneExtensions"]["Reference"]["OutputFiles"]["in"] = "transpose_in.bin";
  CHECK(recorded_error(input_as_output).find("not a compared output") != std::string::npos);
  Json both = doc;
  both["KtuneExtensions"]["Reference"]["KernelName"] = "transpose_reference";
  CHECK(recorded_error(both).find("not both") != std::string::npos);
  Json missing_file = doc;
  missing_file["KtuneExtensions"]["Reference"]["OutputFiles"]["out"] = "gone.bin";
  auto t = make_user_template(missing_file.dump(), test::read_text(example_file("transpose.cu")), "",
                              example_file("transpose_recorded.T1.json"));
  CHECK_THROWS_WITH(t->workload(t->example_problem()), Catch::Contains("gone.bin"));
}

TEST_CASE("user template: mistakes that used to run silently are named by field",
          "[user_template]") {
  const Problem p{"my_transpose", {{"rows", 4096}, {"cols", 4096}}, {}};
  const Device h200 = Device::h200();
  auto edited = [](auto&& edit) {
    Json doc = example_json();
    edit(doc["KernelSpecification"], doc);
    return doc;
  };
  auto ks = [](const char* key, Json value) {
    return [=](Json& k, Json&) { k[key] = value; };
  };
  // Refused when the document is read.
  const std::vector<std::pair<Json, std::vector<std::string>>> refused = {
      {edited([](Json&, Json& d) { d["KtuneExtensions"]["Dimensions"][1]["Name"] = "rows"; }),
       {"Dimensions[1].Name", "declared twice"}},
      {edited([](Json&, Json& d) {
         d["ConfigurationSpace"]["TuningParameters"].push_back(
             {{"Name", "ProblemSize_0"}, {"Type", "int"}, {"Values", "[1]"}, {"Default", 1}});
       }),
       {"ProblemSize_0", "reserved"}},
      {edited(ks("KernelName", "trans")), {"KernelName", "no kernel \"trans\""}},
      {edited(ks("LocalSize", Json{{"x", "block_size_x"}, {"Y", "block_size_y"}})),
       {"LocalSize.x", "unknown key"}},
      {edited(ks("LocalSize", Json::object())), {"LocalSize.X", "missing"}},
      {edited(ks("CompilerOptions", Json{"-Dblock_size_x=7"})),
       {"CompilerOptions[0]", "block_size_x"}},
      {edited(ks("ProblemSize", Json{"cols", "rows", "1", "1"})), {"ProblemSize", "4 entries"}},
      {edited([](Json& k, Json&) { k["Arguments"][1]["Name"] = "out"; }),
       {"Arguments[1].Name", "also names Arguments[0]"}},
      {edited([](Json& k, Json&) { k["Arguments"][1]["Name"] = ""; }),
       {"Arguments[1].Name", "not an identifier"}},
      {edited([](Json& k, Json&) { k["Arguments"][1]["MemType"] = 5; }),
       {"Arguments[1].MemType", "expected a string"}},
      {edited(ks("GlobalSizeType", "Bogus")), {"GlobalSizeType", "Bogus"}},
      // Fill values the element type cannot hold (a cast of them was undefined behaviour).
      {edited([](Json& k, Json&) {
         k["Arguments"][1]["Type"] = "const int*";
         k["Arguments"][1]["FillValue"] = 3e9;
       }),
       {"Arguments[1].FillValue", "3000000000 is outside the range of int32"}},
      {edited([](Json& k, Json&) {
         k["Arguments"][1]["Type"] = "const uint8_t*";
         k["Arguments"][1]["FillValue"] = -5;
       }),
       {"Arguments[1].FillValue", "outside the range of uint8"}},
      {edited([](Json& k, Json&) {
         k["Arguments"][1]["Type"] = "const int*";
         k["Arguments"][1]["FillType"] = "Constant";
         k["Arguments"][1]["FillValue"] = 2.5;
       }),
       {"Arguments[1].FillValue", "2.5 is not an integer"}},
      {edited([](Json& k, Json&) { k["Arguments"][1]["FillValue"] = 1e39; }),
       {"Arguments[1].FillValue", "outside the range of float"}},
      {edited(ks("LocalSize", Json{{"X", "block_size_x"}, {"Y", "block_size_y"}, {"Z", 1e30}})),
       {"LocalSize.Z", "expected an integer or an expression"}},
      {edited([](Json&, Json& d) { d["General"] = "x"; }), {"General", "expected an object"}},
      // Misspelt keys: refused with the key they resemble, not ignored.
      {edited(ks("SharedMem", 0)), {"KernelSpecification.SharedMem", "did you mean SharedMemory?"}},
      {edited(ks("GridDivx", Json{"block_size_x"})), {"GridDivx", "did you mean GridDivX?"}},
      {edited([](Json& k, Json&) { k["Arguments"][0]["Tolerence"] = 0.1; }),
       {"Arguments[0].Tolerence", "did you mean Tolerance?"}},
      {edited([](Json& k, Json&) { k["Arguments"][1]["FillTyp"] = "Random"; }),
       {"Arguments[1].FillTyp", "did you mean FillType?"}},
      {edited([](Json&, Json& d) { d["KtuneExtensions"]["Dimensions"][0]["Defualt"] = 5; }),
       {"Dimensions[0].Defualt", "did you mean Default?"}},
      {edited([](Json&, Json& d) { d["KtuneExtensions"]["Reference"]["LocalSiz"] = Json::object(); }),
       {"Reference.LocalSiz", "did you mean LocalSize?"}},
      // ktune's own section takes no other key.
      {edited([](Json&, Json& d) { d["KtuneExtensions"]["Comment"] = "x"; }),
       {"KtuneExtensions.Comment", "unknown key (expected Dimensions, Reference, Tolerance, "
                                   "Bytes, Flops, GridDependencyWait)"}},
      {edited([](Json&, Json& d) { d["KtuneExtensions"]["GridDependencyWait"] = "yes"; }),
       {"KtuneExtensions.GridDependencyWait", "expected true or false"}},
      // The T1 space's own keys: a misspelt Conditions or Default would drop constraints or
      // move the default without a word.
      {edited([](Json&, Json& d) {
         auto& space = d["ConfigurationSpace"];
         space["Conditons"] = space["Conditions"];
         space.erase("Conditions");
       }),
       {"ConfigurationSpace.Conditons", "did you mean Conditions?"}},
      {edited([](Json&, Json& d) {
         auto& param = d["ConfigurationSpace"]["TuningParameters"][1];
         param["Defualt"] = param["Default"];
         param.erase("Default");
       }),
       {"TuningParameters[1].Defualt", "did you mean Default?"}},
      {edited([](Json&, Json& d) { d["ConfigurationSpace"]["Conditions"][0]["Expresion"] = "1"; }),
       {"Conditions[0].Expresion", "did you mean Expression?"}},
      // Output is 0 or 1 (or a boolean): a string "1" made an output uncompared scratch.
      {edited([](Json& k, Json&) { k["Arguments"][0]["Output"] = "1"; }),
       {"Arguments[0].Output", "expected 1 (a compared output) or 0 (scratch), found \"1\""}},
      {edited([](Json& k, Json&) { k["Arguments"][0]["Output"] = 2; }), {"Arguments[0].Output"}},
      {edited([](Json& k, Json&) { k["Arguments"][0]["Output"] = 0; }),
       {"Arguments", "Output 0 makes one uncompared scratch"}},
      // Dimensions are not macros: -D of one is the user's business; of a parameter it is not.
      {edited(ks("CompilerOptions", Json{"-Dtile_size_y=2"})),
       {"CompilerOptions[0]", "defines tile_size_y, a tuning parameter"}},
      // Settings that would be ignored: a tolerance on an input or a scalar, geometry beside
      // recorded files.
      {edited([](Json& k, Json&) { k["Arguments"][1]["Tolerance"] = 0.1; }),
       {"Arguments[1].Tolerance", "not one (it is ReadOnly, or Output 0)"}},
      {edited([](Json& k, Json&) { k["Arguments"][2]["Tolerance"] = 0.5; }),
       {"Arguments[2].Tolerance", "this argument is a Scalar"}},
      {edited([](Json& k, Json&) { k["Arguments"][2]["Output"] = "1"; }),
       {"Arguments[2].Output", "this argument is a Scalar"}},
      // A misspelt section of the document itself.
      {edited([](Json&, Json& d) {
         d["KtuneExtension"] = d["KtuneExtensions"];
         d.erase("KtuneExtensions");
       }),
       {"KtuneExtension: unknown key; did you mean KtuneExtensions?"}},
      {edited([](Json&, Json& d) {
         d["KtuneExtensions"]["Reference"] = {{"InputFiles", {{"in", "transpose_in.bin"}}},
                                              {"OutputFiles", {{"out", "transpose_out.bin"}}},
                                              {"LocalSize", {{"X", "32"}}}};
       }),
       {"Reference.LocalSize", "take no launch geometry"}},
      // Recorded inputs without recorded outputs: the missing list is named.
      {edited([](Json&, Json& d) {
         d["KtuneExtensions"]["Reference"] = {{"InputFiles", {{"in", "transpose_in.bin"}}}};
       }),
       {"OutputFiles", "no file for output out"}},
  };
  for (const auto& [doc, needles] : refused) {
    const std::string message = error_of(doc);
    INFO(message);
    for (const auto& n : needles) CHECK_THAT(message, Catch::Contains(n));
  }
  // Values of a problem: refused for it, by name, instead of wrapped or launched as 0 bytes.
  auto tmpl = make_example(edited(ks("SharedMemory", "4294967296")));
  std::string why;
  CHECK_FALSE(tmpl->can_implement(p, tmpl->space(p, h200).default_config(), &why));
  CHECK_THAT(why, Catch::Contains("SharedMemory = 4294967296") && Catch::Contains("232448"));
  tmpl = make_example(edited(ks("GridDivX", Json{"-1", "-1"})));
  CHECK_FALSE(tmpl->can_implement(p, tmpl->space(p, h200).default_config(), &why));
  CHECK_THAT(why, Catch::Contains("GridDivX factor is -1"));
  // Grids near 2^63 threads: named as beyond the CUDA limits, not wrapped to a negative grid.
  const std::int64_t kHuge = std::numeric_limits<std::int64_t>::max();
  const Problem huge{"my_transpose", {{"rows", kHuge}, {"cols", kHuge}}, {}};
  tmpl = make_example(example_json());
  CHECK_FALSE(tmpl->can_implement(huge, tmpl->space(huge, h200).default_config(), &why));
  CHECK_THAT(why, Catch::Contains("exceeds the CUDA grid limits"));
  tmpl = make_example(edited([&](Json& k, Json&) {
    k["GlobalSizeType"] = "OpenCL";  // the grid in threads, in place of GridDiv
    k["GlobalSize"] = Json{{"X", std::to_string(kHuge)}, {"Y", "1"}, {"Z", "1"}};
    for (const char* key : {"GridDivX", "GridDivY", "GridDivZ"}) k.erase(key);
  }));
  CHECK_FALSE(tmpl->can_implement(p, tmpl->space(p, h200).default_config(), &why));
  CHECK_THAT(why, Catch::Contains("exceeds the CUDA grid limits"));
  tmpl = make_example(edited([](Json& k, Json&) { k["Arguments"][2]["Value"] = "rows / 3"; }));
  CHECK_THROWS_WITH(tmpl->launch(p, tmpl->space(p, h200).default_config(), h200),
                    Catch::Contains("argument rows: Value \"rows / 3\" is 1365.33, not a whole number"));
  tmpl = make_example(edited([](Json& k, Json&) { k["Arguments"][2]["Value"] = "rows // 3"; }));
  CHECK_NOTHROW(tmpl->launch(p, tmpl->space(p, h200).default_config(), h200));
  tmpl = make_example(edited([](Json& k, Json&) { k["Arguments"][2]["Value"] = "rows + 4294967296"; }));
  CHECK_THROWS_WITH(tmpl->launch(p, tmpl->space(p, h200).default_config(), h200),
                    Catch::Contains("rows") && Catch::Contains("32-bit"));
  tmpl = make_example(edited([](Json& k, Json&) { k["Arguments"][0]["Size"] = "4611686018427387905"; }));
  CHECK_THROWS_WITH(tmpl->workload(p), Catch::Contains("out") && Catch::Contains("2^40"));
  tmpl = make_example(edited([](Json&, Json& d) { d["KtuneExtensions"]["Bytes"] = "-rows"; }));
  CHECK_THROWS_WITH(tmpl->workload(p), Catch::Contains("Bytes") && Catch::Contains("-4096"));
  tmpl = make_example(edited([](Json&, Json& d) { d["KtuneExtensions"]["Bytes"] = "rows / (cols - 4096)"; }));
  CHECK_THROWS_WITH(tmpl->workload(p), Catch::Contains("KtuneExtensions.Bytes") &&
                                           Catch::Contains("division by zero"));
  tmpl = make_example(edited([](Json&, Json& d) { d["KtuneExtensions"]["Flops"] = "rows ** 100"; }));
  CHECK_THROWS_WITH(tmpl->workload(p), Catch::Contains("KtuneExtensions.Flops") &&
                                           Catch::Contains("expected a finite number"));
  tmpl = make_example(edited([](Json&, Json& d) { d["KtuneExtensions"]["Flops"] = "rows / 3"; }));
  CHECK(tmpl->workload(p)->flops() == Approx(4096.0 / 3));  // a real figure, not floored
  // Counts that are not whole (true division) or not numbers (a division by zero) are named,
  // never truncated to a block of 10 threads or launched over 0 elements.
  tmpl = make_example(edited([](Json& k, Json&) { k["LocalSize"]["X"] = "block_size_x / 3"; }));
  CHECK_FALSE(tmpl->can_implement(p, tmpl->space(p, h200).default_config(), &why));
  CHECK_THAT(why, Catch::Contains("LocalSize X \"block_size_x / 3\" is 10.6667, not a whole number"));
  tmpl = make_example(edited([](Json& k, Json&) { k["GridDivX"] = Json{"block_size_x / 3"}; }));
  CHECK_FALSE(tmpl->can_implement(p, tmpl->space(p, h200).default_config(), &why));
  CHECK_THAT(why, Catch::Contains("GridDivX \"block_size_x / 3\" is 10.6667"));
  tmpl = make_example(edited([](Json& k, Json&) { k["Arguments"][0]["Size"] = "rows * cols / 3"; }));
  CHECK_THROWS_WITH(tmpl->workload(p), Catch::Contains("argument out: Size \"rows * cols / 3\" is 5.59241e+06, "
                                                       "not a whole number"));
  tmpl = make_example(edited([](Json& k, Json&) { k["Arguments"][0]["Size"] = "rows * cols // (rows - 4096)"; }));
  CHECK_THROWS_WITH(tmpl->workload(p), Catch::Contains("argument out: Size") &&
                                           Catch::Contains("division by zero"));
  tmpl = make_example(edited([](Json& k, Json&) { k["Arguments"][0]["Size"] = "rows * cols / 2"; }));
  CHECK_NOTHROW(tmpl->workload(p));  // a whole quotient is fine
  // A -D of a dimension name is the kernel's own macro: accepted (dimensions are arguments).
  CHECK_NOTHROW(make_example(edited(ks("CompilerOptions", Json{"-std=c++17", "-Drows=4"}))));
  // A LocalSize below 1 is named as the block it gives, not as the GridDiv factor it implies.
  tmpl = make_example(edited([](Json& k, Json&) { k["LocalSize"]["Z"] = "-1"; }));
  CHECK_FALSE(tmpl->can_implement(p, tmpl->space(p, h200).default_config(), &why));
  CHECK_THAT(why, Catch::Contains("block.z (LocalSize Z) = -1 < 1"));
  // A ProblemSize that divides by zero for the problem is named when its space is asked for.
  tmpl = make_example(edited(ks("ProblemSize", Json{"cols / (rows - 4096)", "rows"})));
  CHECK_THROWS_WITH(tmpl->space(p, h200), Catch::Contains("KernelSpecification.ProblemSize[0]") &&
                                              Catch::Contains("division by zero"));
  // A short key of no likeness is no misspelling ("Note" is not "Name"): warned and ignored.
  CHECK_NOTHROW(make_example(edited([](Json&, Json& d) {
    d["ConfigurationSpace"]["TuningParameters"][0]["Note"] = "x";
  })));
  // Keys of the T1 schema that ktune does not use are accepted (TypeSize is no misspelt Type).
  CHECK_NOTHROW(make_example(edited([](Json& k, Json&) {
    k["Arguments"][1]["TypeSize"] = 4;
    k["Arguments"][1]["DataSource"] = "x.bin";
    k["Stream"] = 0;
  })));
  // A launch no tuning parameter changes is checked once, when the space is asked for.
  tmpl = make_example(edited([](Json& k, Json&) {
    k["LocalSize"] = Json{{"X", "32"}, {"Y", "8"}, {"Z", "1"}};
    k["GridDivX"] = Json{"0"};
    k["GridDivY"] = Json{"8"};
  }));
  CHECK_THROWS_WITH(tmpl->space(p, h200),
                    Catch::Contains("no tuning parameter changes") && Catch::Contains("GridDivX"));
}

TEST_CASE("user template: its own language standard is the one compiled", "[user_template][nvrtc]") {
  // The example asks for -std=c++17; ktune's C++20 default used to come after it and win.
  auto tmpl = make_example_kernel("static_assert(__cplusplus == 201703L, \"compiled as C++17\");");
  const auto built = build_default(*tmpl);
  INFO(built.log);
  CHECK(built.ok);
}

TEST_CASE("user template: compiler messages name the user's kernel file", "[user_template][nvrtc]") {
  auto tmpl = make_example_kernel("__global__ void not_compiling() { undefined_thing = 1; }");
  CHECK(tmpl->source_name() == "transpose.cu");
  const auto built = build_default(*tmpl);
  INFO(built.log);
  CHECK_FALSE(built.ok);
  CHECK(built.log.find("transpose.cu(") != std::string::npos);
  CHECK(built.log.find("undefined_thing") != std::string::npos);
  // The reference kernel's name is checked as a declared function, not a substring.
  Json doc = example_json();
  doc["KtuneExtensions"]["Reference"]["KernelName"] = "transpose";
  CHECK_THAT(error_of(doc), Catch::Contains("Reference.KernelName"));
  // So do the reference kernel's messages, with its own file's name.
  auto with_bad_reference = make_user_template(
      example_json().dump(), test::read_text(example_file("transpose.cu")),
      test::read_text(example_file("transpose_reference.cu")) + "\n__global__ void broken() { missing_ref = 1; }\n",
      "transpose.T1.json");
  const auto ref = with_bad_reference->workload(make_problem(*with_bad_reference, "256x256"))->device_reference();
  REQUIRE(ref);
  CHECK(ref->source_name == "transpose_reference.cu");
  const auto compiled = detail::compile_device_reference(*ref, "sm_90");
  INFO(compiled.log);
  CHECK_FALSE(compiled.ok);
  CHECK(compiled.log.find("transpose_reference.cu(") != std::string::npos);
  CHECK(compiled.log.find("missing_ref") != std::string::npos);
}

TEST_CASE("user template: GridDependencyWait marks its step, and a kernel that does not wait "
          "first fails to build",
          "[user_template][nvrtc][pdl]") {
  Json doc = example_json();
  doc["KtuneExtensions"]["GridDependencyWait"] = true;
  const std::string kernel = test::read_text(example_file("transpose.cu"));
  const std::string reference = test::read_text(example_file("transpose_reference.cu"));
  const std::string body_start = "  const int c0 = blockIdx.x * block_size_x;";
  REQUIRE(kernel.find(body_start) != std::string::npos);
  auto with_kernel = [&](const std::string& source) {
    return make_user_template(doc.dump(), source, reference, "transpose.T1.json");
  };
  const std::string wait = "  asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");\n";
  // Waiting first: marked, built, and the step would be launched programmatically.
  std::string waiting = kernel;
  waiting.insert(waiting.find(body_start), wait);
  auto tmpl = with_kernel(waiting);
  const Problem p = make_problem(*tmpl, "256x256");
  const Config def = tmpl->space(p, Device::h200()).default_config();
  const LaunchPlan plan = tmpl->launch(p, def, Device::h200());
  REQUIRE(plan.steps.size() == 1);
  CHECK(plan.steps[0].grid_dependency_wait);
  auto built = build_default(*tmpl);
  INFO(built.log);
  CHECK(built.ok);
  // Without the flag nothing is marked.
  const LaunchPlan unmarked = make_example(example_json())->launch(p, def, Device::h200());
  CHECK_FALSE(unmarked.steps[0].grid_dependency_wait);

  // Declared but not done: no wait at all, or the wait after the loads and stores.
  built = build_default(*with_kernel(kernel));
  INFO(built.log);
  CHECK_FALSE(built.ok);
  CHECK_THAT(built.log, Catch::Contains("kernel transpose holds no griddepcontrol.wait") &&
                            Catch::Contains("marked grid_dependency_wait"));
  std::string late = kernel;
  late.insert(late.rfind('}'), wait);
  built = build_default(*with_kernel(late));
  INFO(built.log);
  CHECK_FALSE(built.ok);
  CHECK_THAT(built.log, Catch::Contains("touches global memory") &&
                            Catch::Contains("before griddepcontrol.wait on some path"));
  // A build for sm_80 launches nothing programmatically: the mark is not checked there.
  Builder builder;
  const Device a100 = Device::offline("sm_80");
  const auto old_gpu = builder.build(*with_kernel(kernel), p,
                                     tmpl->space(p, a100).default_config(), a100);
  INFO(old_gpu.log);
  CHECK(old_gpu.ok);
}
