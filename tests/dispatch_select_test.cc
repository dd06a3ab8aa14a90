// Dispatcher selection rules on a machine without a GPU: exact record, nearest tuned shape
// (log2 distance, attributes must match, can_implement respected), another device of the same
// compute capability (flagged), the default, and hostile logs whose configs are not in the
// template's space.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <fstream>
#include <thread>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "ktune/build.h"
#include "ktune/dispatch.h"
#include "ktune/error.h"
#include "ktune/template.h"
#include "log_fixtures.h"
#include "shape_distance.h"

using namespace ktune;

namespace {

/// A tiling template: tiles BM x BN must divide M x N. The default tile and one more
/// constraint can be chosen, for the dispatcher's last-resort rules.
class TileTemplate final : public KernelTemplate {
 public:
  explicit TileTemplate(Value default_tile = 16, std::string extra_constraint = "True")
      : default_tile_(default_tile), extra_constraint_(std::move(extra_constraint)) {}
  std::string name() const override { return "dispatch_tile_test"; }
  std::string op() const override { return "tile"; }
  std::string description() const override { return "dispatcher test template"; }
  const std::string& source() const override {
    static const std::string text = "extern \"C\" __global__ void tile() {}";
    return text;
  }
  std::vector<std::string> dim_names() const override { return {"M", "N"}; }
  std::map<std::string, std::vector<std::string>> attr_domains() const override {
    return {{"dtype", {"f32", "f16"}}};
  }
  Problem example_problem() const override { return problem(1024, 1024); }
  void check_problem(const Problem&) const override {}
  SearchSpace space(const Problem& p, const Device&) const override {
    std::vector<Value> bm;  // with shape_domains, no tile taller than the problem
    for (Value v : {16, 32, 64, 128})
      if (!shape_domains || v <= std::max<Value>(16, p.dim("M"))) bm.push_back(v);
    return SearchSpace::Builder()
        .param("BM", bm, default_tile_)
        .param("BN", {16, 32, 64}, default_tile_)
        .param("SPLIT", {1, 2, 4}, 1)
        .constraint("BM * BN <= 4096")
        .constraint(extra_constraint_)
        .build();
  }
  bool can_implement(const Problem& p, const Config& c, std::string* why) const override {
    bool ok = p.dim("M") % c["BM"] == 0 && p.dim("N") % c["BN"] == 0;
    if (!ok && why) *why = "tiles do not divide the shape";
    return ok;
  }
  /// One kernel, which waits for the previous grid unless `plain_kernels` (as GEMM's do not).
  LaunchPlan launch(const Problem&, const Config&, const Device&) const override {
    LaunchStep step;
    step.entry = "tile";
    step.grid_dependency_wait = !plain_kernels;
    return {{step}, {}};
  }
  std::unique_ptr<Workload> workload(const Problem&) const override { return nullptr; }

  static Problem problem(std::int64_t m, std::int64_t n, const std::string& dtype = "f32") {
    return Problem{"tile", {{"M", m}, {"N", n}}, {{"dtype", dtype}}};
  }

  /// BM's domain depends on the problem (tiles up to M).
  bool shape_domains = false;
  /// Its kernel does not wait for the previous grid: never launched programmatically.
  bool plain_kernels = false;

 private:
  Value default_tile_;
  std::string extra_constraint_;
};

const TileTemplate kTile;

TrialRecord tile_record(std::int64_t m, std::int64_t n, const std::string& config, double ms,
                        const Device& device = test::test_device(),
                        const std::string& dtype = "f32") {
  auto r = test::make_record("BM=16,BN=16,SPLIT=1", ms, Status::ok, "run-t",
                             TileTemplate::problem(m, n, dtype).key(), kTile.name(), device);
  r.config_text = config;  // verbatim, hostile text included
  r.trial.config = Config();
  return r;
}

/// A log tuned for 1024^2 and 4096^2 on the H200.
/// A log of four honest records, then `extra` as a hand-edited log could hold them (config
/// texts ktune never writes go in through SQL: test::append_edited).
std::string tuned_log(const test::TempDir& dir, std::vector<TrialRecord> extra = {}) {
  auto path = dir.file("tuned.db");
  {
    TuningLog log(path);
    log.append_batch({
        tile_record(1024, 1024, "BM=128,BN=32,SPLIT=2", 0.5),
        tile_record(1024, 1024, "BM=64,BN=64,SPLIT=1", 0.8),
        tile_record(4096, 4096, "BM=64,BN=64,SPLIT=4", 1.0),
        tile_record(4096, 4096, "BM=32,BN=32,SPLIT=1", 1.5),
    });
  }
  for (const auto& r : extra) test::append_edited(path, r);
  return path;
}

}  // namespace

TEST_CASE("shape_distance is Euclidean over log2 dims and needs equal attributes", "[dispatch]") {
  auto a = TileTemplate::problem(1024, 1024), b = TileTemplate::problem(4096, 256);
  REQUIRE(shape_distance(a, b));
  CHECK(*shape_distance(a, b) == Approx(std::sqrt(8.0)));
  CHECK(*shape_distance(a, a) == 0.0);
  // One octave up and one down are exactly equal (rounded), so ties go to the problem key.
  CHECK(*shape_distance(TileTemplate::problem(20, 20), TileTemplate::problem(10, 10)) ==
        *shape_distance(TileTemplate::problem(20, 20), TileTemplate::problem(40, 40)));
  CHECK_FALSE(shape_distance(a, TileTemplate::problem(1024, 1024, "f16")));
  Problem other_dims{"tile", {{"N", 1024}, {"M", 1024}}, {{"dtype", "f32"}}};
  CHECK_FALSE(shape_distance(a, other_dims));
}

TEST_CASE("Dispatcher picks the exact record of this problem and device", "[dispatch]") {
  test::TempDir dir;
  Dispatcher d(tuned_log(dir));
  CHECK(d.indexed_records() == 4);
  auto s = d.select(kTile, TileTemplate::problem(1024, 1024), test::test_device());
  CHECK(s.reason == SelectionReason::exact);
  CHECK(s.config.str() == "BM=128,BN=32,SPLIT=2");
  CHECK(s.median_ms == 0.5);
  CHECK_FALSE(s.other_device());
  CHECK_THAT(s.explanation, Catch::Contains("record #1"));
  auto again = d.select(kTile, TileTemplate::problem(1024, 1024), test::test_device());
  CHECK(again.config == s.config);  // memoized
}

TEST_CASE("Dispatcher never selects a config that failed any of its trials", "[dispatch]") {
  test::TempDir dir;
  TrialRecord wrong = tile_record(1024, 1024, "BM=128,BN=32,SPLIT=2", 0.5);
  wrong.trial.status = Status::wrong_result;  // the fastest config, wrong when measured again
  const std::string db = tuned_log(dir, {wrong});
  const std::string jsonl = dir.file("all.jsonl");
  {
    TuningLog log(db, LogMode::read_only);
    export_file(log, jsonl, LogFormat::jsonl);
  }
  for (const std::string& path : {db, jsonl}) {
    INFO(path);
    Dispatcher d(path);
    CHECK(d.select(kTile, TileTemplate::problem(1024, 1024), test::test_device()).config.str() ==
          "BM=64,BN=64,SPLIT=1");
  }
}

TEST_CASE("Dispatcher remembers a bounded number of selections, with the same answers",
          "[dispatch]") {
  // A program whose shapes keep changing (batch or sequence lengths) must not grow forever.
  test::TempDir dir;
  Dispatcher d(tuned_log(dir));
  const auto first = d.select(kTile, TileTemplate::problem(1024, 1024), test::test_device());
  const std::size_t n = Dispatcher::kRememberedSelections + 1000;
  for (std::size_t i = 0; i < n; ++i) {
    (void)d.select(kTile, TileTemplate::problem(64 * (1 + static_cast<std::int64_t>(i)), 1024), test::test_device());
    REQUIRE(d.remembered_selections() <= Dispatcher::kRememberedSelections);
  }
  // Full, it drops an eighth, not everything (a working set just past the bound still hits).
  CHECK(d.remembered_selections() >= Dispatcher::kRememberedSelections * 7 / 8);
  const auto again = d.select(kTile, TileTemplate::problem(1024, 1024), test::test_device());
  CHECK(again.config == first.config);  // selected again after the memo started over: the same
  CHECK(again.reason == first.reason);
}

TEST_CASE("Dispatcher: shapes equally far (2x up, 2x down) tie by problem key, not rounding",
          "[dispatch]") {
  test::TempDir dir;
  const std::string db = dir.file("tie.db");
  {
    TuningLog log(db);
    // log2 distances 1 and 1.0000000000000018 in floating point; the key decides.
    log.append(test::make_record("VEC=4,THREADS=256,ITEMS=1,GRID_STRIDE=0", 0.1, Status::ok, "run-a",
                                 "copy|N=30720|dtype=f32", "copy"));
    log.append(test::make_record("VEC=2,THREADS=128,ITEMS=2,GRID_STRIDE=0", 0.1, Status::ok, "run-a",
                                 "copy|N=122880|dtype=f32", "copy"));
  }
  Dispatcher d(db);
  auto copy = find_template("copy");
  const auto s = d.select("copy", make_problem(*copy, "61440", {}), test::test_device());
  CHECK(s.reason == SelectionReason::nearest_shape);
  CHECK(s.source_problem == "copy|N=122880|dtype=f32");  // sorts before copy|N=30720|...
  CHECK(s.distance == 1.0);
}

TEST_CASE("Dispatcher falls back to the nearest tuned shape that can implement the problem",
          "[dispatch]") {
  test::TempDir dir;
  Dispatcher d(tuned_log(dir));
  const Device h200 = test::test_device();

  auto near_big = d.select(kTile, TileTemplate::problem(3072, 3072), h200);
  CHECK(near_big.reason == SelectionReason::nearest_shape);
  CHECK(near_big.source_problem == TileTemplate::problem(4096, 4096).key());
  CHECK(near_big.config.str() == "BM=64,BN=64,SPLIT=4");
  CHECK(near_big.distance == Approx(std::sqrt(2.0) * std::log2(4096.0 / 3072.0)));

  // 4000 is divisible by 32 but not by 64: the best of 4096^2 is skipped, the next one fits.
  auto second = d.select(kTile, TileTemplate::problem(4000, 4000), h200);
  CHECK(second.reason == SelectionReason::nearest_shape);
  CHECK(second.config.str() == "BM=32,BN=32,SPLIT=1");

  // 1040 = 16 * 65: no tuned config divides it, so the template default is used.
  auto fallback = d.select(kTile, TileTemplate::problem(1040, 1040), h200);
  CHECK(fallback.reason == SelectionReason::default_config);
  CHECK(fallback.config.str() == "BM=16,BN=16,SPLIT=1");

  // Attributes must match exactly: f16 was never tuned.
  auto f16 = d.select(kTile, TileTemplate::problem(1024, 1024, "f16"), h200);
  CHECK(f16.reason == SelectionReason::default_config);

  DispatcherOptions exact_only;
  exact_only.allow_nearest_shape = false;
  Dispatcher strict_shapes(tuned_log(dir), exact_only);
  CHECK(strict_shapes.select(kTile, TileTemplate::problem(3072, 3072), h200).reason ==
        SelectionReason::default_config);
}

TEST_CASE("Dispatcher uses another device of the same compute capability, flagged",
          "[dispatch]") {
  test::TempDir dir;
  auto path = tuned_log(dir);
  const Device h100 = test::test_device("NVIDIA H100 80GB HBM3", 132, 9, 0);
  const Device a100 = test::test_device("NVIDIA A100-SXM4-80GB", 108, 8, 0);
  Dispatcher d(path);
  auto s = d.select(kTile, TileTemplate::problem(1024, 1024), h100);
  CHECK(s.reason == SelectionReason::same_arch);
  CHECK(s.other_device());
  CHECK(s.source_device == device_key_of(test::test_device()));
  CHECK(s.config.str() == "BM=128,BN=32,SPLIT=2");
  CHECK_THAT(s.explanation, Catch::Contains("another device"));
  CHECK(d.select(kTile, TileTemplate::problem(1024, 1024), a100).reason ==
        SelectionReason::default_config);

  DispatcherOptions no_other;
  no_other.allow_same_arch = false;
  Dispatcher own_device_only(path, no_other);
  CHECK(own_device_only.select(kTile, TileTemplate::problem(1024, 1024), h100).reason ==
        SelectionReason::default_config);
}

TEST_CASE("Among other devices of the compute capability, the SM count decides, not record order",
          "[dispatch]") {
  // One problem tuned on two other sm_90 GPUs with different winners; a program on an H200
  // NVL (132 SMs) takes the 132-SM device's config whichever log was imported first.
  test::TempDir dir;
  const Device h100_pcie = test::test_device("NVIDIA H100 PCIe", 114, 9, 0);
  const Device h100_sxm = test::test_device("NVIDIA H100 80GB HBM3", 132, 9, 0);
  const Device nvl = test::test_device("NVIDIA H200 NVL", 132, 9, 0);
  const TrialRecord on_pcie = tile_record(1024, 1024, "BM=32,BN=32,SPLIT=1", 0.4, h100_pcie);
  const TrialRecord on_sxm = tile_record(1024, 1024, "BM=64,BN=64,SPLIT=1", 0.6, h100_sxm);
  for (const bool sxm_first : {true, false}) {
    INFO("SXM records first: " << sxm_first);
    const std::string path = dir.file(sxm_first ? "ab.db" : "ba.db");
    {
      TuningLog log(path);
      log.append_batch(sxm_first ? std::vector<TrialRecord>{on_sxm, on_pcie}
                                 : std::vector<TrialRecord>{on_pcie, on_sxm});
    }
    const auto s = Dispatcher(path).select(kTile, TileTemplate::problem(1024, 1024), nvl);
    CHECK(s.reason == SelectionReason::same_arch);
    CHECK(s.source_device == device_key_of(h100_sxm));
    CHECK(s.config.str() == "BM=64,BN=64,SPLIT=1");
    // A 114-SM program takes the PCIe card's config, also whichever came first.
    const Device pcie_like = test::test_device("NVIDIA H800 PCIe", 114, 9, 0);
    CHECK(Dispatcher(path).select(kTile, TileTemplate::problem(1024, 1024), pcie_like).source_device ==
          device_key_of(h100_pcie));
  }
}

TEST_CASE("Hostile log records are rejected by name before anything is compiled",
          "[dispatch][security]") {
  test::TempDir dir;
  // Faster than every honest record, and each outside the space in its own way.
  auto path = tuned_log(dir, {
                                 tile_record(1024, 1024, "BM=256,BN=32,SPLIT=1", 0.1),
                                 tile_record(1024, 1024, "BM=128,BN=32,SPLIT=1,EVIL=1", 0.2),
                                 tile_record(1024, 1024, "BM=1e3,BN=32,SPLIT=1", 0.3),
                                 tile_record(1024, 1024, "BM=16,BN=16,SPLIT=1;-DX=1", 0.4),
                             });
  const auto problem = TileTemplate::problem(1024, 1024);
  Dispatcher d(path);
  auto s = d.select(kTile, problem, test::test_device());
  CHECK(s.reason == SelectionReason::exact);
  CHECK(s.config.str() == "BM=128,BN=32,SPLIT=2");  // the honest best
  auto rejected = d.rejections();
  REQUIRE(rejected.size() == 4);
  // #7 and #8 do not parse: refused as the log is read; #5 and #6 when the task is consulted.
  auto rejected_once = [&](const std::string& record, const std::string& what) {
    return std::count_if(rejected.begin(), rejected.end(), [&](const std::string& r) {
             return r.find(record + " ") != std::string::npos && r.find(what) != std::string::npos;
           }) == 1;
  };
  CHECK(rejected_once("record #5", "BM=256"));
  CHECK(rejected_once("record #6", "EVIL"));
  CHECK(rejected_once("record #7", "1e3"));
  CHECK(rejected_once("record #8", "-DX=1"));
  // A record carrying megabytes of text is named in a message of bounded length, cut between
  // UTF-8 characters (each phase of the two-byte characters against the cut).
  for (const std::size_t shift : {0, 1}) {
    test::TempDir huge_dir;
    std::string long_name = std::string(shift, 'P');
    for (int i = 0; i < 4000; ++i) long_name += "\xC3\xA9";  // é
    long_name += std::string(2'000'000, 'P');
    const auto huge = tuned_log(huge_dir, {tile_record(1024, 1024, "BM=64,BN=32,SPLIT=1," + long_name + "=1", 0.1)});
    Dispatcher flooded(huge);
    (void)flooded.select(kTile, problem, test::test_device());
    REQUIRE(flooded.rejections().size() == 1);
    CHECK(flooded.rejections()[0].size() < 1100);
    CHECK_THAT(flooded.rejections()[0], Catch::Contains("characters)") && Catch::Contains("record #"));
    CHECK_NOTHROW(nlohmann::json(flooded.rejections()[0]).dump());
  }

  DispatcherOptions strict;
  strict.strict = true;
  try {
    Dispatcher refusing(path, strict);
    refusing.select(kTile, problem, test::test_device());
    FAIL("a hostile record was accepted");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::invalid_argument);
    CHECK_THAT(e.what(), Catch::Contains("record #7") && Catch::Contains("rejected"));
  }
  // Strict, a record outside the space is refused even when it ranks below the honest best
  // (a deployment that selects once at start-up learns of it then).
  test::TempDir slow_dir;
  const auto slow = tuned_log(slow_dir, {tile_record(1024, 1024, "BM=256,BN=32,SPLIT=1", 9.0)});
  CHECK(Dispatcher(slow).select(kTile, problem, test::test_device()).config.str() ==
        "BM=128,BN=32,SPLIT=2");
  try {
    Dispatcher refusing(slow, strict);
    refusing.select(kTile, problem, test::test_device());
    FAIL("a hostile record ranked below the best was accepted");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("record #5") && Catch::Contains("BM=256"));
  }
}

TEST_CASE("Dispatcher reads JSON-lines exports and names hostile lines", "[dispatch][security]") {
  test::TempDir dir;
  TuningLog log(tuned_log(dir));
  auto jsonl = dir.file("export.jsonl");
  export_file(log, jsonl, LogFormat::jsonl);
  {  // append a hand-edited line with a value outside the domain, faster than the rest
    std::ifstream in(jsonl);
    std::string header, first;
    std::getline(in, header);
    std::getline(in, first);
    auto pos = first.find("BM=128,BN=32,SPLIT=2");
    REQUIRE(pos != std::string::npos);
    first.replace(pos, 20, "BM=999,BN=32,SPLIT=2");
    auto params = first.find("\"BM\":128");
    REQUIRE(params != std::string::npos);
    first.replace(params, 8, "\"BM\":999");
    auto median = first.find("\"median_ms\":0.5");
    REQUIRE(median != std::string::npos);
    first.replace(median, 15, "\"median_ms\":0.01");
    std::ofstream out(jsonl, std::ios::app);
    out << first << "\n";
    // Config texts the strict parser refuses, as an SQLite log can hold them: rejected by
    // line like the rest, not a reason to refuse the whole file.
    for (const std::string text : {"BM=1e3,BN=32,SPLIT=2", "BM=16,BN=16,SPLIT=1;-DX=1"}) {
      std::string line = first;
      line.replace(line.find("BM=999,BN=32,SPLIT=2"), 20, text);
      out << line << "\n";
    }
  }
  Dispatcher d(jsonl);
  auto s = d.select(kTile, TileTemplate::problem(1024, 1024), test::test_device());
  CHECK(s.config.str() == "BM=128,BN=32,SPLIT=2");
  const auto rejected = d.rejections();
  REQUIRE(rejected.size() == 3);
  // Lines 7 and 8 are refused as the file is read (their config texts do not parse), line 6
  // when its config is checked against the space: each once, by line.
  auto rejected_line = [&](const std::string& line, const std::string& what) {
    return std::count_if(rejected.begin(), rejected.end(), [&](const std::string& r) {
             return r.find(jsonl + ":" + line + " ") != std::string::npos &&
                    r.find(what) != std::string::npos;
           }) == 1;
  };
  CHECK(rejected_line("6", "999"));
  CHECK(rejected_line("7", "1e3"));
  CHECK(rejected_line("8", "-DX=1"));
  // An import is stricter: the same file is malformed input, refused by line and field.
  TuningLog other(dir.file("other.db"));
  try {
    import_file(other, jsonl);
    FAIL("a config that does not parse was imported");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::parse_error);
    CHECK_THAT(e.what(), Catch::Contains(jsonl + ":7") && Catch::Contains("config"));
  }
  CHECK(other.count({}) == 0);
}

TEST_CASE("Dispatcher reports unknown templates and unreadable logs", "[dispatch]") {
  test::TempDir dir;
  CHECK_THROWS_AS(Dispatcher(dir.file("missing.db")), Error);
  // Neither SQLite nor JSON lines: the reader names the file, the line and what it expected.
  std::ofstream(dir.file("notes.txt")) << "best config: BM=128\n";
  CHECK_THROWS_WITH(Dispatcher(dir.file("notes.txt")),
                    Catch::Contains("notes.txt:1") && Catch::Contains("not valid JSON"));
  std::ofstream(dir.file("cache.json")) << "{\"format\": \"kernel-tuner-cache\"}\n";
  CHECK_THROWS_WITH(Dispatcher(dir.file("cache.json")),
                    Catch::Contains("cache.json:1") && Catch::Contains("ktune-trials"));
  Dispatcher d(tuned_log(dir));
  try {
    d.select("no_such_template", TileTemplate::problem(8, 8), test::test_device());
    FAIL("selected for an unknown template");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::unknown_name);
  }
}

TEST_CASE("Dispatcher prefers records of the template's current source, and says when not",
          "[dispatch]") {
  test::TempDir dir;
  {  // every record of tuned_log was measured with another source (make_record's hash)
    Dispatcher d(tuned_log(dir));
    auto s = d.select(kTile, TileTemplate::problem(1024, 1024), test::test_device());
    CHECK(s.config.str() == "BM=128,BN=32,SPLIT=2");
    CHECK(s.older_source);
    CHECK_THAT(s.explanation, Catch::Contains("older source"));
  }
  test::TempDir dir2;
  auto current = tile_record(1024, 1024, "BM=64,BN=64,SPLIT=1", 0.9);  // slower, but current
  current.source_hash = Builder::source_hash(kTile.source());
  const std::string path = tuned_log(dir2, {current});
  Dispatcher d(path);
  auto s = d.select(kTile, TileTemplate::problem(1024, 1024), test::test_device());
  CHECK(s.config.str() == "BM=64,BN=64,SPLIT=1");
  CHECK(s.median_ms == 0.9);
  CHECK_FALSE(s.older_source);
  // The log's best() answers the same when asked to prefer the current source.
  TuningLog log(path, LogMode::read_only);
  const auto dk = device_key_of(test::test_device());
  const auto key = TileTemplate::problem(1024, 1024).key();
  CHECK(log.best(kTile.name(), key, dk)->config_text == "BM=128,BN=32,SPLIT=2");
  CHECK(log.best(kTile.name(), key, dk, current.source_hash)->config_text == "BM=64,BN=64,SPLIT=1");
  // Within the nearest-shape rule too: 2048^2 is nearer 1024^2 (older source only) than
  // 8192^2, but 8192^2 has a record of the current source, which comes first.
  test::TempDir dir3;
  auto far = tile_record(8192, 8192, "BM=32,BN=32,SPLIT=1", 2.0);
  far.source_hash = current.source_hash;
  Dispatcher near_far(tuned_log(dir3, {far}));
  auto n = near_far.select(kTile, TileTemplate::problem(2048, 2048), test::test_device());
  CHECK(n.reason == SelectionReason::nearest_shape);
  CHECK(n.source_problem == TileTemplate::problem(8192, 8192).key());
  CHECK_FALSE(n.older_source);
  // But the rules keep their order: the exact problem's older-source record comes before a
  // current-source record of another shape.
  auto exact_old = near_far.select(kTile, TileTemplate::problem(1024, 1024), test::test_device());
  CHECK(exact_old.reason == SelectionReason::exact);
  CHECK(exact_old.config.str() == "BM=128,BN=32,SPLIT=2");
  CHECK(exact_old.older_source);
}

TEST_CASE("Dispatcher: a failure measured with an older source does not rule out the current one",
          "[dispatch]") {
  // "A config with a failed trial of the same template source is never used": BM=128,BN=32
  // failed with an older source and is the fastest, ok, with the current one.
  test::TempDir dir;
  const std::string current = Builder::source_hash(kTile.source());
  TrialRecord old_wrong = tile_record(1024, 1024, "BM=128,BN=32,SPLIT=2", 0.4);
  old_wrong.trial.status = Status::wrong_result;
  TrialRecord now_ok = tile_record(1024, 1024, "BM=128,BN=32,SPLIT=2", 0.5);
  now_ok.source_hash = current;
  TrialRecord slower = tile_record(1024, 1024, "BM=64,BN=64,SPLIT=1", 0.8);
  slower.source_hash = current;
  const std::string path = tuned_log(dir, {old_wrong, now_ok, slower});
  Dispatcher d(path);
  auto s = d.select(kTile, TileTemplate::problem(1024, 1024), test::test_device());
  CHECK(s.config.str() == "BM=128,BN=32,SPLIT=2");
  CHECK_FALSE(s.older_source);
  TuningLog log(path, LogMode::read_only);
  CHECK(log.best(kTile.name(), TileTemplate::problem(1024, 1024).key(),
                 device_key_of(test::test_device()), current)
            ->config_text == "BM=128,BN=32,SPLIT=2");
}

TEST_CASE("Dispatcher judges a re-measured config by its typical trial, as the tuner does",
          "[dispatch]") {
  test::TempDir dir;
  std::vector<TrialRecord> extra;  // for 2048^2: one lucky trial of A, then its final rounds
  for (double ms : {0.5, 0.7, 0.7, 0.7}) extra.push_back(tile_record(2048, 2048, "BM=64,BN=64,SPLIT=1", ms));
  for (double ms : {0.62, 0.6, 0.61, 0.63}) extra.push_back(tile_record(2048, 2048, "BM=32,BN=32,SPLIT=1", ms));
  Dispatcher d(tuned_log(dir, extra));
  auto s = d.select(kTile, TileTemplate::problem(2048, 2048), test::test_device());
  CHECK(s.reason == SelectionReason::exact);
  CHECK(s.config.str() == "BM=32,BN=32,SPLIT=1");
  CHECK(s.median_ms == 0.61);
  // The record named is the typical trial itself (records 1-4 are the base log, 5-8 A's).
  CHECK_THAT(s.explanation, Catch::Contains("record #11") && Catch::Contains("0.61"));
}

TEST_CASE("Dispatcher keeps one task per device: each device's exact record is its own",
          "[dispatch]") {
  test::TempDir dir;
  const Device h100 = test::test_device("NVIDIA H100 80GB HBM3", 132, 9, 0);
  // The same problem tuned on a second device, where another config is faster.
  auto path = tuned_log(dir, {tile_record(1024, 1024, "BM=64,BN=64,SPLIT=1", 0.1, h100),
                              tile_record(1024, 1024, "BM=128,BN=32,SPLIT=2", 0.3, h100)});
  Dispatcher d(path);
  auto own = d.select(kTile, TileTemplate::problem(1024, 1024), test::test_device());
  CHECK(own.reason == SelectionReason::exact);
  CHECK(own.config.str() == "BM=128,BN=32,SPLIT=2");
  CHECK(own.median_ms == 0.5);
  auto other = d.select(kTile, TileTemplate::problem(1024, 1024), h100);
  CHECK(other.reason == SelectionReason::exact);
  CHECK(other.config.str() == "BM=64,BN=64,SPLIT=1");
  CHECK(other.source_device == device_key_of(h100));
}

TEST_CASE("Dispatcher rejects a JSON-lines record with an impossible time, however fast",
          "[dispatch][security]") {
  test::TempDir dir;
  TuningLog log(tuned_log(dir));
  const std::string jsonl = dir.file("export.jsonl");
  export_file(log, jsonl, LogFormat::jsonl);
  {  // an import refuses such a line; a deployment reading the file directly must too
    std::ifstream in(jsonl);
    std::string header, first;
    std::getline(in, header);
    std::getline(in, first);
    const auto at = first.find("\"median_ms\":0.5");
    REQUIRE(at != std::string::npos);
    std::string line = first;
    line.replace(at, 15, "\"median_ms\":0.0");
    line.replace(line.find("BM=128,BN=32,SPLIT=2"), 20, "BM=64,BN=16,SPLIT=1");
    line.replace(line.find("\"BM\":128"), 8, "\"BM\":64");
    line.replace(line.find("\"BN\":32"), 7, "\"BN\":16");
    line.replace(line.find("\"SPLIT\":2"), 9, "\"SPLIT\":1");
    std::ofstream(jsonl, std::ios::app) << line << "\n";
  }
  Dispatcher d(jsonl);
  auto s = d.select(kTile, TileTemplate::problem(1024, 1024), test::test_device());
  CHECK(s.config.str() == "BM=128,BN=32,SPLIT=2");
  REQUIRE(d.rejections().size() == 1);
  CHECK_THAT(d.rejections()[0], Catch::Contains(jsonl + ":6") && Catch::Contains("finite time"));
}

TEST_CASE("Dispatcher never selects a failed trial, however fast its recorded time", "[dispatch]") {
  test::TempDir dir;
  auto failed = tile_record(1024, 1024, "BM=64,BN=16,SPLIT=1", 0.01);
  failed.trial.status = Status::wrong_result;
  TuningLog log(tuned_log(dir, {failed}));
  const std::string jsonl = dir.file("with_failed.jsonl");  // a JSON-lines file holds every status
  export_file(log, jsonl, LogFormat::jsonl);
  for (const std::string& path : {log.path(), jsonl}) {
    Dispatcher d(path);
    CHECK(d.indexed_records() == 4);
    auto s = d.select(kTile, TileTemplate::problem(1024, 1024), test::test_device());
    CHECK(s.config.str() == "BM=128,BN=32,SPLIT=2");
  }
}

TEST_CASE("Dispatcher skips a logged config that breaks a constraint of the space", "[dispatch]") {
  test::TempDir dir;
  // Every value in its domain, but BM * BN = 8192 > 4096; and the fastest record.
  Dispatcher d(tuned_log(dir, {tile_record(1024, 1024, "BM=128,BN=64,SPLIT=1", 0.05)}));
  auto s = d.select(kTile, TileTemplate::problem(1024, 1024), test::test_device());
  CHECK(s.reason == SelectionReason::exact);
  CHECK(s.config.str() == "BM=128,BN=32,SPLIT=2");
}

TEST_CASE("Dispatcher's same-architecture rule needs the same minor version too", "[dispatch]") {
  test::TempDir dir;
  Dispatcher d(tuned_log(dir));  // tuned on a 9.0 device
  const Device other_minor = test::test_device("A 9.1 device", 132, 9, 1);
  CHECK(d.select(kTile, TileTemplate::problem(1024, 1024), other_minor).reason ==
        SelectionReason::default_config);
}

TEST_CASE("Dispatcher breaks distance ties by problem key, not by the log's order", "[dispatch]") {
  test::TempDir dir;
  // 512 x 2048 and 2048 x 512 lie at the same log2 distance from 1024^2; the first in key order
  // ("M=2048..." before "M=512...") wins whichever the log holds first.
  auto path = dir.file("tie.db");
  TuningLog(path).append_batch({tile_record(512, 2048, "BM=32,BN=64,SPLIT=1", 0.4),
                                tile_record(2048, 512, "BM=64,BN=32,SPLIT=2", 0.6)});
  Dispatcher d(path);
  auto s = d.select(kTile, TileTemplate::problem(1024, 1024), test::test_device());
  CHECK(s.reason == SelectionReason::nearest_shape);
  CHECK(s.source_problem == TileTemplate::problem(2048, 512).key());
  CHECK(s.config.str() == "BM=64,BN=32,SPLIT=2");
}

TEST_CASE("Dispatcher refuses a problem no config can implement instead of returning the default",
          "[dispatch]") {
  test::TempDir dir;
  Dispatcher d(tuned_log(dir));
  // 1000 is not a multiple of the smallest tile (16): neither the default nor any config fits.
  try {
    d.select(kTile, TileTemplate::problem(1000, 1000), test::test_device());
    FAIL("a config that cannot implement the problem was selected");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::unsupported);
    CHECK_THAT(e.what(), Catch::Contains("dispatch_tile_test") && Catch::Contains("points of its space"));
  }
}

TEST_CASE("Dispatcher's last resort: the first valid config that can implement the problem",
          "[dispatch]") {
  test::TempDir dir;
  // The default tile 64 x 64 cannot divide 48 x 48; of the 16 x 16 tiles (the only ones that
  // can), SPLIT = 1 breaks the extra constraint: the first valid one is SPLIT = 2.
  const TileTemplate big_default(64, "BM >= 32 or SPLIT > 1");
  Dispatcher d(tuned_log(dir));
  auto s = d.select(big_default, TileTemplate::problem(48, 48), test::test_device());
  CHECK(s.reason == SelectionReason::default_config);
  CHECK(s.config.str() == "BM=16,BN=16,SPLIT=2");
  CHECK_THAT(s.explanation, Catch::Contains("first valid config"));
}

TEST_CASE("Dispatcher checks a nearest-shape record against the space of the problem it was tuned for",
          "[dispatch][security]") {
  test::TempDir dir;
  TileTemplate by_shape;
  by_shape.shape_domains = true;
  // BM = 128 is outside the space of 64 x 64 (tiles up to M), though inside that of 128 x 128:
  // a record claiming it for 64 x 64 is hostile or stale, not a tuned config to reuse.
  auto path = dir.file("shapes.db");
  TuningLog(path).append_batch({tile_record(64, 64, "BM=128,BN=64,SPLIT=1", 0.1)});
  Dispatcher d(path);
  auto s = d.select(by_shape, TileTemplate::problem(128, 128), test::test_device());
  CHECK(s.reason == SelectionReason::default_config);
  REQUIRE(d.rejections().size() == 1);
  CHECK_THAT(d.rejections()[0], Catch::Contains("BM=128"));
}

TEST_CASE("Dispatcher answers many threads at once as it answers one", "[dispatch][concurrency]") {
  test::TempDir dir;
  // Hostile records too, so that threads also record rejections at the same time.
  const auto path = tuned_log(dir, {tile_record(1024, 1024, "BM=256,BN=32,SPLIT=1", 0.1),
                                    tile_record(4096, 4096, "BM=64,BN=64,SPLIT=1,EVIL=1", 0.2)});
  std::vector<Problem> problems;
  for (std::int64_t m : {1024, 2048, 3072, 4000, 4096, 1040})
    for (std::int64_t n : {1024, 4096, 1040}) problems.push_back(TileTemplate::problem(m, n));
  std::vector<std::string> expected;
  {
    Dispatcher alone(path);
    for (const auto& p : problems)
      expected.push_back(alone.select(kTile, p, test::test_device()).config.str());
  }
  Dispatcher shared(path);
  std::vector<std::vector<std::string>> answers(8);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < answers.size(); ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round)
        for (std::size_t i = 0; i < problems.size(); ++i) {
          const std::size_t k = (i + t * 5 + static_cast<std::size_t>(round)) % problems.size();
          answers[t].push_back(std::to_string(k) + ":" +
                               shared.select(kTile, problems[k], test::test_device()).config.str());
        }
    });
  for (auto& th : threads) th.join();
  for (const auto& list : answers) {
    REQUIRE(list.size() == 20 * problems.size());
    for (const auto& a : list) {
      const std::size_t k = std::stoul(a.substr(0, a.find(':')));
      CHECK(a.substr(a.find(':') + 1) == expected[k]);
    }
  }
  CHECK(shared.rejections().size() == 2);  // each hostile record named once
}

TEST_CASE("Dispatcher names a folder or a file of another format for what it is", "[dispatch]") {
  test::TempDir dir;
  CHECK_THROWS_WITH(Dispatcher(dir.path.string()), Catch::Contains("is a folder"));
  const std::string cache = std::string(KTUNE_DATASETS_DIR) + "/convolution_milo_A6000.json.gz";
  CHECK_THROWS_WITH(Dispatcher(cache),
                    Catch::Contains("is a Kernel Tuner cache") && Catch::Contains("import it first"));
  std::ofstream(dir.file("t4.json")) << R"({"schema_version": "1.0.0", "results": []})";
  CHECK_THROWS_WITH(Dispatcher(dir.file("t4.json")), Catch::Contains("is a T4 results file"));
}

TEST_CASE("Dispatcher reads a log through a pipe, as a process substitution passes it",
          "[dispatch]") {
  test::TempDir dir;
  const std::string db = tuned_log(dir), jsonl = dir.file("export.jsonl");
  {
    TuningLog log(db, LogMode::read_only);
    export_file(log, jsonl, LogFormat::jsonl);
  }
  // The temporary copies go where TMPDIR says, so that this test can see them gone.
  const std::string tmp = dir.file("tmp");
  std::filesystem::create_directories(tmp);
  const char* old_tmpdir = std::getenv("TMPDIR");
  const std::string saved = old_tmpdir ? old_tmpdir : "";
  ::setenv("TMPDIR", tmp.c_str(), 1);
  auto* old_sigpipe = std::signal(SIGPIPE, SIG_IGN);  // a reader that stops early: EPIPE, not death
  for (const std::string& file : {jsonl, db}) {
    INFO(file);
    std::ifstream in(file, std::ios::binary);
    const std::string content((std::istreambuf_iterator<char>(in)), {});
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    std::thread writer([&] {
      for (std::size_t done = 0; done < content.size();) {
        const ssize_t put = ::write(fds[1], content.data() + done, content.size() - done);
        if (put <= 0) break;
        done += static_cast<std::size_t>(put);
      }
      ::close(fds[1]);
    });
    std::optional<Dispatcher> d;
    try {
      d.emplace("/dev/fd/" + std::to_string(fds[0]));
    } catch (const Error& e) {
      FAIL_CHECK(e.what());
    }
    ::close(fds[0]);  // a writer still blocked (the reader gave up) gets EPIPE
    writer.join();
    if (!d) continue;
    CHECK(d->select(kTile, TileTemplate::problem(1024, 1024), test::test_device()).config.str() ==
          "BM=128,BN=32,SPLIT=2");
    CHECK(std::filesystem::is_empty(tmp));  // the copy, and an SQLite copy's -wal / -shm
  }
  std::signal(SIGPIPE, old_sigpipe);
  if (old_tmpdir) ::setenv("TMPDIR", saved.c_str(), 1); else ::unsetenv("TMPDIR");
}

// Edge cases from the mutation audit of session 33.
TEST_CASE("shape_distance counts dimensions below 1 as 1", "[dispatch]") {
  const Problem zero{"tile", {{"M", 0}, {"N", 4}}, {{"dtype", "f32"}}};
  const Problem one{"tile", {{"M", 1}, {"N", 4}}, {{"dtype", "f32"}}};
  const Problem four{"tile", {{"M", 4}, {"N", 4}}, {{"dtype", "f32"}}};
  CHECK(shape_distance(zero, one) == std::optional<double>(0.0));
  CHECK(shape_distance(zero, four) == std::optional<double>(2.0));
}

TEST_CASE("Dispatcher ranks a task by the trials timed the way it launches", "[dispatch]") {
  test::TempDir dir;
  auto timed = [](std::int64_t m, const std::string& config, double ms, LaunchForm launch) {
    TrialRecord r = tile_record(m, m, config, ms);
    r.trial.launch = launch;
    return r;
  };
  const std::string path = dir.file("ways.db");
  {
    TuningLog log(path);
    log.append_batch({
        // 1024^2 was tuned both ways: BM=128 is fast only when launched programmatically;
        // BM=64's plain time is 0.6 ms (its programmatic 0.45 ms must not stand for it), so
        // BM=32 (no recorded form: plain) wins plain launches.
        timed(1024, "BM=128,BN=32,SPLIT=2", 0.50, LaunchForm::programmatic),
        timed(1024, "BM=64,BN=64,SPLIT=1", 0.60, LaunchForm::stream),
        timed(1024, "BM=64,BN=64,SPLIT=1", 0.45, LaunchForm::programmatic_graph),
        timed(1024, "BM=32,BN=32,SPLIT=1", 0.55, LaunchForm::unknown),
        // 4096^2 was tuned only programmatically.
        timed(4096, "BM=64,BN=64,SPLIT=4", 1.00, LaunchForm::programmatic),
        timed(4096, "BM=32,BN=32,SPLIT=1", 1.50, LaunchForm::programmatic),
    });
  }
  Dispatcher plain(path);
  auto s = plain.select(kTile, TileTemplate::problem(1024, 1024), test::test_device());
  CHECK(s.reason == SelectionReason::exact);
  CHECK(s.config.str() == "BM=32,BN=32,SPLIT=1");
  CHECK(s.median_ms == 0.55);
  CHECK_FALSE(s.other_launch);
  CHECK_THAT(s.explanation, !Catch::Contains("programmatic"));
  // Timed only the other way: still usable, and said so.
  s = plain.select(kTile, TileTemplate::problem(4096, 4096), test::test_device());
  CHECK(s.config.str() == "BM=64,BN=64,SPLIT=4");
  CHECK(s.other_launch);
  CHECK_THAT(s.explanation,
             Catch::Contains("timed with programmatic launch, which this dispatcher does not use"));

  DispatcherOptions options;
  options.programmatic_launch = true;
  Dispatcher programmatic(path, options);
  s = programmatic.select(kTile, TileTemplate::problem(1024, 1024), test::test_device());
  CHECK(s.config.str() == "BM=64,BN=64,SPLIT=1");
  CHECK(s.median_ms == 0.45);
  CHECK_FALSE(s.other_launch);
  s = programmatic.select(kTile, TileTemplate::problem(4096, 4096), test::test_device());
  CHECK(s.config.str() == "BM=64,BN=64,SPLIT=4");
  CHECK_FALSE(s.other_launch);
  // `ktune best` and TuningLog::best name the same configs, each way.
  TuningLog log(path, LogMode::read_only);
  const std::string key = TileTemplate::problem(1024, 1024).key();
  const std::string device = device_key_of(test::test_device());
  CHECK(log.best(kTile.name(), key, device)->config_text == "BM=32,BN=32,SPLIT=1");
  CHECK(log.best(kTile.name(), key, device, "", {}, true)->trial.median_ms == 0.45);

  // A programmatic dispatcher launches a template whose kernels do not wait as usual: plain
  // trials are then its own way, and nothing is flagged.
  const std::string plain_path = dir.file("plain.db");
  {
    TuningLog plain_log(plain_path);
    plain_log.append_batch({timed(1024, "BM=64,BN=64,SPLIT=1", 0.60, LaunchForm::stream)});
  }
  TileTemplate gemm_like;
  gemm_like.plain_kernels = true;
  s = Dispatcher(plain_path, options).select(gemm_like, TileTemplate::problem(1024, 1024),
                                             test::test_device());
  CHECK(s.config.str() == "BM=64,BN=64,SPLIT=1");
  CHECK_FALSE(s.other_launch);
  s = Dispatcher(plain_path, options).select(kTile, TileTemplate::problem(1024, 1024),
                                             test::test_device());
  CHECK(s.other_launch);
  CHECK_THAT(s.explanation,
             Catch::Contains("timed without programmatic launch, which this dispatcher uses"));
}

TEST_CASE("Dispatcher remembers a selection per device limits, not per device key alone",
          "[dispatch]") {
  test::TempDir dir;
  const std::string db = dir.file("copy.db");
  auto copy = find_template("copy");
  const Problem problem = make_problem(*copy, "1048576", {{"dtype", "f32"}});
  const Device h200 = Device::h200();
  {
    TuningLog log(db);
    for (const auto& [config, ms] : {std::pair{"VEC=4,THREADS=1024,ITEMS=1,GRID_STRIDE=0", 0.1},
                                     std::pair{"VEC=4,THREADS=256,ITEMS=1,GRID_STRIDE=0", 0.2}}) {
      Trial t;
      t.config = copy->space(problem, h200).parse(config);
      t.status = Status::ok;
      t.times_ms = {ms};
      summarize_times(t);
      log.append(TrialRecord::make(*copy, problem, h200, t, "run"));
    }
  }
  // One key, two limits: a part that allows 512 threads a block cannot run the fastest config.
  Device small = h200;
  small.max_threads_per_block = 512;
  REQUIRE(small.key() == h200.key());
  Dispatcher d(db);
  CHECK(d.select("copy", problem, small).config.str().find("THREADS=256") != std::string::npos);
  CHECK(d.select("copy", problem, h200).config.str().find("THREADS=1024") != std::string::npos);
  CHECK(d.select("copy", problem, small).config.str().find("THREADS=256") != std::string::npos);
}
