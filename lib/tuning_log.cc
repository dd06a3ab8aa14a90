// TuningLog over SQLite: appends in transactions, the task / run / resume queries, and the
// mapping between a TrialRecord and a row of the trials table (schema in sqlite_schema.cc).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <mutex>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <sqlite3.h>

#include "content_hash.h"
#include "ktune/error.h"
#include "ktune/log.h"
#include "sqlite_db.h"
#include "sqlite_schema.h"

namespace ktune {

namespace {

constexpr int kBusyTimeoutMs = 60000;
/// Size of a write-ahead log's header: a -wal file no larger holds no frame.
constexpr std::uintmax_t kWalHeaderBytes = 32;

/// SQL condition on an ok trial's median that check_record() demands (finite, above 0), for
/// files written before it was checked: such a time never counts as a best.
constexpr const char* kUsableMedian = "median_ms > 0 AND median_ms < 1e308";

/// The columns read_record() reads, for a log of schema `version`: one opened read-only keeps
/// its older schema, whose rows read as launch 'unknown'.
std::string columns(int version) {
  return std::string(
             "id, run_id, template, source_hash, problem_key, device_name, cc_major, cc_minor, "
             "sm_count, driver_version, ktune_version, nvrtc_version, config, status, message, "
             "times_ms, median_ms, min_ms, spread, error_norm, registers, shared_bytes, "
             "spill_stores, spill_loads, stack_bytes, const_bytes, compile_ms, wall_ms, "
             "sm_clock_mhz, temperature_c, timestamp_us, ") +
         (version >= 3 ? "launch" : "'unknown'");
}

constexpr const char* kInsert =
    "INSERT INTO trials(run_id, template, source_hash, problem_key, device_key, device_name, "
    "cc_major, cc_minor, sm_count, driver_version, ktune_version, nvrtc_version, config, "
    "status, message, times_ms, median_ms, min_ms, spread, error_norm, registers, "
    "shared_bytes, spill_stores, spill_loads, stack_bytes, const_bytes, compile_ms, wall_ms, "
    "sm_clock_mhz, temperature_c, timestamp_us, launch) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
    "?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, "
    "?26, ?27, ?28, ?29, ?30, ?31, ?32)";

// Samples as "%.17g" joined by commas: exact round trip of every double, NaN included.
std::string encode_times(const std::vector<double>& times) {
  std::string out;
  char buf[40];
  for (std::size_t i = 0; i < times.size(); ++i) {
    std::snprintf(buf, sizeof buf, i ? ",%.17g" : "%.17g", times[i]);
    out += buf;
  }
  return out;
}

std::vector<double> decode_times(const std::string& text) {
  std::vector<double> out;
  const char* p = text.c_str();
  while (*p) {
    char* end = nullptr;
    out.push_back(std::strtod(p, &end));
    if (end == p) break;
    p = (*end == ',') ? end + 1 : end;
  }
  return out;
}

double real_or_nan(const sqlite::Statement& s, int column) {
  return s.is_null(column) ? std::numeric_limits<double>::quiet_NaN() : s.real(column);
}

void bind_record(sqlite::Statement& s, const TrialRecord& r) {
  const Trial& t = r.trial;
  s.bind(1, r.run_id).bind(2, r.template_name).bind(3, r.source_hash).bind(4, r.problem_key);
  s.bind(5, r.device_key()).bind(6, r.device.name).bind(7, r.device.cc_major);
  s.bind(8, r.device.cc_minor).bind(9, r.device.sm_count).bind(10, r.device.driver_version);
  s.bind(11, r.ktune_version).bind(12, r.nvrtc_version);
  s.bind(13, r.config_text.empty() ? t.config.str() : r.config_text);
  s.bind(14, std::string_view(to_string(t.status))).bind(15, t.message);
  s.bind(16, encode_times(t.times_ms)).bind(17, t.median_ms).bind(18, t.min_ms);
  s.bind(19, t.spread).bind(20, t.error_norm);
  const Resources& res = t.resources;
  s.bind(21, res.registers).bind(22, res.shared_bytes).bind(23, res.spill_stores);
  s.bind(24, res.spill_loads).bind(25, res.stack_bytes).bind(26, res.const_bytes);
  s.bind(27, t.compile_ms).bind(28, t.wall_ms).bind(29, t.sm_clock_mhz);
  s.bind(30, t.temperature_c).bind(31, t.timestamp_us);
  s.bind(32, std::string_view(to_string(t.launch)));
}

// Reads a row selected with columns() (of the log at `path`, for messages). A config text that
// does not parse leaves trial.config empty and keeps the raw text in config_text: consumers
// validate before use.
TrialRecord read_record(const sqlite::Statement& s, const std::string& path) {
  TrialRecord r;
  r.id = s.integer(0);
  // A 32-bit field holding a wider value (a hand-edited log) is refused by row, never wrapped
  // into another device or another count.
  auto narrow = [&](int column, const char* name) {
    const std::int64_t v = s.integer(column);
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
      throw Error(ErrorCode::parse_error, "tuning log '" + path + "': trial id " + std::to_string(r.id) +
                                              ": " + name + " " + std::to_string(v) +
                                              " is outside a 32-bit integer's range");
    return static_cast<int>(v);
  };
  r.run_id = s.text(1);
  r.template_name = s.text(2);
  r.source_hash = s.text(3);
  r.problem_key = s.text(4);
  r.device.name = s.text(5);
  r.device.cc_major = narrow(6, "cc_major");
  r.device.cc_minor = narrow(7, "cc_minor");
  r.device.sm_count = narrow(8, "sm_count");
  r.device.driver_version = narrow(9, "driver_version");
  r.ktune_version = s.text(10);
  r.nvrtc_version = s.text(11);
  r.config_text = s.text(12);
  Trial& t = r.trial;
  try {
    t.config = parse_config_text(r.config_text);
  } catch (const Error&) {
    t.config = Config();
  }
  try {
    t.status = status_from_string(s.text(13));
  } catch (const Error&) {
    t.status = Status::invalid;  // unknown status text: never treated as a usable result
  }
  t.message = s.text(14);
  t.times_ms = decode_times(s.text(15));
  t.median_ms = real_or_nan(s, 16);
  t.min_ms = real_or_nan(s, 17);
  t.spread = real_or_nan(s, 18);
  t.error_norm = real_or_nan(s, 19);
  t.resources.registers = narrow(20, "registers");
  t.resources.shared_bytes = narrow(21, "shared_bytes");
  t.resources.spill_stores = narrow(22, "spill_stores");
  t.resources.spill_loads = narrow(23, "spill_loads");
  t.resources.stack_bytes = narrow(24, "stack_bytes");
  t.resources.const_bytes = narrow(25, "const_bytes");
  t.compile_ms = real_or_nan(s, 26);
  t.wall_ms = real_or_nan(s, 27);
  t.sm_clock_mhz = narrow(28, "sm_clock_mhz");
  t.temperature_c = narrow(29, "temperature_c");
  t.timestamp_us = s.integer(30);
  try {
    t.launch = launch_form_from_string(s.text(31));
  } catch (const Error&) {
    t.launch = LaunchForm::unknown;  // a name this build does not know says nothing it can use
  }
  return r;
}

// WHERE clause and bindings of a filter.
struct FilterSql {
  std::string where;
  std::vector<std::string> values;
};

/// What tells a stored trial apart from another: an import of a record with the same key as
/// one already in the log is a re-import, not a new measurement. Runs whose id starts with
/// `run_family` (when given) count as one run. The config is the text stored (bind_record:
/// config_text, else trial.config's).
std::string identity(const TrialRecord& r, const std::string& run_family = {}) {
  std::ostringstream key;
  key.precision(17);
  const bool in_family = !run_family.empty() && r.run_id.starts_with(run_family);
  key << (in_family ? run_family : r.run_id) << '\x1f' << r.template_name << '\x1f'
      << r.problem_key << '\x1f' << r.device_key() << '\x1f'
      << (r.config_text.empty() ? r.trial.config.str() : r.config_text) << '\x1f'
      << to_string(r.trial.status) << '\x1f' << r.trial.timestamp_us << '\x1f' << r.trial.median_ms;
  return key.str();
}

/// An identity() reduced to 128 bits by two unrelated 64-bit hashes (FNV-1a and the standard
/// library's), so that the identities of millions of records fit in memory. Two different
/// identities share a key with probability ~2^-128 per pair: far below a disk's error rate.
using IdentityKey = std::pair<std::uint64_t, std::uint64_t>;
IdentityKey identity_key(const std::string& identity) {
  return {detail::fnv1a64(identity), std::hash<std::string>{}(identity)};
}
struct IdentityKeyHash {
  std::size_t operator()(const IdentityKey& k) const noexcept { return k.first ^ (k.second << 1); }
};
/// How many records of each identity a log holds.
using IdentityCounts = std::unordered_map<IdentityKey, std::size_t, IdentityKeyHash>;

FilterSql filter_sql(const LogFilter& f) {
  FilterSql out;
  // `column = ?N`, or `(column = ?N OR also)` where another condition matches too.
  auto add = [&](const char* column, const std::optional<std::string>& value,
                 const std::string& also = "") {
    if (!value) return;
    const std::string equal = std::string(column) + " = ?" + std::to_string(out.values.size() + 1);
    out.where += out.where.empty() ? " WHERE " : " AND ";
    out.where += also.empty() ? equal : "(" + equal + " OR " + also + ")";
    out.values.push_back(*value);
  };
  add("template", f.template_name);
  add("problem_key", f.problem_key);
  add("device_key", f.device_key);
  add("run_id", f.run_id);
  if (f.status) {
    // A status text this version does not know reads as invalid (read_record), so the filter
    // for invalid takes it too.
    std::string unknown_status;
    if (*f.status == Status::invalid) {
      std::string known;
      for (Status s : all_statuses()) known += std::string(known.empty() ? "'" : ", '") + to_string(s) + "'";
      unknown_status = "status NOT IN (" + known + ")";
    }
    add("status", std::string(to_string(*f.status)), unknown_status);
  }
  return out;
}

void bind_filter(sqlite::Statement& s, const FilterSql& f) {
  for (std::size_t i = 0; i < f.values.size(); ++i) s.bind(static_cast<int>(i + 1), f.values[i]);
}

}  // namespace

struct TuningLog::Impl {
  std::string path;
  LogMode mode;
  int version = 0;
  std::unique_ptr<sqlite::Connection> db;
  mutable std::recursive_mutex mutex;  // for_each's visitor may query the log again
  mutable int visiting = 0;            // for_each visits in progress (under the mutex)
  std::optional<sqlite::Statement> insert;  // prepared on first append
  std::optional<sqlite::Statement> best;    // prepared on first best()

  /// The insert statement, ready for binding (caller holds the mutex).
  sqlite::Statement& insert_statement() {
    if (!insert) insert.emplace(db->prepare(kInsert));
    insert->reset();
    return *insert;
  }

  /// Throws when an append comes from inside a for_each visitor (the caller holds the mutex:
  /// only the visiting thread can get here then). SQLite cannot start the write while the
  /// visit's read is open on the same connection: it would wait out the busy timeout.
  void require_not_visiting() const {
    if (visiting > 0)
      throw Error(ErrorCode::invalid_argument,
                  "tuning log '" + path + "': cannot append from inside a for_each visitor "
                  "(collect the records and append them after it returns)");
  }

  void require_writable() const {
    if (mode != LogMode::read_write) {
      throw Error(ErrorCode::invalid_argument,
                  "tuning log '" + path + "' is open read-only; cannot append");
    }
  }
};

namespace {

// Whether the write-ahead log beside the database `path` holds frames: one that is absent,
// empty or only its 32-byte header (what a read-only open leaves) holds nothing.
bool wal_holds_frames(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path + "-wal", ec);
  return !ec && size > kWalHeaderBytes;
}

// A log deployed in a folder this process may not write (a read-only image or mount): SQLite
// must create the -shm file of a WAL database even to read it, so a plain read-only open
// fails (sqlite::CannotReadInPlace). When no -wal file beside it holds frames and no -journal
// is left (its last writer closed it; a reader may have left an empty -wal), the file alone is
// the whole log and is read as an immutable snapshot, creating nothing. Beside the link's
// target, where SQLite keeps them, symbolic links followed.
bool readable_as_snapshot(const std::string& path) {
  const std::string target = sqlite::resolved_path(path);
  std::error_code ec;
  return !std::filesystem::exists(target + "-journal", ec) && !wal_holds_frames(target);
}

}  // namespace

TuningLog::TuningLog(const std::string& path, LogMode mode) : impl_(std::make_unique<Impl>()) {
  if (path.empty()) throw Error(ErrorCode::invalid_argument, "the tuning log path is empty");
  impl().path = path;
  impl().mode = mode;
  // A folder, a FIFO or a device is never a log (opening a FIFO to read would wait forever).
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw Error(ErrorCode::invalid_argument,
                "tuning log '" + path + "' is " +
                    (std::filesystem::is_directory(status)   ? "a folder"
                     : std::filesystem::is_fifo(status)      ? "a FIFO (named pipe), not a regular file"
                     : std::filesystem::is_socket(status)    ? "a socket, not a regular file"
                     : std::filesystem::is_block_file(status) || std::filesystem::is_character_file(status)
                         ? "a device, not a regular file"
                         : "not a regular file") +
                    "; expected an SQLite file (or a path where one can be created)");
  if (mode == LogMode::read_only && !std::filesystem::exists(status))
    throw Error(ErrorCode::not_found, "tuning log '" + path + "' does not exist (`ktune tune --db " +
                                          path + "` or `ktune import` creates one)");
  // A write-ahead log holding frames without its database is left over from a log deleted
  // alone: SQLite would replay it into the new file (old trials reappearing, or a damaged
  // log). One with no frame (empty, or only its 32-byte header: what a read-only open leaves)
  // holds nothing to replay.
  const bool fresh = !std::filesystem::exists(status) || std::filesystem::file_size(path, ec) == 0;
  if (fresh && wal_holds_frames(path))
    throw Error(ErrorCode::invalid_argument,
                "tuning log '" + path + "' does not exist but its write-ahead log '" + path +
                    "-wal' does (left over from a log deleted without it): remove '" + path +
                    "-wal' and '" + path + "-shm' first, or name another file");
  sqlite::check_sqlite_header(path);
  const bool read_only = mode == LogMode::read_only;
  using Access = sqlite::Connection::Access;
  auto open = [&](Access access) {
    impl().db = std::make_unique<sqlite::Connection>(path, access, kBusyTimeoutMs);
    impl().version = sqlite::prepare_schema(*impl().db, read_only);
  };
  try {
    // SQLite's own locking wherever it can read, a writer at work included.
    open(read_only ? Access::read_only : Access::read_write);
  } catch (const sqlite::CannotReadInPlace&) {
    if (!read_only || !readable_as_snapshot(path)) throw;
    impl().db.reset();
    open(Access::immutable);
  }
}

TuningLog::Impl& TuningLog::impl() const {
  if (!impl_)
    throw Error(ErrorCode::invalid_argument,
                "this TuningLog was moved from; use the object it was moved to");
  return *impl_;
}

TuningLog::~TuningLog() = default;
TuningLog::TuningLog(TuningLog&&) noexcept = default;
TuningLog& TuningLog::operator=(TuningLog&&) noexcept = default;

int TuningLog::current_schema_version() { return sqlite::latest_schema_version(); }
int TuningLog::schema_version() const { return impl().version; }
const std::string& TuningLog::path() const { return impl().path; }
LogMode TuningLog::mode() const { return impl().mode; }

std::int64_t TuningLog::append(const TrialRecord& record) {
  impl().require_writable();
  check_record(record, "tuning log '" + impl().path + "'");
  std::lock_guard lock(impl().mutex);
  impl().require_not_visiting();
  sqlite::Transaction tx(*impl().db);
  auto& s = impl().insert_statement();
  bind_record(s, record);
  s.run();
  std::int64_t id = sqlite3_last_insert_rowid(impl().db->handle());
  tx.commit();
  return id;
}

std::vector<std::size_t> TuningLog::append_absent(const std::vector<TrialRecord>& records,
                                                  const std::string& run_family) {
  std::vector<std::size_t> appended;
  append_absent_streamed(
      [&](const std::function<void(const TrialRecord&)>& visit) {
        for (const auto& r : records) visit(r);
      },
      run_family, [&](std::size_t position, const TrialRecord&) { appended.push_back(position); });
  return appended;
}

std::size_t TuningLog::append_absent_streamed(
    const std::function<void(const std::function<void(const TrialRecord&)>&)>& source,
    const std::string& run_family,
    const std::function<void(std::size_t, const TrialRecord&)>& appended) {
  impl().require_writable();
  const std::string where = "tuning log '" + impl().path + "'";
  // A record's group: its run (or the run family) and task, the unit the held records are
  // read by.
  using Group = std::tuple<std::string, std::string, std::string, std::string>;
  auto group_of = [&](const TrialRecord& r) {
    const bool in_family = !run_family.empty() && r.run_id.starts_with(run_family);
    return Group(in_family ? run_family : r.run_id, r.template_name, r.problem_key, r.device_key());
  };
  // First read, before any lock: every record checked, the groups and a fingerprint of the
  // batch's identities kept (not the records).
  std::set<Group> groups;
  std::size_t count = 0;
  const std::uint64_t empty_fingerprint = detail::fnv1a64({});
  std::uint64_t fingerprint = empty_fingerprint;
  source([&](const TrialRecord& r) {
    check_record(r, where);
    groups.insert(group_of(r));
    fingerprint = detail::fnv1a64(identity(r, run_family) + '\x1e', fingerprint);
    ++count;
  });
  if (count == 0) return 0;

  std::lock_guard lock(impl().mutex);
  impl().require_not_visiting();
  sqlite::Transaction tx(*impl().db);  // takes the write lock before reading what is held
  // What is held is read per group of the batch, through the task index: a log of many
  // earlier imports is not read whole for every new one.
  IdentityCounts held;
  // The family: every run id of that prefix, as the index range [prefix, prefix with its last
  // byte raised) and compared exactly (no LIKE wildcards).
  std::string family_end = run_family;
  if (!family_end.empty()) ++family_end.back();
  for (const auto& [run, template_name, problem_key, device_key] : groups) {
    const bool family = run == run_family && !run_family.empty();
    auto s = impl().db->prepare(
        "SELECT " + columns(impl().version) +
        " FROM trials WHERE template = ?2 AND problem_key = ?3 AND device_key = ?4 AND " +
        (family ? "run_id >= ?1 AND run_id < ?5 AND substr(run_id, 1, length(?1)) = ?1" : "run_id = ?1"));
    s.bind(1, run);
    s.bind(2, template_name);
    s.bind(3, problem_key);
    s.bind(4, device_key);
    if (family) s.bind(5, family_end);
    while (s.step()) ++held[identity_key(identity(read_record(s, impl().path), run_family))];
  }
  // Second read, inside the transaction: the records the log does not hold are inserted. A
  // batch that differs from the first read (a file rewritten meanwhile) could hold runs whose
  // records were not read above, so it is refused and the transaction rolled back.
  auto changed = [&](const std::string& what) {
    throw Error(ErrorCode::parse_error,
                "the records to add to " + where + " changed while they were read (" + what +
                    "); nothing was added");
  };
  auto& insert = impl().insert_statement();
  std::size_t position = 0;
  std::uint64_t again = empty_fingerprint;
  source([&](const TrialRecord& r) {
    if (position == count) changed("more records than the first read");
    if (!groups.contains(group_of(r))) changed("a run or task the first read did not have");
    check_record(r, where);
    const std::string id = identity(r, run_family);
    again = detail::fnv1a64(id + '\x1e', again);
    // Each record the log holds answers for one equal record of the batch: a batch's k equal
    // records (trials that agree in everything compared) add k minus those held.
    auto it = held.find(identity_key(id));
    if (it != held.end() && it->second > 0) {
      --it->second;
    } else {
      bind_record(insert, r);
      insert.run();
      insert.reset();
      appended(position, r);
    }
    ++position;
  });
  if (position != count) changed("fewer records than the first read");
  if (again != fingerprint) changed("different records");
  tx.commit();
  return count;
}

void TuningLog::append_batch(const std::vector<TrialRecord>& records) {
  impl().require_writable();
  if (records.empty()) return;
  for (const auto& r : records) check_record(r, "tuning log '" + impl().path + "'");
  std::lock_guard lock(impl().mutex);
  impl().require_not_visiting();
  sqlite::Transaction tx(*impl().db);
  auto& s = impl().insert_statement();
  for (const auto& r : records) {
    bind_record(s, r);
    s.run();
    s.reset();
  }
  tx.commit();
}

std::optional<TrialRecord> TuningLog::best(const std::string& template_name,
                                           const std::string& problem_key,
                                           const std::string& device_key,
                                           const std::string& prefer_source_hash,
                                           const std::function<bool(const TrialRecord&)>& usable,
                                           bool programmatic_launch) const {
  std::vector<TrialRecord> ok;
  {
    std::lock_guard lock(impl().mutex);
    // Prepared once per log: warm starts and `best` tables ask for many tasks in a row.
    if (!impl().best)
      impl().best.emplace(impl().db->prepare("SELECT " + columns(impl().version) +
                                             " FROM trials WHERE template = ?1 AND problem_key = ?2 AND "
                                             "device_key = ?3 AND (status != 'ok' OR (" + kUsableMedian +
                                             ")) ORDER BY id"));
    auto& s = *impl().best;
    s.reset();
    // Reset however the reads end: a statement left mid-way would hold its read snapshot.
    struct ResetOnExit {
      sqlite::Statement& s;
      ~ResetOnExit() { s.reset(); }
    } reset_on_exit{s};
    s.bind(1, template_name).bind(2, problem_key).bind(3, device_key);
    while (s.step()) ok.push_back(read_record(s, impl().path));
  }
  ok = trials_ranked_for_launch(std::move(ok), programmatic_launch);
  for (auto& r : ranked_representatives(ok, prefer_source_hash))
    if (!usable || usable(r)) return std::move(r);
  return std::nullopt;
}

std::vector<TrialRecord> TuningLog::run_history(const std::string& run_id) const {
  LogFilter f;
  f.run_id = run_id;
  return records(f);
}

std::vector<std::string> TuningLog::measured_configs(const std::string& template_name,
                                                     const std::string& problem_key,
                                                     const std::string& device_key,
                                                     const std::string& source_hash) const {
  std::lock_guard lock(impl().mutex);
  std::string sql =
      "SELECT DISTINCT config FROM trials WHERE template = ?1 AND problem_key = ?2 AND "
      "device_key = ?3";
  if (!source_hash.empty()) sql += " AND source_hash = ?4";
  sql += " ORDER BY config";
  auto s = impl().db->prepare(sql);
  s.bind(1, template_name).bind(2, problem_key).bind(3, device_key);
  if (!source_hash.empty()) s.bind(4, source_hash);
  std::vector<std::string> out;
  while (s.step()) out.push_back(s.text(0));
  return out;
}

std::vector<TaskSummary> TuningLog::tasks(const LogFilter& filter) const {
  std::lock_guard lock(impl().mutex);
  FilterSql f = filter_sql(filter);
  auto s = impl().db->prepare(
      "SELECT template, problem_key, device_key, count(*), "
      "sum(status = 'ok'), min(CASE WHEN status = 'ok' AND " + std::string(kUsableMedian) +
      " THEN median_ms END) FROM trials" + f.where +
      " GROUP BY template, problem_key, device_key ORDER BY template, problem_key, device_key");
  bind_filter(s, f);
  std::vector<TaskSummary> out;
  while (s.step()) {
    TaskSummary t;
    t.template_name = s.text(0);
    t.problem_key = s.text(1);
    t.device_key = s.text(2);
    t.trials = s.integer(3);
    t.ok_trials = s.integer(4);
    if (!s.is_null(5)) t.best_ms = s.real(5);
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<RunSummary> TuningLog::runs() const {
  std::lock_guard lock(impl().mutex);
  auto s = impl().db->prepare(
      "SELECT run_id, count(*), min(timestamp_us), max(timestamp_us), min(id) AS first_id "
      "FROM trials GROUP BY run_id ORDER BY first_id");
  std::vector<RunSummary> out;
  while (s.step()) {
    out.push_back(RunSummary{s.text(0), s.integer(1), s.integer(2), s.integer(3)});
  }
  return out;
}

void TuningLog::for_each(const LogFilter& filter,
                         const std::function<void(const TrialRecord&)>& visit) const {
  std::lock_guard lock(impl().mutex);
  FilterSql f = filter_sql(filter);
  auto s = impl().db->prepare("SELECT " + columns(impl().version) + " FROM trials" + f.where +
                              " ORDER BY id");
  bind_filter(s, f);
  struct Visiting {
    int& depth;
    explicit Visiting(int& d) : depth(d) { ++depth; }
    ~Visiting() { --depth; }
  } visiting(impl().visiting);
  while (s.step()) visit(read_record(s, impl().path));
}

std::vector<TrialRecord> TuningLog::records(const LogFilter& filter) const {
  std::vector<TrialRecord> out;
  for_each(filter, [&](const TrialRecord& r) { out.push_back(r); });
  return out;
}

std::int64_t TuningLog::count(const LogFilter& filter) const {
  std::lock_guard lock(impl().mutex);
  FilterSql f = filter_sql(filter);
  auto s = impl().db->prepare("SELECT count(*) FROM trials" + f.where);
  bind_filter(s, f);
  return s.step() ? s.integer(0) : 0;
}

}  // namespace ktune
