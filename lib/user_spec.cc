// Reading a user template's T1 / Kernel Tuner document into a UserSpec (user_spec.h): every
// field checked, every expression (sizes, geometry, scalar values) parsed once, so errors name
// the file and the field before anything runs; and evaluating the launch geometry and the
// arguments for a problem and a config.
#include "user_spec.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "ktune/error.h"
#include "identifier.h"
#include "json_input.h"

namespace ktune::user_spec {

namespace {

using Json = nlohmann::json;
using detail::is_identifier;

/// CUDA launch limits checked before a config is compiled.
constexpr std::int64_t kMaxGridX = 2147483647, kMaxGridYZ = 65535, kMaxBlockXY = 1024,
                       kMaxBlockZ = 64;
/// Most dynamic shared memory a block gets on any supported GPU (sm_90's 227 KiB opt-in).
constexpr std::int64_t kMaxSharedBytes = 232448;

/// Reads fields of the document; errors read "<origin>: <field>: <what>".
struct SpecReader {
  const std::string& origin;

  [[noreturn]] void fail(ErrorCode code, const std::string& field, const std::string& what) const {
    throw Error(code, origin + ": " + field + ": " + what);
  }
  const Json* find(const Json& object, const char* key) const {
    auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
  }
  const Json& member(const Json& object, const std::string& field, const char* key) const {
    const Json* v = find(object, key);
    if (!v) fail(ErrorCode::parse_error, field + "." + key, "missing");
    return *v;
  }
  std::string text(const Json& v, const std::string& field) const {
    if (!v.is_string()) fail(ErrorCode::parse_error, field, "expected a string, found " + detail::json_excerpt(v));
    return v.get<std::string>();
  }
  /// The text of `object[key]` (`fallback` when absent), which must be one of `allowed`.
  std::string one_of(const Json& object, const std::string& field, const char* key,
                     const std::string& fallback, const std::vector<std::string>& allowed) const {
    const Json* v = find(object, key);
    const std::string f = field + "." + key;
    const std::string value = v ? text(*v, f) : fallback;
    if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return value;
    std::string list;
    for (std::size_t i = 0; i < allowed.size(); ++i)
      list += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + allowed[i];
    fail(ErrorCode::invalid_argument, f, "\"" + value + "\" is not " + list);
  }
  /// Checks the keys of `object` (at `field`) against `known`, those ktune reads there
  /// (detail::check_known_keys): a likely misspelling of one is refused; with `strict`
  /// (ktune's own sections) any other key is refused too, while in T1's sections it is left
  /// to the tools that read it, with a warning.
  void known_keys(const Json& object, const std::string& field, std::initializer_list<const char*> known,
                  bool strict) const {
    detail::check_known_keys(object, origin, field, known,
                             strict ? detail::OtherKeys::refuse : detail::OtherKeys::warn);
  }
  /// An expression given as a JSON number or a string.
  std::string expression_text(const Json& v, const std::string& field) const {
    if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
    if (v.is_number_float()) {
      const double d = v.get<double>();  // in int64's range before the cast (else undefined)
      if (d >= -0x1p63 && d < 0x1p63 && d == std::trunc(d))
        return std::to_string(static_cast<std::int64_t>(d));
    }
    if (v.is_string()) return v.get<std::string>();
    fail(ErrorCode::parse_error, field,
         "expected an integer or an expression string, found " + detail::json_excerpt(v));
  }
};

/// " (N, M)": the dimension names for messages.
std::string dimension_list(const Names& names) {
  std::string out;
  for (std::size_t i = names.tunables; i < names.tunables + names.dims && i < names.all.size(); ++i)
    out += (out.empty() ? " (" : ", ") + names.all[i];
  return out.empty() ? "" : out + ")";
}

/// Parses `text` ("ProblemSize[i]" rewritten to the ProblemSize_i variable) over `names`;
/// with `problem_only`, a tunable in it is an error naming the field.
Expr parse_expr(const SpecReader& r, const Names& names, const std::string& text,
                const std::string& field, bool problem_only) {
  static const std::regex indexed(R"(ProblemSize\s*\[\s*(\d+)\s*\])");
  const std::string rewritten = std::regex_replace(text, indexed, "ProblemSize_$1");
  Expr e;
  try {
    e.code = Expression::parse(rewritten, names.all);
  } catch (const Error& err) {
    r.fail(err.code(), field, err.what());
  }
  for (std::size_t p : e.code.params())
    if (p < names.tunables) e.uses_tunables = true;
  if (problem_only && e.uses_tunables)
    r.fail(ErrorCode::invalid_argument, field,
           "\"" + text + "\" uses a tuning parameter; it may depend only on the problem "
           "dimensions" + dimension_list(names));
  return e;
}

/// a / b rounded up for b >= 1, without the overflow of (a + b - 1) / b near 2^63 (a value an
/// expression saturates to); a <= 0 gives a / b (never above 0).
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return a / b + (a % b > 0 ? 1 : 0); }

/// Reads LocalSize, GridDivX/Y/Z, GlobalSize(Type) and SharedMemory of `spec`.
Geometry parse_geometry(const SpecReader& r, const Json& spec, const std::string& field,
                        const Names& names, std::size_t problem_dims, bool problem_only,
                        std::vector<std::string>* block_texts = nullptr) {
  Geometry g;
  g.problem_dims = problem_dims;
  const char* axes[3] = {"X", "Y", "Z"};
  const Json* local = r.find(spec, "LocalSize");
  if (local && !local->is_object()) r.fail(ErrorCode::parse_error, field + ".LocalSize", "expected an object {X, Y, Z}");
  auto only_axes = [&](const Json& object, const std::string& f) {
    for (auto it = object.begin(); it != object.end(); ++it)
      if (it.key() != "X" && it.key() != "Y" && it.key() != "Z")
        r.fail(ErrorCode::parse_error, f + "." + it.key(),
               "unknown key (expected X, Y and Z, upper case)");
  };
  if (local) only_axes(*local, field + ".LocalSize");
  std::vector<std::string> texts;
  for (int d = 0; d < 3; ++d) {
    const std::string f = field + ".LocalSize." + axes[d];
    const Json* v = local ? r.find(*local, axes[d]) : nullptr;
    std::string text = v ? r.expression_text(*v, f) : "1";
    if (!v && d == 0)
      r.fail(ErrorCode::parse_error, field + (local ? ".LocalSize.X" : ".LocalSize"), "missing");
    texts.push_back(text);
    g.block.push_back(parse_expr(r, names, text, f, problem_only));
  }
  if (block_texts) *block_texts = texts;
  const bool has_grid_div = r.find(spec, "GridDivX") || r.find(spec, "GridDivY") || r.find(spec, "GridDivZ");
  const Json* global = r.find(spec, "GlobalSize");
  if (global && !has_grid_div) {
    if (!global->is_object()) r.fail(ErrorCode::parse_error, field + ".GlobalSize", "expected an object {X, Y, Z}");
    only_axes(*global, field + ".GlobalSize");
    for (int d = 0; d < 3; ++d) {
      const std::string f = field + ".GlobalSize." + axes[d];
      const Json* v = r.find(*global, axes[d]);
      g.global.push_back(parse_expr(r, names, v ? r.expression_text(*v, f) : "1", f, problem_only));
    }
    // CUDA: the grid in blocks; OpenCL: the grid in threads.
    g.global_is_threads = r.one_of(spec, field, "GlobalSizeType", "CUDA", {"CUDA", "OpenCL"}) == "OpenCL";
  } else {
    if (problem_dims == 0)
      r.fail(ErrorCode::parse_error, field, "needs ProblemSize (with GridDivX/Y/Z) or GlobalSize for its grid");
    (void)r.one_of(spec, field, "GlobalSizeType", "CUDA", {"CUDA", "OpenCL"});  // checked, unused
    const char* keys[3] = {"GridDivX", "GridDivY", "GridDivZ"};
    g.grid_div.resize(3);
    for (int d = 0; d < 3; ++d) {
      const std::string f = field + "." + keys[d];
      const Json* v = r.find(spec, keys[d]);
      if (!v) {  // Kernel Tuner's default: divide by the block size of that dimension
        g.grid_div[d].push_back(parse_expr(r, names, texts[d], f, problem_only));
        continue;
      }
      if (!v->is_array()) r.fail(ErrorCode::parse_error, f, "expected a list of expressions");
      for (std::size_t i = 0; i < v->size(); ++i) {
        const std::string fi = f + "[" + std::to_string(i) + "]";
        g.grid_div[d].push_back(parse_expr(r, names, r.expression_text((*v)[i], fi), fi, problem_only));
      }
    }
  }
  if (const Json* smem = r.find(spec, "SharedMemory"))
    g.shared_bytes = parse_expr(r, names, r.expression_text(*smem, field + ".SharedMemory"),
                                field + ".SharedMemory", problem_only);
  return g;
}

/// Maps a C type name ("float", "const int*", "__half") or a ktune dtype name to a DType.
DType parse_type(const SpecReader& r, const std::string& type, const std::string& field) {
  std::string t = std::regex_replace(type, std::regex(R"(\bconst\b|\*|__restrict__|\s+)"), " ");
  t = std::regex_replace(t, std::regex(R"(^\s+|\s+$)"), "");
  t = std::regex_replace(t, std::regex(R"(\s+)"), " ");
  static const std::map<std::string, DType> c_names = {
      {"float", DType::f32},        {"double", DType::f64},     {"half", DType::f16},
      {"__half", DType::f16},       {"__nv_bfloat16", DType::bf16}, {"int", DType::i32},
      {"int32_t", DType::i32},      {"unsigned int", DType::i32}, {"long", DType::i64},
      {"long long", DType::i64},    {"int64_t", DType::i64},    {"char", DType::u8},
      {"unsigned char", DType::u8}, {"uint8_t", DType::u8}};
  if (auto it = c_names.find(t); it != c_names.end()) return it->second;
  try {
    return dtype_from_string(t);
  } catch (const Error&) {
    r.fail(ErrorCode::invalid_argument, field,
           "type \"" + type + "\" is not one of float, double, half, __nv_bfloat16, int, "
           "long, int64_t, char, uint8_t (or f32, f16, bf16, f64, i32, i64, u8)");
  }
}

/// Why a vector's FillValue cannot be written as its element type, or nullopt: a constant
/// fill must be a value of the type (an integer within range for integer types, a finite
/// value within the type's range otherwise: half's is +-65504); a random integer fill draws
/// from [0, FillValue], which must lie within the type.
std::optional<std::string> fill_value_problem(DType dtype, double value, bool random_fill) {
  double lo = -3.4028234663852886e38, hi = 3.4028234663852886e38;  // float's finite range
  const char* type = "float";
  switch (dtype) {
    case DType::f64: lo = -1.7976931348623157e308; hi = 1.7976931348623157e308; type = "double"; break;
    case DType::i32: lo = -2147483648.0; hi = 2147483647.0; type = "int32"; break;
    case DType::i64: lo = -0x1p63; hi = 0x1p63 - 1024; type = "int64"; break;  // < 2^63 exactly
    case DType::u8: lo = 0; hi = 255; type = "uint8"; break;
    case DType::f16: lo = -65504.0; hi = 65504.0; type = "half"; break;
    case DType::bf16: lo = -3.3895313892515355e38; hi = 3.3895313892515355e38; type = "bfloat16"; break;
    default: break;
  }
  const bool integer = dtype == DType::i32 || dtype == DType::i64 || dtype == DType::u8;
  std::ostringstream v;
  v.precision(17);
  v << value;
  if (!std::isfinite(value) || value < lo || value > hi)
    return v.str() + " is outside the range of " + type;
  if (integer && !random_fill && value != std::floor(value))
    return v.str() + " is not an integer (a Constant fill of " + type + ")";
  return std::nullopt;
}

/// Why a scalar's value `v` cannot be passed: "is not a number ..." (NaN), "is inf ..., not
/// finite", or "is <v> for this problem, beyond <range>".
std::string unusable_value(double v, const std::string& range) {
  if (std::isnan(v))
    return "is not a number for this problem (a division by zero, or a root of a negative number?)";
  char shown[64];
  std::snprintf(shown, sizeof shown, "%.6g", v);
  return std::string("is ") + shown + " for this problem, " +
         (std::isinf(v) ? std::string("not finite (a division by zero?)") : "beyond " + range);
}

/// Why `name` cannot be a macro ktune defines for the kernel (-DNAME=value): a C++ keyword or
/// type, a CUDA built-in variable, or a name the implementation reserves; nullopt when it can.
std::optional<std::string> reserved_macro_name(const std::string& name) {
  static const std::set<std::string> words = {
      "alignas", "alignof", "asm", "auto", "bool", "break", "case", "catch", "char", "class",
      "const", "constexpr", "const_cast", "continue", "decltype", "default", "delete", "do",
      "double", "dynamic_cast", "else", "enum", "explicit", "extern", "false", "float", "for",
      "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept",
      "nullptr", "operator", "private", "protected", "public", "register", "reinterpret_cast",
      "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
      "switch", "template", "this", "throw", "true", "try", "typedef", "typeid", "typename",
      "union", "unsigned", "using", "virtual", "void", "volatile", "while", "half", "size_t",
      "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "dim3", "NULL", "assert",
      "min", "max", "abs"};
  if (words.count(name)) return "a C++ keyword, type or CUDA built-in name";
  if (name.starts_with("__") || (name.size() > 1 && name[0] == '_' && std::isupper(static_cast<unsigned char>(name[1]))))
    return "reserved for the compiler (it starts with __ or _ and a capital)";
  return std::nullopt;
}

ArgumentSpec parse_argument(const SpecReader& r, const Json& a, const std::string& field,
                            const Names& names) {
  if (!a.is_object()) r.fail(ErrorCode::parse_error, field, "expected an object");
  r.known_keys(a, field,
               {"Name", "Type", "MemoryType", "MemType", "AccessType", "FillType", "FillValue", "Value", "Size",
                "Output", "Tolerance"},
               false);
  ArgumentSpec s;
  s.name = r.text(r.member(a, field, "Name"), field + ".Name");
  if (!is_identifier(s.name))
    r.fail(ErrorCode::invalid_argument, field + ".Name", "\"" + s.name + "\" is not an identifier");
  s.dtype = parse_type(r, r.text(r.member(a, field, "Type"), field + ".Type"), field + ".Type");
  if (const Json* mt = r.find(a, "MemType"); mt && !mt->is_string())
    r.fail(ErrorCode::parse_error, field + ".MemType", "expected a string (\"Global\")");
  if (const Json* mt = r.find(a, "MemType"); mt && mt->get<std::string>() != "Global")
    r.fail(ErrorCode::unsupported, field + ".MemType",
           "\"" + mt->get<std::string>() + "\" memory is not supported (only global-memory "
           "vectors and scalars; pass the data as a pointer instead)");
  s.vector = r.one_of(a, field, "MemoryType", "Vector", {"Vector", "Scalar"}) == "Vector";
  if (const Json* fv = r.find(a, "FillValue")) {
    if (!fv->is_number()) r.fail(ErrorCode::parse_error, field + ".FillValue", "expected a number");
    s.fill_value = fv->get<double>();
  }
  if (!s.vector) {
    // A scalar is passed, never compared: what compares an output means nothing here.
    for (const char* key : {"Output", "Tolerance"})
      if (r.find(a, key))
        r.fail(ErrorCode::invalid_argument, field + "." + key,
               "applies to a compared output vector; this argument is a Scalar");
    if (s.dtype == DType::f16 || s.dtype == DType::bf16 || s.dtype == DType::u8)
      r.fail(ErrorCode::unsupported, field + ".Type",
             "scalar arguments are float, double, int or int64 (pass 16-bit values as float)");
    const bool real = s.dtype == DType::f32 || s.dtype == DType::f64;
    if (const Json* v = r.find(a, "Value")) {
      // A float or double scalar's Value may be any number (0.5), and its expression keeps
      // its fraction (rows / 3); an integer scalar's must be an integer.
      std::string text;
      if (real && v->is_number_float() && std::isfinite(v->get<double>())) {
        std::ostringstream number;
        number.precision(17);
        number << v->get<double>();
        text = number.str();
        if (text.find_first_of(".e") == std::string::npos) text += ".0";  // a real literal
      } else {
        text = r.expression_text(*v, field + ".Value");
      }
      s.value = parse_expr(r, names, text, field + ".Value", true);
    }
    else if (!r.find(a, "FillValue"))
      r.fail(ErrorCode::parse_error, field, "a Scalar needs FillValue (a number) or Value (an expression over the dimensions)");
    return s;
  }
  s.size = parse_expr(r, names, r.expression_text(r.member(a, field, "Size"), field + ".Size"),
                      field + ".Size", true);
  const Json* output = r.find(a, "Output");
  // T1 writes Output as 0 / 1; a boolean reads the same. Anything else (a string "1") would
  // silently turn an output into uncompared scratch.
  if (output && !output->is_boolean() &&
      !(output->is_number() && (output->get<double>() == 0 || output->get<double>() == 1)))
    r.fail(ErrorCode::invalid_argument, field + ".Output",
           "expected 1 (a compared output) or 0 (scratch), found " + detail::json_excerpt(*output));
  const bool compared = !output || (output->is_boolean() ? output->get<bool>()
                                                          : output->get<double>() != 0);
  const std::string access_type =
      r.one_of(a, field, "AccessType", output && compared ? "WriteOnly" : "ReadOnly",
               {"ReadOnly", "WriteOnly", "ReadWrite"});
  if (access_type == "ReadOnly") s.role = Role::input;
  else if (access_type == "WriteOnly") s.role = compared ? Role::output : Role::scratch;
  else s.role = compared ? Role::inout : Role::scratch;
  s.random_fill = r.one_of(a, field, "FillType", "Random", {"Random", "Constant"}) == "Random";
  if (auto why = fill_value_problem(s.dtype, s.fill_value, s.random_fill))
    r.fail(ErrorCode::invalid_argument, field + ".FillValue", *why);
  if (const Json* tol = r.find(a, "Tolerance")) {
    if (!tol->is_number() || tol->get<double>() < 0)
      r.fail(ErrorCode::invalid_argument, field + ".Tolerance", "expected a relative L2 bound >= 0");
    if (s.role != Role::output && s.role != Role::inout)
      r.fail(ErrorCode::invalid_argument, field + ".Tolerance",
             "bounds the error of a compared output, and this argument is not one (it is "
             "ReadOnly, or Output 0)");
    s.tolerance = tol->get<double>();
  }
  return s;
}

/// True when `source` declares a function named `name`: the whole identifier followed by
/// its parameter list (not a longer name that contains it, nor a word in a comment).
bool declares_function(const std::string& source, const std::string& name) {
  static const std::regex comments(R"(//[^\n]*|/\*[\s\S]*?\*/)");
  const std::string code = std::regex_replace(source, comments, " ");
  return std::regex_search(code, std::regex("(^|[^A-Za-z0-9_])" + name + "\\s*\\("));
}

/// Checks a CompilerOptions entry: language standard, macro definitions and a few safe flags.
std::string checked_compiler_option(const SpecReader& r, const std::string& option,
                                    const std::string& field) {
  static const std::regex allowed(
      R"((-|--)std=c\+\+(03|11|14|17|20)|-D[A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_.+-]*)?|)"
      R"(--?use_fast_math|--?extra-device-vectorization|-lineinfo|--?ftz=(true|false))");
  if (!std::regex_match(option, allowed))
    r.fail(ErrorCode::invalid_argument, field,
           "option \"" + option + "\" is not allowed (use -std=c++NN, -DNAME[=VALUE], "
           "--use_fast_math, --extra-device-vectorization, -lineinfo or --ftz=...)");
  return option;
}

/// Reads Reference.InputFiles / OutputFiles (argument name -> file, relative to the document's
/// folder): every compared output needs a file, and so does every input, since expected
/// outputs only hold for the recorded inputs.
void read_recorded_reference(const SpecReader& r, const Json& ref, const std::string& rf,
                             const std::string& origin, UserSpec& spec) {
  if (ref.contains("KernelFile") || ref.contains("KernelName"))
    r.fail(ErrorCode::invalid_argument, rf,
           "give either a reference kernel (KernelFile, KernelName) or recorded files "
           "(InputFiles, OutputFiles), not both");
  // The reference kernel's launch geometry means nothing beside recorded files.
  for (const char* key : {"LocalSize", "GridDivX", "GridDivY", "GridDivZ", "GlobalSize",
                          "GlobalSizeType", "SharedMemory"})
    if (ref.contains(key))
      r.fail(ErrorCode::invalid_argument, rf + "." + key,
             "launches a reference kernel; recorded files (InputFiles, OutputFiles) take no "
             "launch geometry");
  const std::filesystem::path dir = std::filesystem::path(origin).parent_path();
  auto read_map = [&](const char* key, std::map<std::string, std::string>& out, bool want_output) {
    const std::string f = rf + "." + key;
    const Json* m = r.find(ref, key);
    if (!m) return;
    if (!m->is_object()) r.fail(ErrorCode::parse_error, f, "expected an object {argument name: file}");
    for (const auto& [name, file] : m->items()) {
      auto arg = std::find_if(spec.args.begin(), spec.args.end(),
                              [&](const ArgumentSpec& a) { return a.name == name && a.vector; });
      if (arg == spec.args.end())
        r.fail(ErrorCode::invalid_argument, f + "." + name, "no vector argument of that name");
      const bool is_output = arg->role == Role::output || arg->role == Role::inout;
      const bool is_input = arg->role == Role::input || arg->role == Role::inout;
      if (want_output ? !is_output : !is_input)
        r.fail(ErrorCode::invalid_argument, f + "." + name,
               std::string("argument ") + name + " is not " +
                   (want_output ? "a compared output (WriteOnly/ReadWrite with Output 1)" : "read by the kernel"));
      const std::string path = r.text(file, f + "." + name);
      out[name] = (std::filesystem::path(path).is_absolute() ? std::filesystem::path(path) : dir / path)
                      .lexically_normal()
                      .string();
    }
  };
  read_map("OutputFiles", spec.output_files, true);
  read_map("InputFiles", spec.input_files, false);
  for (const auto& a : spec.args) {
    if (!a.vector) continue;
    if ((a.role == Role::output || a.role == Role::inout) && !spec.output_files.count(a.name))
      r.fail(ErrorCode::invalid_argument, rf + ".OutputFiles", "no file for output " + a.name);
    if ((a.role == Role::input || a.role == Role::inout) && !spec.input_files.count(a.name))
      r.fail(ErrorCode::invalid_argument, rf + ".InputFiles",
             "no file for input " + a.name + " (recorded outputs only hold for the recorded inputs)");
  }
}

}  // namespace

std::optional<Value> Expr::eval_whole(const std::vector<Value>& values, std::string* why) const {
  const double real = code.evaluate_real(values);
  const std::optional<Value> exact = code.evaluate_checked(values);
  std::string reason;
  if (std::isnan(real)) {
    reason = unusable_value(real, "");
  } else if (std::isfinite(real) && real != std::floor(real)) {
    char shown[64];
    std::snprintf(shown, sizeof shown, "%.6g", real);
    reason = std::string("is ") + shown + ", not a whole number (// divides rounding down)";
  } else if (!exact) {
    reason = unusable_value(real, "a 64-bit integer");
  } else {
    return exact;
  }
  if (why) *why = "\"" + code.text() + "\" " + reason;
  return std::nullopt;
}

bool Geometry::compute(const std::vector<Value>& values, const Names& names, std::int64_t grid[3],
                       std::int64_t block_out[3], std::int64_t& smem, std::string* why) const {
  const char* axis = "xyz";
  // Counts must be whole: a fractional LocalSize or GridDiv would be truncated silently.
  auto whole = [&](const Expr& e, const std::string& field, std::int64_t& out) {
    std::string reason;
    const auto v = e.eval_whole(values, &reason);
    if (!v) {
      if (why) *why = field + " " + reason;
      return false;
    }
    out = *v;
    return true;
  };
  for (int d = 0; d < 3; ++d) {
    if (!whole(block[d], std::string("LocalSize ") + char('X' + d), block_out[d])) return false;
    // Before the grid: a LocalSize below 1 would otherwise be reported as the GridDiv factor
    // it gives by default.
    if (block_out[d] < 1) {
      if (why)
        *why = std::string("block.") + axis[d] + " (LocalSize " + char('X' + d) + ") = " +
               std::to_string(block_out[d]) + " < 1";
      return false;
    }
  }
  for (int d = 0; d < 3; ++d) {
    if (global.size() == 3) {
      std::int64_t g = 0;
      if (!whole(global[d], std::string("GlobalSize ") + axis[d], g)) return false;
      grid[d] = global_is_threads && block_out[d] > 0 ? ceil_div(g, block_out[d]) : g;
    } else {
      const std::int64_t size =
          static_cast<std::size_t>(d) < problem_dims ? values[names.tunables + names.dims + d] : 1;
      std::int64_t div = 1;
      for (const auto& e : grid_div[d]) {
        std::int64_t factor = 0;
        if (!whole(e, std::string("GridDiv") + char('X' + d), factor)) return false;
        if (factor < 1 || factor > kMaxGridX) {  // a negative pair would multiply to > 0
          if (why) *why = std::string("a GridDiv") + "XYZ"[d] + " factor is " +
                          std::to_string(factor) + " (expected 1 .. 2^31 - 1)";
          return false;
        }
        // Once div * factor reaches size the grid is 1 whatever follows: div stops at size
        // (no overflow, and no false clamp below a size of 2^31 or more).
        // (A size below 1 keeps div at 1: its grid is refused below.)
        if (size < 1 || div >= size || factor > size / div) div = std::max<std::int64_t>(size, 1);
        else div *= factor;
      }
      grid[d] = ceil_div(size, div);
    }
  }
  smem = 0;
  if (shared_bytes && !whole(*shared_bytes, "SharedMemory", smem)) return false;
  auto reject = [&](const std::string& what) {
    if (why) *why = what;
    return false;
  };
  for (int d = 0; d < 3; ++d) {
    if (block_out[d] < 1)
      return reject(std::string("block.") + axis[d] + " = " + std::to_string(block_out[d]) + " < 1");
    if (grid[d] < 1)
      return reject(std::string("grid.") + axis[d] + " = " + std::to_string(grid[d]) + " < 1");
  }
  if (block_out[0] > kMaxBlockXY || block_out[1] > kMaxBlockXY || block_out[2] > kMaxBlockZ ||
      block_out[0] * block_out[1] * block_out[2] > kMaxThreads)
    return reject("block " + std::to_string(block_out[0]) + "x" + std::to_string(block_out[1]) +
                  "x" + std::to_string(block_out[2]) + " exceeds the CUDA block limits");
  if (grid[0] > kMaxGridX || grid[1] > kMaxGridYZ || grid[2] > kMaxGridYZ)
    return reject("grid " + std::to_string(grid[0]) + "x" + std::to_string(grid[1]) + "x" +
                  std::to_string(grid[2]) + " exceeds the CUDA grid limits");
  if (smem < 0) return reject("SharedMemory = " + std::to_string(smem) + " < 0");
  if (smem > kMaxSharedBytes)
    return reject("SharedMemory = " + std::to_string(smem) + " bytes exceeds " +
                  std::to_string(kMaxSharedBytes) + " (the most any supported GPU gives a block)");
  return true;
}

bool Geometry::uses_tunables() const {
  auto any = [](const std::vector<Expr>& es) {
    return std::any_of(es.begin(), es.end(), [](const Expr& e) { return e.uses_tunables; });
  };
  bool used = any(block) || any(global) || (shared_bytes && shared_bytes->uses_tunables);
  for (const auto& d : grid_div) used = used || any(d);
  return used;
}

std::string Geometry::thread_limit_constraint(const std::vector<std::string>& texts,
                                              std::size_t tunables, int max_threads) const {
  for (const auto& e : block)
    for (std::size_t p : e.code.params())
      if (p >= tunables) return "";
  return "(" + texts[0] + ")*(" + texts[1] + ")*(" + texts[2] + ") <= " + std::to_string(max_threads);
}

std::vector<Value> UserSpec::values(const Problem& problem, const Config* config) const {
  std::vector<Value> v(names.all.size(), 0);
  if (config)
    for (std::size_t i = 0; i < names.tunables; ++i) v[i] = (*config)[names.all[i]];
  for (std::size_t i = 0; i < dims.size(); ++i) v[names.tunables + i] = problem.dim(dims[i].first);
  for (std::size_t i = 0; i < problem_size.size(); ++i)
    v[names.tunables + names.dims + i] = problem_size[i].eval(v);
  return v;
}

std::vector<KernelArg> UserSpec::kernel_args(const std::vector<Value>& values) const {
  std::vector<KernelArg> out;
  std::size_t buffer = 0;
  for (const auto& a : args) {
    if (a.vector) {
      out.push_back(KernelArg::buf(buffer++));
      continue;
    }
    if (a.dtype == DType::f32 || a.dtype == DType::f64) {
      const double v = a.value ? a.value->eval_real(values) : a.fill_value;
      const bool fits = std::isfinite(v) && (a.dtype == DType::f64 ||
                                              std::fabs(v) <= std::numeric_limits<float>::max());
      if (!fits)
        throw Error(ErrorCode::invalid_argument,
                    origin + ": argument " + a.name + ": " +
                        (a.value ? "Value \"" + a.value->code.text() + "\"" : std::string("FillValue")) +
                        " " + unusable_value(v, a.dtype == DType::f32 ? "the range of a float" : "the range of a double"));
      out.push_back(a.dtype == DType::f32 ? KernelArg::f32(v) : KernelArg::f64(v));
      continue;
    }
    // Integers: the expression's exact value, never a wrapped one.
    const bool wide = a.dtype == DType::i64;
    const double lo = wide ? -9223372036854775808.0 : -2147483648.0;
    const double hi = wide ? 9223372036854775807.0 : 2147483647.0;
    if (!a.value && (a.fill_value != std::floor(a.fill_value) || a.fill_value < lo ||
                     a.fill_value >= hi + 1))
      throw Error(ErrorCode::invalid_argument,
                  origin + ": argument " + a.name + ": FillValue " + std::to_string(a.fill_value) +
                      " is not a " + (wide ? "64" : "32") + "-bit integer");
    std::int64_t v = static_cast<std::int64_t>(a.fill_value);
    if (a.value) {
      // Whole, as counts are: "rows / 3" of 4096 is 1365.33, not 1365 (`//` rounds down).
      std::string why;
      const std::optional<std::int64_t> exact = a.value->eval_whole(values, &why);
      if (!exact)
        throw Error(ErrorCode::invalid_argument,
                    origin + ": argument " + a.name + ": Value " + why + " (an integer argument)");
      v = *exact;
    }
    if (!wide && (v < -2147483648LL || v > 2147483647LL))
      throw Error(ErrorCode::invalid_argument,
                  origin + ": argument " + a.name + ": Value " + std::to_string(v) +
                      " does not fit its 32-bit type (declare it int64_t / long long)");
    out.push_back(wide ? KernelArg::i64(v) : KernelArg::i32(v));
  }
  return out;
}

LaunchPlan UserSpec::plan(const std::string& entry, const Geometry& g,
                          const std::vector<Value>& values, const std::string& what) const {
  std::int64_t grid[3], block[3], smem = 0;
  std::string why;
  if (!g.compute(values, names, grid, block, smem, &why))
    throw Error(ErrorCode::unsupported, name + ": " + what + ": " + why);
  LaunchStep step;
  step.entry = entry;
  for (int d = 0; d < 3; ++d) {
    step.grid[d] = static_cast<unsigned>(grid[d]);
    step.block[d] = static_cast<unsigned>(block[d]);
  }
  step.dynamic_smem = static_cast<unsigned>(smem);
  step.args = kernel_args(values);
  LaunchPlan p;
  p.steps.push_back(std::move(step));
  return p;
}

/// Default relative L2 bound of an output of a dtype.
double default_tolerance(DType dtype) {
  switch (dtype) {
    case DType::f64: return 1e-12;
    case DType::f32: return 1e-5;
    case DType::f16: return 1e-2;
    case DType::bf16: return 2e-2;
    default: return 0;
  }
}

std::shared_ptr<const UserSpec> read_user_spec(const std::string& spec_json,
                                               const std::string& kernel_source,
                                               const std::string& reference_source,
                                               const std::string& origin,
                                               const std::string& kernel_name) {
  SpecReader r{origin};
  const Json doc = detail::parse_json_document(spec_json, origin);
  if (!doc.is_object()) r.fail(ErrorCode::parse_error, "document", "expected a JSON object");
  // A misspelt section is named before anything that section would have given is missed.
  detail::check_known_keys(doc, origin, "", kDocumentSections, detail::OtherKeys::accept);
  auto spec = std::make_shared<UserSpec>();
  spec->origin = origin;
  spec->source = kernel_source;
  spec->space = SearchSpace::from_t1_json(spec_json, origin);
  const std::string ks = "KernelSpecification";
  const Json& kernel = r.member(doc, "document", "KernelSpecification");
  const Json empty = Json::object();
  const Json* ext = r.find(doc, "KtuneExtensions");
  if (ext && !ext->is_object()) r.fail(ErrorCode::parse_error, "KtuneExtensions", "expected an object");
  if (!ext) ext = &empty;
  r.known_keys(kernel, "KernelSpecification",
               {"Language", "CompilerOptions", "BenchmarkName", "KernelName", "KernelFile", "GlobalSizeType",
                "LocalSize", "GridDivX", "GridDivY", "GridDivZ", "GlobalSize", "ProblemSize", "SharedMemory",
                "Arguments"},
               false);
  r.known_keys(*ext, "KtuneExtensions",
               {"Dimensions", "Reference", "Tolerance", "Bytes", "Flops", "GridDependencyWait"},
               true);

  if (const Json* language = r.find(kernel, "Language");
      language && r.text(*language, ks + ".Language") != "CUDA")
    r.fail(ErrorCode::unsupported, ks + ".Language", "\"" + language->get<std::string>() + "\": only CUDA kernels are supported");
  spec->kernel_name = r.text(r.member(kernel, ks, "KernelName"), ks + ".KernelName");
  if (!is_identifier(spec->kernel_name))
    r.fail(ErrorCode::invalid_argument, ks + ".KernelName", "\"" + spec->kernel_name + "\" is not a C identifier");
  if (!declares_function(kernel_source, spec->kernel_name))
    r.fail(ErrorCode::not_found, ks + ".KernelName",
           "the kernel source has no kernel \"" + spec->kernel_name + "\" (declare it extern \"C\" __global__)");

  // Name: General.BenchmarkName, else KernelSpecification.BenchmarkName, else the kernel name.
  std::string name_field = "General.BenchmarkName";
  if (doc.contains("General") && !doc["General"].is_object())
    r.fail(ErrorCode::parse_error, "General", "expected an object");
  const Json* name = doc.contains("General") ? r.find(doc["General"], "BenchmarkName") : nullptr;
  if (!name) {
    name = r.find(kernel, "BenchmarkName");
    name_field = ks + ".BenchmarkName";
  }
  spec->name = name ? r.text(*name, name_field) : spec->kernel_name;
  const Json* kernel_file = r.find(kernel, "KernelFile");
  spec->source_name = !kernel_name.empty() ? kernel_name
                      : kernel_file && kernel_file->is_string()
                          ? std::filesystem::path(kernel_file->get<std::string>()).filename().string()
                          : spec->name + ".cu";
  if (!is_identifier(spec->name))
    r.fail(ErrorCode::invalid_argument, name_field,
           "\"" + spec->name + "\" cannot name a template (letters, digits and _ only)");

  if (const Json* options = r.find(kernel, "CompilerOptions")) {
    if (!options->is_array()) r.fail(ErrorCode::parse_error, ks + ".CompilerOptions", "expected a list of strings");
    for (std::size_t i = 0; i < options->size(); ++i) {
      const std::string f = ks + ".CompilerOptions[" + std::to_string(i) + "]";
      spec->compiler_options.push_back(checked_compiler_option(r, r.text((*options)[i], f), f));
    }
  }

  // Names of expressions: tunables, dimensions, ProblemSize_i. Tunables reach the kernel as
  // macros (-DNAME=value), which must not rewrite the language under it.
  for (const auto& p : spec->space.params()) {
    if (auto why = reserved_macro_name(p.name))
      r.fail(ErrorCode::invalid_argument, "ConfigurationSpace.TuningParameters",
             "parameter \"" + p.name + "\" is " + *why +
                 ": it is passed to the kernel as the macro -D" + p.name + "=<value>; rename it");
    spec->names.all.push_back(p.name);
  }
  spec->names.tunables = spec->names.all.size();
  const Json* problem_size = r.find(kernel, "ProblemSize");
  if (problem_size && !problem_size->is_array())
    r.fail(ErrorCode::parse_error, ks + ".ProblemSize", "expected a list");
  if (const Json* dims = r.find(*ext, "Dimensions")) {
    if (!dims->is_array() || dims->empty())
      r.fail(ErrorCode::parse_error, "KtuneExtensions.Dimensions", "expected a non-empty list of {Name, Default}");
    for (std::size_t i = 0; i < dims->size(); ++i) {
      const std::string f = "KtuneExtensions.Dimensions[" + std::to_string(i) + "]";
      r.known_keys((*dims)[i], f, {"Name", "Default"}, true);
      const std::string dim = r.text(r.member((*dims)[i], f, "Name"), f + ".Name");
      const Json& def = r.member((*dims)[i], f, "Default");
      if (!is_identifier(dim)) r.fail(ErrorCode::invalid_argument, f + ".Name", "\"" + dim + "\" is not an identifier");
      if (auto why = reserved_macro_name(dim))
        r.fail(ErrorCode::invalid_argument, f + ".Name",
               "dimension \"" + dim + "\" is " + *why + "; rename it (dimension names follow "
               "the rule of tuning parameter names)");
      for (const auto& [seen, unused] : spec->dims)
        if (seen == dim) r.fail(ErrorCode::invalid_argument, f + ".Name", "dimension \"" + dim + "\" is declared twice");
      if (!def.is_number_integer() || def.get<std::int64_t>() < 1)
        r.fail(ErrorCode::invalid_argument, f + ".Default", "expected an integer >= 1");
      spec->dims.emplace_back(dim, def.get<std::int64_t>());
    }
  } else if (problem_size) {
    // Plain T1: the fixed ProblemSize numbers become dimensions P0, P1, ...
    for (std::size_t i = 0; i < problem_size->size(); ++i) {
      const Json& v = (*problem_size)[i];
      if (!v.is_number_integer() || v.get<std::int64_t>() < 1)
        r.fail(ErrorCode::invalid_argument, ks + ".ProblemSize[" + std::to_string(i) + "]",
               "expected an integer >= 1 (or declare KtuneExtensions.Dimensions and use their names)");
      spec->dims.emplace_back("P" + std::to_string(i), v.get<std::int64_t>());
    }
  } else {
    r.fail(ErrorCode::parse_error, "KtuneExtensions.Dimensions", "missing (and no KernelSpecification.ProblemSize)");
  }
  for (const auto& [dim, v] : spec->dims) {
    if (spec->space.find(dim))
      r.fail(ErrorCode::invalid_argument, "KtuneExtensions.Dimensions",
             "dimension \"" + dim + "\" has the name of a tuning parameter");
    spec->names.all.push_back(dim);
  }
  spec->names.dims = spec->dims.size();
  for (std::size_t i = 0; i < spec->compiler_options.size(); ++i) {
    static const std::regex define(R"(-D([A-Za-z_][A-Za-z0-9_]*).*)");
    std::smatch m;
    const std::string& option = spec->compiler_options[i];
    // Tuning parameters are macros ktune defines for every config; dimensions are not macros
    // (they reach the kernel through the Arguments whose Value names them).
    if (std::regex_match(option, m, define) && spec->space.find(m[1].str()))
      r.fail(ErrorCode::invalid_argument, ks + ".CompilerOptions[" + std::to_string(i) + "]",
             "\"" + option + "\" defines " + m[1].str() + ", a tuning parameter, which ktune "
             "defines for every config");
  }
  // ProblemSize entries: expressions over the dimensions (the dimensions themselves when
  // ProblemSize is absent, or when the plain T1 numbers became P0, P1, ...).
  const bool declared_dims = ext->contains("Dimensions");
  Json ps_texts = Json::array();
  const bool given = problem_size && declared_dims;
  if (given) ps_texts = *problem_size;
  else
    for (const auto& [dim, v] : spec->dims) ps_texts.push_back(dim);
  // A grid from GlobalSize does not divide ProblemSize: a derived one then names the first
  // three dimensions (ProblemSize[0..2]) however many there are.
  const bool global_grid = r.find(kernel, "GlobalSize") && !r.find(kernel, "GridDivX") &&
                           !r.find(kernel, "GridDivY") && !r.find(kernel, "GridDivZ");
  if (!given && global_grid && ps_texts.size() > 3) ps_texts.erase(ps_texts.begin() + 3, ps_texts.end());
  const std::size_t ps_count = ps_texts.size();
  if (ps_count > 3)
    r.fail(ErrorCode::invalid_argument, ks + ".ProblemSize",
           given ? std::to_string(ps_count) + " entries; a launch grid has 3 dimensions (X, Y, Z)"
                 : "absent, so it would be the " + std::to_string(ps_count) +
                       " dimensions, and a launch grid has 3 (X, Y, Z): give a ProblemSize of "
                       "at most 3 expressions over the dimensions for GridDivX/Y/Z, or a GlobalSize");
  for (std::size_t i = 0; i < ps_count; ++i) {
    const std::string reserved = "ProblemSize_" + std::to_string(i);
    if (std::find(spec->names.all.begin(), spec->names.all.end(), reserved) != spec->names.all.end())
      r.fail(ErrorCode::invalid_argument, "ConfigurationSpace",
             "the name \"" + reserved + "\" is reserved for ProblemSize[" + std::to_string(i) +
                 "]; rename that tuning parameter or dimension");
    spec->names.all.push_back(reserved);
  }
  Names dims_only = spec->names;  // ProblemSize_i are computed from the dimensions alone
  dims_only.all.resize(spec->names.tunables + spec->names.dims);
  for (std::size_t i = 0; i < ps_count; ++i) {
    const std::string f = ks + ".ProblemSize[" + std::to_string(i) + "]";
    spec->problem_size.push_back(parse_expr(r, dims_only, r.expression_text(ps_texts[i], f), f, true));
  }

  spec->geometry = parse_geometry(r, kernel, ks, spec->names, ps_count, false, &spec->block_texts);

  const Json& args = r.member(kernel, ks, "Arguments");
  if (!args.is_array() || args.empty()) r.fail(ErrorCode::parse_error, ks + ".Arguments", "expected a non-empty list");
  bool has_output = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string f = ks + ".Arguments[" + std::to_string(i) + "]";
    spec->args.push_back(parse_argument(r, args[i], f, spec->names));
    for (std::size_t j = 0; j + 1 < spec->args.size(); ++j)
      if (spec->args[j].name == spec->args.back().name)
        r.fail(ErrorCode::invalid_argument, f + ".Name",
               "\"" + spec->args.back().name + "\" also names Arguments[" + std::to_string(j) +
                   "] (files and tolerances are matched by name)");
    has_output |= spec->args.back().vector &&
                  (spec->args.back().role == Role::output || spec->args.back().role == Role::inout);
  }
  if (!has_output)
    r.fail(ErrorCode::invalid_argument, ks + ".Arguments",
           "no vector is written and compared (a vector with AccessType WriteOnly or ReadWrite "
           "and Output 1 or absent; Output 0 makes one uncompared scratch)");

  const std::string rf = "KtuneExtensions.Reference";
  const Json* ref = r.find(*ext, "Reference");
  if (!ref)
    r.fail(ErrorCode::parse_error, rf,
           "missing: name a reference kernel ({\"KernelFile\": ..., \"KernelName\": ...}) that "
           "computes the outputs from the same arguments, or recorded data "
           "({\"InputFiles\": {...}, \"OutputFiles\": {...}}); candidates are checked against it");
  if (!ref->is_object()) r.fail(ErrorCode::parse_error, rf, "expected an object");
  r.known_keys(*ref, rf,
               {"KernelFile", "KernelName", "LocalSize", "GridDivX", "GridDivY", "GridDivZ", "GlobalSize",
                "GlobalSizeType", "SharedMemory", "InputFiles", "OutputFiles"},
               true);
  // Either file list makes it the recorded form (whose reader names a missing OutputFiles).
  if (ref->contains("OutputFiles") || ref->contains("InputFiles")) {
    read_recorded_reference(r, *ref, rf, origin, *spec);
  } else {
    spec->reference_name = r.text(r.member(*ref, rf, "KernelName"), rf + ".KernelName");
    spec->reference_source_name =
        std::filesystem::path(r.text(r.member(*ref, rf, "KernelFile"), rf + ".KernelFile")).filename().string();
    spec->reference_source = reference_source;
    if (!is_identifier(spec->reference_name) ||
        !declares_function(reference_source, spec->reference_name))
      r.fail(ErrorCode::not_found, rf + ".KernelName",
             "the reference source has no kernel \"" + spec->reference_name + "\"");
    Json ref_geometry = *ref;
    if (!ref_geometry.contains("LocalSize")) ref_geometry["LocalSize"] = {{"X", "256"}};
    spec->reference_geometry = parse_geometry(r, ref_geometry, rf, spec->names, ps_count, true);
  }

  if (const Json* tol = r.find(*ext, "Tolerance")) {
    if (!tol->is_number() || tol->get<double>() < 0)
      r.fail(ErrorCode::invalid_argument, "KtuneExtensions.Tolerance", "expected a relative L2 bound >= 0");
    spec->tolerance = tol->get<double>();
  }
  if (const Json* b = r.find(*ext, "Bytes"))
    spec->bytes = parse_expr(r, spec->names, r.expression_text(*b, "KtuneExtensions.Bytes"), "KtuneExtensions.Bytes", true);
  if (const Json* f = r.find(*ext, "Flops"))
    spec->flops = parse_expr(r, spec->names, r.expression_text(*f, "KtuneExtensions.Flops"), "KtuneExtensions.Flops", true);
  if (const Json* wait = r.find(*ext, "GridDependencyWait")) {
    if (!wait->is_boolean())
      r.fail(ErrorCode::invalid_argument, "KtuneExtensions.GridDependencyWait",
             "expected true or false");
    spec->grid_dependency_wait = wait->get<bool>();
  }
  spec->description = "user kernel " + spec->kernel_name + " (" + origin + ")";
  return spec;
}

}  // namespace ktune::user_spec
