// The benchmarks' result files: written into folders that do not exist yet, replaced whole,
// and a write that cannot happen is an error naming the path (a benchmark once printed
// "wrote" over files it never wrote, into a folder that was not there).
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "benchmarks/json_output.h"
#include "log_fixtures.h"

using namespace ktune;

namespace {
nlohmann::json read_back(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}
}  // namespace

TEST_CASE("benchmark result files are written whole into new folders", "[bench]") {
  test::TempDir dir;
  const std::string path = dir.file("a/b/result.json");
  bench::write_json(path, {{"rows", 1}});
  CHECK(read_back(path)["rows"] == 1);
  bench::write_json(path, {{"rows", 2}, {"more", "x"}});  // replaced, not appended
  const nlohmann::json again = read_back(path);
  CHECK(again["rows"] == 2);
  CHECK(again["more"] == "x");
  std::size_t files = 0;  // no temporary file left beside it
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("a/b"))) (void)entry, ++files;
  CHECK(files == 1);
}

TEST_CASE("a benchmark result file that cannot be written is an error naming it", "[bench]") {
  test::TempDir dir;
  const std::string blocker = dir.file("plain-file");
  std::ofstream(blocker) << "not a folder\n";
  const std::string path = blocker + "/result.json";  // a folder inside a file
  try {
    bench::write_json(path, {{"rows", 1}});
    FAIL("write_json returned for an impossible path");
  } catch (const std::runtime_error& e) {
    CHECK_THAT(e.what(), Catch::Contains(path));
  }
}
