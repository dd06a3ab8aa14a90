// Imports that do not hold their records: TuningLog::append_absent_streamed reads its source
// twice (checked first, inserted inside the transaction) and refuses a source that changed in
// between; import_file streams JSON lines that way, and reads standard input or a pipe through
// a temporary copy whose name never reaches a message.
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <thread>

#include <catch2/catch.hpp>

#include "cli_fixtures.h"
#include "jsonl_format.h"
#include "ktune/error.h"
#include "ktune/log.h"

using namespace ktune;
using test::make_record;
using test::TempDir;

namespace {

using Visit = std::function<void(const TrialRecord&)>;

/// A source that hands out `first` on its first read and `second` on every later one, and
/// counts its reads.
struct ChangingSource {
  std::vector<TrialRecord> first, second;
  int reads = 0;
  void operator()(const Visit& visit) {
    for (const auto& r : reads++ == 0 ? first : second) visit(r);
  }
};

std::size_t stream_into(TuningLog& log, ChangingSource& source,
                        std::vector<std::size_t>* positions = nullptr) {
  return log.append_absent_streamed(
      [&](const Visit& visit) { source(visit); }, "",
      [&](std::size_t position, const TrialRecord&) {
        if (positions) positions->push_back(position);
      });
}

/// The temporary copies import_file may leave behind (none, when it works).
std::set<std::string> temporary_copies() {
  std::set<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::temp_directory_path()))
    if (entry.path().filename().string().starts_with("ktune-input-")) out.insert(entry.path());
  return out;
}

/// A JSON-lines file of `records`.
std::string jsonl_text(const std::vector<TrialRecord>& records) {
  std::ostringstream out;
  jsonl::write_header(out);
  for (const auto& r : records) jsonl::write_record(out, r);
  return out.str();
}

}  // namespace

TEST_CASE("log: append_absent_streamed inserts what the log lacks and says where it was",
          "[log][import]") {
  TempDir dir;
  TuningLog log(dir.file("t.db"));
  const auto held = make_record("BLOCK=1,VEC=1", 0.8);
  log.append(held);
  const auto y = make_record("BLOCK=2,VEC=1", 0.7);
  const auto z = make_record("BLOCK=4,VEC=1", 0.6, Status::ok, "run-b");
  ChangingSource source{{y, held, y, z}, {y, held, y, z}};
  std::vector<std::size_t> positions;
  CHECK(stream_into(log, source, &positions) == 4);
  CHECK(source.reads == 2);
  CHECK(positions == std::vector<std::size_t>{0, 2, 3});  // y twice: two trials, both kept
  CHECK(log.count() == 4);
  // Nothing to add the second time; an empty batch is read once and writes nothing.
  positions.clear();
  CHECK(stream_into(log, source, &positions) == 4);
  CHECK(positions.empty());
  ChangingSource empty;
  CHECK(stream_into(log, empty) == 0);
  CHECK(empty.reads == 1);
  CHECK(log.count() == 4);
}

TEST_CASE("log: append_absent_streamed refuses a source that changed between its reads",
          "[log][import]") {
  TempDir dir;
  TuningLog log(dir.file("t.db"));
  log.append(make_record("BLOCK=1,VEC=1", 0.8));
  const auto a = make_record("BLOCK=2,VEC=1", 0.7);
  const auto b = make_record("BLOCK=4,VEC=1", 0.6);
  auto b_slower = b;
  b_slower.trial.median_ms = 0.65;
  const auto other_run = make_record("BLOCK=4,VEC=1", 0.6, Status::ok, "run-z");
  struct Case {
    const char* name;
    std::vector<TrialRecord> second;
    const char* why;
  };
  const std::vector<Case> cases = {
      {"one more record", {a, b, a}, "more records than the first read"},
      {"one record fewer", {a}, "fewer records than the first read"},
      {"a record changed", {a, b_slower}, "different records"},
      {"records reordered", {b, a}, "different records"},
      {"a record of another run", {a, other_run}, "a run or task the first read did not have"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    ChangingSource source{{a, b}, c.second};
    try {
      stream_into(log, source);
      FAIL("accepted a source that changed");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::parse_error);
      CHECK_THAT(std::string(e.what()), Catch::Contains("changed while they were read"));
      CHECK_THAT(std::string(e.what()), Catch::Contains(c.why));
      CHECK_THAT(std::string(e.what()), Catch::Contains("nothing was added"));
    }
    CHECK(log.count() == 1);  // rolled back, even the records inserted before the change
  }
  // The same records in both reads go in.
  ChangingSource same{{a, b}, {a, b}};
  CHECK(stream_into(log, same) == 2);
  CHECK(log.count() == 3);
}

TEST_CASE("log: append_absent_streamed checks every record before it writes any",
          "[log][import]") {
  TempDir dir;
  TuningLog log(dir.file("t.db"));
  auto bad = make_record("BLOCK=4,VEC=1", 0.6);
  bad.trial.median_ms = -1;
  ChangingSource source{{make_record("BLOCK=2,VEC=1", 0.7), bad}, {}};
  CHECK_THROWS_WITH(stream_into(log, source), Catch::Contains("median"));
  CHECK(source.reads == 1);  // refused in the first read, before the write lock
  CHECK(log.count() == 0);
}

TEST_CASE("import: JSON lines from a pipe or standard input, named as given in messages",
          "[log][import]") {
  TempDir dir;
  const auto a = make_record("BLOCK=2,VEC=1", 0.7);
  const auto b = make_record("BLOCK=4,VEC=1", 0.6);
  const std::string good = jsonl_text({a, b});
  const std::string bad = good + "{\"bad\": 1}\n";
  const auto copies_before = temporary_copies();

  // A FIFO can be read once: the import copies it, detects its format, reads it twice.
  const std::string fifo = dir.file("trials.pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto import_through_fifo = [&](const std::string& text, TuningLog& log) {
    std::thread writer([&] { std::ofstream(fifo) << text; });
    struct Join {
      std::thread& t;
      ~Join() { t.join(); }
    } join{writer};
    return import_file(log, fifo);
  };
  {
    TuningLog log(dir.file("fifo.db"));
    const ImportSummary summary = import_through_fifo(good, log);
    CHECK(summary.format == LogFormat::jsonl);
    CHECK(summary.records == 2);
    CHECK(log.count() == 2);
    try {
      import_through_fifo(bad, log);
      FAIL("a malformed piped file was imported");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::parse_error);
      CHECK_THAT(std::string(e.what()), Catch::StartsWith(fifo + ":4: "));
      CHECK_THAT(std::string(e.what()), !Catch::Contains("ktune-input-"));
    }
    CHECK(log.count() == 2);
  }

  // `ktune import -` reads standard input, gzip-compressed too.
  test::write_text(dir.file("good.jsonl"), good);
  test::write_text(dir.file("bad.jsonl"), bad);
  auto piped = test::run_ktune(dir, "import --db " + dir.file("stdin.db") + " - < " +
                                        dir.file("good.jsonl"));
  CHECK(piped.status == 0);
  CHECK_THAT(piped.output, Catch::Contains("imported 2 records (jsonl)"));
  REQUIRE(std::system(("gzip -c " + dir.file("good.jsonl") + " > " + dir.file("good.jsonl.gz"))
                          .c_str()) == 0);
  auto gzipped = test::run_ktune(dir, "import --db " + dir.file("stdin.db") + " - < " +
                                          dir.file("good.jsonl.gz"));
  CHECK_THAT(gzipped.output, Catch::Contains("2 records were in"));
  auto refused = test::run_ktune(dir, "import --db " + dir.file("stdin.db") + " - < " +
                                          dir.file("bad.jsonl"));
  CHECK(refused.status != 0);
  CHECK_THAT(refused.output, Catch::Contains("standard input:4: "));
  CHECK_THAT(refused.output, !Catch::Contains("ktune-input-"));

  CHECK(temporary_copies() == copies_before);  // every copy removed, after errors too
}
