// Tests of T1 JSON loading: the shared benchmark-hub spaces have exactly as many valid configs
// as their Kernel Tuner cache files have entries, every cached config is valid, and malformed
// definitions give errors that name the file and the field.
#include <catch2/catch.hpp>

#include <chrono>

#include <filesystem>
#include <zlib.h>

#include <nlohmann/json.hpp>

#include "ktune/error.h"
#include "python_values.h"
#include "ktune/space.h"
#include "skip.h"

using namespace ktune;
namespace fs = std::filesystem;

namespace {

/// Whole contents of a gzip file.
std::string read_gzip(const fs::path& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  REQUIRE(file != nullptr);
  std::string out;
  char buffer[1 << 16];
  int n;
  while ((n = gzread(file, buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<std::size_t>(n));
  const bool ok = n == 0;
  gzclose(file);
  REQUIRE(ok);
  return out;
}

/// A T1 document with the given parameter and condition JSON fragments.
std::string t1_text(const std::string& params, const std::string& conditions) {
  return R"({"ConfigurationSpace": {"TuningParameters": [)" + params +
         R"(], "Conditions": [)" + conditions + "]}}";
}

Error load_failure(const std::string& text) {
  try {
    SearchSpace::from_t1_json(text, "test.T1.json");
  } catch (const Error& e) {
    return e;
  }
  FAIL("T1 text loaded without error: " << text);
  return Error(ErrorCode::internal, "unreachable");
}

}  // namespace

TEST_CASE("t1: shared spaces count as many valid configs as their caches hold", "[t1][space]") {
  const fs::path dir = KTUNE_DATASETS_DIR;
  if (!fs::is_directory(dir)) {
    KTUNE_SKIP("datasets folder " << dir << " is absent");
  }
  int spaces = 0, caches = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string file = entry.path().filename().string();
    const std::string suffix = ".T1.json";
    if (file.size() <= suffix.size() || file.substr(file.size() - suffix.size()) != suffix) continue;
    const std::string stem = file.substr(0, file.size() - suffix.size());
    INFO("space " << file);
    const SearchSpace space = SearchSpace::from_t1_file(entry.path().string());
    ++spaces;
    const std::uint64_t count = space.count_valid();
    for (const auto& cache_entry : fs::directory_iterator(dir)) {
      const std::string cache_file = cache_entry.path().filename().string();
      if (cache_file.rfind(stem + "_", 0) != 0 || cache_file.find(".json.gz") == std::string::npos) {
        continue;
      }
      INFO("cache " << cache_file);
      const auto doc = nlohmann::json::parse(read_gzip(cache_entry.path()));
      const auto& cache = doc.at("cache");
      CHECK(count == cache.size());
      std::vector<std::string> keys = doc.at("tune_params_keys").get<std::vector<std::string>>();
      std::size_t invalid = 0;
      for (const auto& [key, record] : cache.items()) {
        std::map<std::string, Value> values;
        for (const auto& k : keys) values[k] = record.at(k).get<Value>();
        if (!space.valid(space.make(values))) ++invalid;
      }
      CHECK(invalid == 0);
      ++caches;
    }
  }
  CHECK(spaces >= 2);
  CHECK(caches >= 5);
}

TEST_CASE("t1: values as a list, defaults and conditions", "[t1][space]") {
  const auto space = SearchSpace::from_t1_json(
      t1_text(R"({"Name": "x", "Type": "int", "Values": [1, 2, 4, 8], "Default": 4},
                 {"Name": "y", "Type": "int", "Values": "[0, 1]"},
                 {"Name": "z", "Type": "bool", "Values": [false, true]})",
              R"({"Expression": "x * (y + 1) <= 8", "Parameters": ["x", "y"]},
                 {"Expression": "z == 0 or x > 1"})"),
      "inline");
  CHECK(space.dims() == 3);
  CHECK(space.default_config().str() == "x=4,y=0,z=0");
  CHECK(space.params()[2].values == std::vector<Value>{0, 1});
  CHECK(space.constraint_descriptions() ==
        std::vector<std::string>{"x * (y + 1) <= 8", "z == 0 or x > 1"});
  CHECK(space.count_valid() == 12);
}

TEST_CASE("t1: Values written as Python list expressions, as the benchmark hub writes them",
          "[t1][space]") {
  auto values_of = [](const std::string& text) {
    const auto space = SearchSpace::from_t1_json(
        t1_text("{\"Name\": \"x\", \"Values\": " + nlohmann::json(text).dump() + "}", ""), "inline");
    return space.params()[0].values;
  };
  // hotspot_milo.json and pnpoly.json (AutoTuningAssociation/benchmark_hub)
  std::vector<Value> hotspot = {1, 2, 4, 8, 16};
  for (Value v = 32; v <= 1024; v += 32) hotspot.push_back(v);
  CHECK(values_of("[1, 2, 4, 8, 16] + list(range(32, 1024+1, 32))") == hotspot);
  CHECK(values_of("[2**i for i in range(0, 6)]") == std::vector<Value>{1, 2, 4, 8, 16, 32});
  CHECK(values_of("[32 * i for i in range(1, 32)]").size() == 31);
  CHECK(values_of("[1] + [2 * i for i in range(1, 11)]") ==
        std::vector<Value>{1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20});
  CHECK(values_of("[i for i in range(1, 11)]").back() == 10);
  // Python's booleans, ranges with one or three arguments, a trailing comma.
  CHECK(values_of("[True, False]") == std::vector<Value>{1, 0});
  CHECK(values_of("range(3)") == std::vector<Value>{0, 1, 2});
  CHECK(values_of("range(10, 0, -3)") == std::vector<Value>{10, 7, 4, 1});
  CHECK(values_of("[1, 2, 4,]") == std::vector<Value>{1, 2, 4});
  CHECK(values_of("list(range(0, 6,))").size() == 6);  // trailing commas inside calls too
  CHECK(values_of("list(range(3),)") == std::vector<Value>{0, 1, 2});
  CHECK(values_of("range(9223372036854775807, 9223372036854775806, -9223372036854775807)") ==
        std::vector<Value>{9223372036854775807LL});  // stepping past 64 bits ends the range
  // A comprehension's element is parsed once: 1000 terms over 16384 values stay quick.
  std::string terms = "i";
  for (int k = 0; k < 1000; ++k) terms += "+0";
  const auto start = std::chrono::steady_clock::now();
  CHECK(values_of("[" + terms + " for i in range(16384)]").size() == 16384);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  // What ktune cannot take is named: strings, fractions, a zero step, a runaway range.
  auto refused = [&](const std::string& text, const std::string& part) {
    try {
      (void)values_of(text);
      FAIL("accepted: " << text);
    } catch (const Error& e) {
      INFO(e.what());
      CHECK_THAT(std::string(e.what()), Catch::Contains("TuningParameters[0].Values") &&
                                            Catch::Contains(part));
    }
  };
  refused("['COBYLA', 'L-BFGS-B']", "'COBYLA' is a string");
  refused("[0.25, 0.5, 0.75]", "0.25 is not an integer");      // valid JSON: read as such
  refused("[0.25] + [1]", "\"0.25\" is not an integer");    // the Python reader's message
  refused("range(0, 10, 0)", "step must not be zero");
  refused("[2**i for i in range(60, 70)]", "is past 64 bits");
  refused("[1//0] + [1]", "divides by zero");
  refused("list(range(0, 2**40))", "more than 1048576 values");
  refused("sorted([3, 1])", "is not a list, range(...) or list(range(...))");
  refused("[i for i in [1, 2]]", "must run over range(...)");
  // A one-element list as Default (gemm_milo.json); a Default outside the Values (hotspot_milo's
  // max_tfactor: Values [10], Default 1) is noted and the first value taken, as Kernel Tuner
  // never checks it.
  const auto d = SearchSpace::from_t1_json(
      t1_text(R"({"Name": "GEMMK", "Values": "[0]", "Default": [0]},
                 {"Name": "max_tfactor", "Values": "[10]", "Default": 1})", ""),
      "inline");
  CHECK(d.default_config().str() == "GEMMK=0,max_tfactor=10");
}

TEST_CASE("t1: integers up to 2^63 - 1, as integers or integral reals, null defaults", "[t1][space]") {
  const auto space = SearchSpace::from_t1_json(
      t1_text(R"({"Name": "x", "Values": [1, 9223372036854775807], "Default": null},
                 {"Name": "y", "Values": [1, 9.21e18]})", ""),
      "inline");
  CHECK(space.params()[0].values == std::vector<Value>{1, 9223372036854775807LL});
  CHECK(space.params()[1].values == std::vector<Value>{1, 9210000000000000000LL});
  CHECK(space.default_config().str() == "x=1,y=1");
}

TEST_CASE("t1: errors name the file and the field", "[t1][space]") {
  auto has = [](const Error& e, const std::string& part) {
    INFO(e.what());
    CHECK_THAT(std::string(e.what()), Catch::Contains(part));
  };
  const Error json = load_failure("{ not json");
  CHECK(json.code() == ErrorCode::parse_error);
  has(json, "test.T1.json");

  const Error missing = load_failure(R"({"ConfigurationSpace": {}})");
  has(missing, "test.T1.json: ConfigurationSpace.TuningParameters: missing");

  const Error expression = load_failure(
      t1_text(R"({"Name": "x", "Values": "[1, 2]"})", R"({"Expression": "x >"})"));
  CHECK(expression.code() == ErrorCode::parse_error);
  has(expression, "ConfigurationSpace.Conditions[0].Expression");
  has(expression, "column 4");

  const Error unknown = load_failure(
      t1_text(R"({"Name": "x", "Values": "[1, 2]"})", R"({"Expression": "y > 1"})"));
  CHECK(unknown.code() == ErrorCode::unknown_name);
  has(unknown, "Conditions[0].Expression");

  const Error values = load_failure(t1_text(R"({"Name": "x", "Values": "[1, 2.5]"})", ""));
  has(values, "ConfigurationSpace.TuningParameters[0].Values[1]");
  has(values, "2.5");

  // Integers beyond int64 are errors, not wrapped to negative values.
  const Error huge = load_failure(
      t1_text(R"({"Name": "x", "Values": "[2, 9223372036854775808, 18446744073709551615]"})", ""));
  has(huge, "TuningParameters[0].Values[1]");
  has(huge, "out of range");
  const Error huge_real = load_failure(t1_text(R"({"Name": "x", "Values": [1, 1e19]})", ""));
  has(huge_real, "Values[1]");
  has(huge_real, "out of range");

  // The containers must be lists, each named when it is not.
  has(load_failure(R"({"ConfigurationSpace": {"TuningParameters": {}}})"),
      "ConfigurationSpace.TuningParameters: expected a list");
  has(load_failure(t1_text(R"({"Name": "x", "Values": 5})", "")),
      "TuningParameters[0].Values: expected a list");
  has(load_failure(R"({"ConfigurationSpace": {"TuningParameters": [{"Name": "x", "Values": [1]}],
                        "Conditions": {"Expression": "x > 5"}}})"),
      "ConfigurationSpace.Conditions: expected a list");
  has(load_failure(t1_text(R"({"Name": "x", "Values": [1]})",
                           R"({"Expression": "x > 0", "Parameters": "x"})")),
      "Conditions[0].Parameters: expected a list");
  has(load_failure(t1_text(R"({"Name": "x", "Values": [1]})",
                           R"({"Expression": "x > 0", "Parameters": [1]})")),
      "Conditions[0].Parameters");

  const Error list = load_failure(t1_text(R"({"Name": "x", "Values": "[1, 2"})", ""));
  has(list, "TuningParameters[0].Values");

  // A Default outside the Values is not an error (see the Python list test): the first value.
  CHECK(SearchSpace::from_t1_json(t1_text(R"({"Name": "x", "Values": [1, 2], "Default": 3})", ""),
                                  "inline")
            .default_config()
            .str() == "x=1");
  const Error bad_default =
      load_failure(t1_text(R"({"Name": "x", "Values": [1, 2], "Default": [1, 2]})", ""));
  has(bad_default, "TuningParameters[0].Default");

  const Error duplicate =
      load_failure(t1_text(R"({"Name": "x", "Values": [1]}, {"Name": "x", "Values": [2]})", ""));
  has(duplicate, "TuningParameters[1]");

  const Error listed = load_failure(t1_text(
      R"({"Name": "x", "Values": [1]})", R"({"Expression": "x > 0", "Parameters": ["x", "w"]})"));
  CHECK(listed.code() == ErrorCode::unknown_name);
  has(listed, "Conditions[0].Parameters");

  const Error file = [] {
    try {
      SearchSpace::from_t1_file("/nonexistent/space.T1.json");
    } catch (const Error& e) {
      return e;
    }
    return Error(ErrorCode::internal, "no error");
  }();
  CHECK(file.code() == ErrorCode::not_found);
  has(file, "/nonexistent/space.T1.json");

  const Error folder = [] {  // a folder opens as a stream on Linux, and read as empty text
    try {
      SearchSpace::from_t1_file(fs::temp_directory_path().string());
    } catch (const Error& e) {
      return e;
    }
    return Error(ErrorCode::internal, "no error");
  }();
  CHECK(folder.code() == ErrorCode::not_found);
  has(folder, "is a folder");
}

// Edge cases from the mutation audit of session 33.
TEST_CASE("Python Values: range arity, quoted separators, the value cap's edge", "[t1]") {
  using detail::python_list_values;
  CHECK_THROWS_WITH(python_list_values("range(1, 2, 3, 4)"), Catch::Contains("range() takes 1 to 3"));
  CHECK_THROWS_WITH(python_list_values("range()"), Catch::Contains("range() takes 1 to 3"));
  CHECK_THROWS_WITH(python_list_values("['a+b', 1]"), Catch::Contains("'a+b' is a string"));
  CHECK_THROWS_WITH(python_list_values("[1, 'x,y']"), Catch::Contains("'x,y' is a string"));
  CHECK(python_list_values("list(range(0, 2**20))").size() == detail::kMaxPythonValues);
  CHECK_THROWS_WITH(python_list_values("[0] + list(range(0, 2**20))"), Catch::Contains("more than"));
}
