// `ktune` with a user's own kernel (examples/custom_template): `tune --space ... --dry-run`
// and `compile --space ...` without a GPU, plan entries naming a space, the argument errors,
// and on a GPU a short real tune of the example whose trials land in the database and whose
// winner `best` prints.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_fixtures.h"
#include "gpu_guard.h"

using namespace ktune;
using ktune::test::run_ktune;
using ktune::test::TempDir;

namespace {

std::string example_space() { return test::source_path("examples/custom_template/transpose.T1.json"); }

}  // namespace

TEST_CASE("cli: tune --space --dry-run shows the user template's space, geometry and reference",
          "[cli][user_template]") {
  TempDir dir;
  auto r = run_ktune(dir, "tune --space " + example_space() + " --shape 1000x3000 --dry-run --db " +
                              dir.file("never.db"));
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("my_transpose my_transpose|rows=1000,cols=3000|") != std::string::npos);
  CHECK(r.output.find("5 parameters, 180 points, 126 valid") != std::string::npos);
  CHECK(r.output.find("transpose<<<94x125x1, 32x8x1, 0 B>>> (4 arguments)") != std::string::npos);
  CHECK(r.output.find("transpose_reference<<<4096x1x1, 256x1x1, 0 B>>>") != std::string::npos);
  CHECK(r.output.find("out (f32 x 3000000, output) in (f32 x 3000000, input)") != std::string::npos);
  CHECK(r.output.find("nothing was measured") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("never.db")));
}

TEST_CASE("cli: compile --space builds the user kernel for sm_90 with NVRTC", "[cli][user_template][nvrtc]") {
  TempDir dir;
  auto r = run_ktune(dir, "compile --space " + example_space() + " --arch sm_90 --samples 3 --seed 5");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("my_transpose on my_transpose|rows=4096,cols=4096| (sm_90)") != std::string::npos);
  CHECK(r.output.find("(default)") != std::string::npos);
  CHECK(r.output.find("FAILED") == std::string::npos);
}

TEST_CASE("cli: compile fails a config whose module lacks the kernel the launch runs",
          "[cli][user_template][nvrtc]") {
  TempDir dir;
  std::ifstream in(test::source_path("examples/custom_template/transpose.cu"));
  std::string kernel((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The kernel exists only with use_shared=1; otherwise a misnamed one is compiled.
  const auto at = kernel.find("extern \"C\" __global__");
  REQUIRE(at != std::string::npos);
  kernel = kernel.substr(0, at) + "#if use_shared\n" + kernel.substr(at) +
           "\n#else\nextern \"C\" __global__ void transpose_typo(float* out) { out[0] = 1.0f; }\n#endif\n";
  const std::string conditional = dir.file("conditional.cu");
  test::write_text(conditional, kernel);
  auto r = run_ktune(dir, "compile --space " + example_space() + " --kernel " + conditional +
                              " --arch sm_90 --samples 0 --config use_shared=0 --config use_shared=1");
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("1 of 2 configs") != std::string::npos);
  CHECK(r.output.find("no kernel 'transpose'") != std::string::npos);
  CHECK(r.output.find("transpose_typo") != std::string::npos);
}

TEST_CASE("cli: compile --kernel names the given file in compiler messages", "[cli][user_template][nvrtc]") {
  TempDir dir;
  std::ifstream in(test::source_path("examples/custom_template/transpose.cu"));
  const std::string kernel((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string broken = dir.file("broken.cu");
  test::write_text(broken, kernel + "\n__global__ void not_compiling() { undefined_thing = 1; }\n");
  auto r = run_ktune(dir, "compile --space " + example_space() + " --kernel " + broken +
                              " --arch sm_90 --samples 0");
  INFO(r.output);
  CHECK(r.status != 0);
  CHECK(r.output.find(broken + "(") != std::string::npos);  // the file that was compiled
  CHECK(r.output.find("transpose.cu(") == std::string::npos);
  CHECK(r.output.find("undefined_thing") != std::string::npos);
}

TEST_CASE("cli: a plan entry names a user template by its space file", "[cli][user_template]") {
  TempDir dir;
  std::filesystem::create_directories(dir.path / "kernels");
  for (const char* f : {"transpose.T1.json", "transpose.cu", "transpose_reference.cu"})
    std::filesystem::copy_file(test::source_path(std::string("examples/custom_template/") + f),
                               dir.path / "kernels" / f);
  const std::string plan = dir.file("plan.json");
  test::write_text(plan, R"([{"space": "kernels/transpose.T1.json", "shape": "512x256", "budget": 10},
                             {"template": "copy", "shape": "1024", "dtype": "f32"}])");
  auto r = run_ktune(dir, "tune --plan " + plan + " --dry-run");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("entry 1: my_transpose my_transpose|rows=512,cols=256|") != std::string::npos);
  CHECK(r.output.find("entry 2: copy copy|N=1024|dtype=f32") != std::string::npos);
  CHECK(r.output.find("2 task(s) checked") != std::string::npos);

  test::write_text(plan, R"([{"space": "kernels/missing.T1.json"}])");
  r = run_ktune(dir, "tune --plan " + plan + " --dry-run");
  CHECK(r.status == 2);
  CHECK(r.output.find("entry 1") != std::string::npos);
  CHECK(r.output.find("missing.T1.json") != std::string::npos);
}

TEST_CASE("cli: user template argument errors name the option or the field", "[cli][user_template]") {
  TempDir dir;
  auto doc = nlohmann::json::parse(std::ifstream(example_space()));
  doc["KernelSpecification"]["GridDivY"] = {"block_size_y", "tile_size_q"};
  doc["KtuneExtensions"]["Reference"]["KernelFile"] =
      test::source_path("examples/custom_template/transpose_reference.cu");  // absolute
  const std::string bad = dir.file("bad.T1.json");
  test::write_text(bad, doc.dump());
  const std::string kernel = test::source_path("examples/custom_template/transpose.cu");
  struct Case {
    std::string args;                   // after "tune", before " --dry-run"
    std::vector<std::string> expected;  // in the output
  };
  const std::vector<Case> cases = {
      {"--kernel " + kernel, {"--kernel", "needs --space"}},
      {"--space " + example_space() + " --op gemm", {"not both"}},
      {"--space " + bad + " --kernel " + kernel,
       {"bad.T1.json: KernelSpecification.GridDivY[1]", "tile_size_q"}},
      {"--space " + example_space() + " --shape 1000", {"rows"}},
  };
  for (const auto& c : cases) {
    auto r = run_ktune(dir, "tune " + c.args + " --dry-run");
    INFO(c.args << "\n" << r.output);
    CHECK(r.status == 2);
    for (const auto& e : c.expected) CHECK(r.output.find(e) != std::string::npos);
  }
  // A missing file is refused by the option check itself (a usage error).
  auto r = run_ktune(dir, "tune --space " + dir.file("nope.json") + " --dry-run");
  CHECK(r.status != 0);
  CHECK(r.output.find("nope.json") != std::string::npos);
  // Documents broken at the top or in the files they name: each named by its field.
  std::filesystem::copy(test::source_path("examples/custom_template"), dir.file("t"),
                        std::filesystem::copy_options::recursive);
  const auto good = nlohmann::json::parse(std::ifstream(dir.file("t/transpose.T1.json")));
  const std::string edited = dir.file("t/edited.T1.json");
  auto refused = [&](const nlohmann::json& doc, const std::vector<std::string>& expected) {
    test::write_text(edited, doc.dump());
    auto e = run_ktune(dir, "tune --space " + edited + " --dry-run");
    INFO(doc.dump().substr(0, 300) << "\n" << e.output);
    CHECK(e.status == 2);
    for (const auto& x : expected) CHECK(e.output.find(x) != std::string::npos);
  };
  auto misspelt = good;
  misspelt["KtuneExtension"] = misspelt["KtuneExtensions"];
  misspelt.erase("KtuneExtensions");
  refused(misspelt, {"edited.T1.json: KtuneExtension: unknown key; did you mean KtuneExtensions?"});
  refused(nlohmann::json::array({1, 2}), {"edited.T1.json: expected a JSON object (a T1 document)"});
  refused(nlohmann::json::object(), {"edited.T1.json: ConfigurationSpace: missing"});
  auto no_reference = good;
  no_reference["KtuneExtensions"]["Reference"]["KernelFile"] = "missing_ref.cu";
  refused(no_reference,
          {"edited.T1.json: KtuneExtensions.Reference.KernelFile", "missing_ref.cu\" is not a readable file"});
  auto nul = good;
  nul["KernelSpecification"]["KernelFile"] = std::string("transpose.cu\0.txt", 16);
  refused(nul, {"edited.T1.json: KernelSpecification.KernelFile: expected a file name"});
}

TEST_CASE("cli: a short GPU tune of the custom template example records trials and a winner",
          "[cli][user_template][gpu]") {
  KTUNE_REQUIRE_GPU();
  TempDir dir;
  const std::string db = dir.file("custom.db");
  auto r = run_ktune(dir, "tune --space " + example_space() +
                              " --shape 2048x3000 --budget 16 --seed 2 --progress 0 --db " + db);
  INFO(r.output);
  REQUIRE(r.status == 0);
  {
    TuningLog log(db, LogMode::read_only);
    LogFilter filter;
    filter.template_name = "my_transpose";
    filter.problem_key = "my_transpose|rows=2048,cols=3000|";
    CHECK(log.count(filter) >= 16);
    filter.status = Status::ok;
    CHECK(log.count(filter) >= 8);  // every config of the space is correct
    filter.status = Status::wrong_result;
    CHECK(log.count(filter) == 0);
  }
  auto best = run_ktune(dir, "best --json --space " + example_space() + " --db " + db);
  INFO(best.output);
  REQUIRE(best.status == 0);
  const auto rows = nlohmann::json::parse(best.output);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["template"] == "my_transpose");
  CHECK(rows[0]["median_ms"].get<double>() > 0);
  CHECK(rows[0]["speedup"].is_number());  // the default config was measured and is known
}

TEST_CASE("cli: a GPU tune checked against recorded reference files", "[cli][user_template][gpu]") {
  KTUNE_REQUIRE_GPU();
  TempDir dir;
  const std::string db = dir.file("recorded.db");
  const std::string space = test::source_path("examples/custom_template/transpose_recorded.T1.json");
  auto r = run_ktune(dir, "tune --space " + space + " --budget 12 --seed 3 --progress 0 --db " + db);
  INFO(r.output);
  REQUIRE(r.status == 0);
  TuningLog log(db, LogMode::read_only);
  LogFilter filter;
  filter.template_name = "my_transpose_recorded";
  CHECK(log.count(filter) >= 12);
  filter.status = Status::ok;
  CHECK(log.count(filter) >= 6);  // every config transposes correctly, so the files agree
  filter.status = Status::wrong_result;
  CHECK(log.count(filter) == 0);

  // The same document beside an expected-output file with one element changed: every
  // candidate is now wrong_result.
  for (const char* f : {"transpose_recorded.T1.json", "transpose.cu", "transpose_in.bin", "transpose_out.bin"})
    std::filesystem::copy_file(test::source_path(std::string("examples/custom_template/") + f), dir.file(f));
  {
    std::fstream out(dir.file("transpose_out.bin"), std::ios::in | std::ios::out | std::ios::binary);
    const float changed = 1000.0f;
    out.seekp(4 * 500);
    out.write(reinterpret_cast<const char*>(&changed), sizeof changed);
  }
  const std::string bad_db = dir.file("bad.db");
  auto bad = run_ktune(dir, "tune --space " + dir.file("transpose_recorded.T1.json") +
                                " --budget 4 --seed 3 --progress 0 --db " + bad_db);
  INFO(bad.output);
  TuningLog bad_log(bad_db, LogMode::read_only);
  LogFilter wrong;
  wrong.template_name = "my_transpose_recorded";
  wrong.status = Status::wrong_result;
  CHECK(bad_log.count(wrong) >= 4);
  wrong.status = Status::ok;
  CHECK(bad_log.count(wrong) == 0);
}

TEST_CASE("cli: two documents giving one template name are refused, one read twice is not",
          "[cli][user_template]") {
  TempDir dir;
  std::ifstream in(example_space());
  nlohmann::json doc = nlohmann::json::parse(in);
  for (const char* file : {"transpose.cu", "transpose_reference.cu"})  // named relative to it
    std::filesystem::copy_file(test::source_path(std::string("examples/custom_template/") + file), dir.file(file));
  for (auto& p : doc["ConfigurationSpace"]["TuningParameters"])
    if (p["Name"] == "block_size_x") p["Default"] = 64;  // another default under the same name
  test::write_text(dir.file("other.T1.json"), doc.dump());
  const std::string recorded = test::source_path("benchmarks/results/2026-11-30-h200/demo-h200.jsonl");
  REQUIRE(run_ktune(dir, "import --db " + dir.file("l.db") + " " + recorded).status == 0);
  auto r = run_ktune(dir, "best --db " + dir.file("l.db") + " --space " + example_space() + " --space " +
                              dir.file("other.T1.json"));
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("other.T1.json") != std::string::npos);
  CHECK(r.output.find("is already the user template of") != std::string::npos);
  auto twice = run_ktune(dir, "best --db " + dir.file("l.db") + " --space " + example_space() + " --space " +
                                  example_space());
  INFO(twice.output);
  CHECK(twice.status == 0);
}

TEST_CASE("cli: compile prints a user kernel's warnings and names a missing --kernel as given",
          "[cli][user_template][nvrtc]") {
  TempDir dir;
  std::ifstream in(test::source_path("examples/custom_template/transpose.cu"));
  const std::string kernel((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  test::write_text(dir.file("warned.cu"), "#warning \"look here\"\n" + kernel);
  auto r = run_ktune(dir, "compile --space " + example_space() + " --kernel " + dir.file("warned.cu") +
                              " --arch sm_90 --samples 0");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("warned.cu(1): warning") != std::string::npos);
  auto missing = run_ktune(dir, "compile --space " + example_space() + " --kernel " + dir.file("nope.cu") +
                                    " --arch sm_90 --samples 0");
  INFO(missing.output);
  CHECK(missing.status == 2);
  CHECK(missing.output.find("kernel file \"" + dir.file("nope.cu") + "\" is not a readable file") !=
        std::string::npos);
  CHECK(missing.output.find("KernelSpecification.KernelFile") == std::string::npos);
}

TEST_CASE("cli: a recorded reference path that is a folder, and a reference grid of 0, name their fields",
          "[cli][user_template]") {
  TempDir dir;
  for (const char* f : {"transpose_recorded.T1.json", "transpose.T1.json", "transpose.cu",
                        "transpose_reference.cu", "transpose_in.bin", "transpose_out.bin"})
    std::filesystem::copy_file(test::source_path(std::string("examples/custom_template/") + f), dir.file(f));
  std::filesystem::create_directory(dir.file("sub"));
  nlohmann::json recorded = nlohmann::json::parse(std::ifstream(dir.file("transpose_recorded.T1.json")));
  recorded["KtuneExtensions"]["Reference"]["InputFiles"]["in"] = "sub";
  test::write_text(dir.file("folder.T1.json"), recorded.dump());
  auto r = run_ktune(dir, "tune --space " + dir.file("folder.T1.json") + " --dry-run");
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("KtuneExtensions.Reference.InputFiles.in") != std::string::npos);
  CHECK(r.output.find("folder") != std::string::npos);
  nlohmann::json zero = nlohmann::json::parse(std::ifstream(dir.file("transpose.T1.json")));
  zero["KtuneExtensions"]["Reference"]["GlobalSize"] = {{"X", "0"}};
  test::write_text(dir.file("zero.T1.json"), zero.dump());
  auto z = run_ktune(dir, "tune --space " + dir.file("zero.T1.json") + " --dry-run");
  INFO(z.output);
  CHECK(z.status == 2);
  CHECK(z.output.find("KtuneExtensions.Reference.LocalSize / GlobalSize") != std::string::npos);
}

namespace {

/// The example with KtuneExtensions.GridDependencyWait, its kernel waiting first, written to
/// `dir`; returns the document's path.
std::string waiting_example(const TempDir& dir) {
  const std::string folder = test::source_path("examples/custom_template/");
  auto doc = nlohmann::json::parse(test::read_text(folder + "transpose.T1.json"));
  doc["KtuneExtensions"]["GridDependencyWait"] = true;
  std::string kernel = test::read_text(folder + "transpose.cu");
  const std::string body_start = "  const int c0 = blockIdx.x * block_size_x;";
  kernel.insert(kernel.find(body_start), "#if __CUDA_ARCH__ >= 900\n"
                                         "  asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");\n"
                                         "#endif\n");
  test::write_text(dir.file("transpose.cu"), kernel);
  test::write_text(dir.file("transpose_reference.cu"),
                   test::read_text(folder + "transpose_reference.cu"));
  test::write_text(dir.file("waiting.T1.json"), doc.dump(2));
  return dir.file("waiting.T1.json");
}

}  // namespace

TEST_CASE("cli: a user template that waits for the previous grid allows programmatic launch",
          "[cli][user_template]") {
  TempDir dir;
  auto r = run_ktune(dir, "tune --space " + waiting_example(dir) +
                              " --shape 1000x3000 --dry-run --programmatic-launch");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("waits for the previous grid: programmatic launch allowed") !=
        std::string::npos);
  auto compiled = run_ktune(dir, "compile --space " + waiting_example(dir) + " --samples 3");
  INFO(compiled.output);
  CHECK(compiled.status == 0);
}

TEST_CASE("cli: a GPU tune of a user template that waits, launched programmatically",
          "[cli][user_template][gpu]") {
  KTUNE_REQUIRE_GPU();
  TempDir dir;
  const std::string db = dir.file("custom.db");
  auto r = run_ktune(dir, "tune --space " + waiting_example(dir) +
                              " --shape 2048x3000 --budget 12 --seed 3 --progress 0 "
                              "--programmatic-launch --db " + db);
  INFO(r.output);
  REQUIRE(r.status == 0);
  TuningLog log(db, LogMode::read_only);
  std::size_t ok = 0;
  for (const auto& rec : log.records()) {
    INFO(rec.config_text << ": " << rec.trial.message);
    CHECK(rec.trial.status != Status::wrong_result);
    CHECK(rec.trial.status != Status::compile_error);
    if (!rec.trial.ok()) continue;
    ++ok;
    CHECK(rec.trial.launch == LaunchForm::programmatic);
  }
  CHECK(ok >= 8);
}
