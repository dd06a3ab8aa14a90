// `ktune vendor`: records vendor reference times (cuBLAS, cuDNN, ...) in a tuning log, from GPU
// benchmark result files or given by hand, so that `ktune best` and `ktune report` show the
// tuned kernels next to them (see vendor_records.h for how they are stored).
#include <cstdio>
#include <memory>

#include "commands.h"
#include "created_log.h"
#include "ktune/error.h"
#include "ktune/log.h"
#include "option_checks.h"
#include "vendor_records.h"

namespace ktune::cli {

namespace {

struct VendorArgs {
  std::string db = "ktune.db";
  std::vector<std::string> files;
  std::string name;
  std::string problem;
  std::string device;
  double ms = 0;
};

void run_vendor(const VendorArgs& args) {
  const std::string run_id = new_run_id();
  std::vector<TrialRecord> records;
  if (!args.files.empty()) {
    if (!args.name.empty() || !args.problem.empty() || !args.device.empty() || args.ms > 0)
      throw Error(ErrorCode::invalid_argument,
                  "give benchmark files or --name/--problem/--device/--ms, not both (the files "
                  "carry their own device and times)");
    for (const auto& f : args.files) {
      auto more = vendor_records_from_benchmark(f, run_id);
      if (more.records.empty())
        throw Error(ErrorCode::not_found, f + ": no row with a problem and its reference time "
                                              "(cublas_ms for gemm, cudnn_ms for conv2d)");
      if (more.rows_without_time)
        std::printf("%s: %zu rows without a reference time were left out\n", f.c_str(),
                    more.rows_without_time);
      records.insert(records.end(), more.records.begin(), more.records.end());
    }
  } else {
    std::string missing;  // a hand-given time needs all four: the ones left out are named
    for (const auto& [given, option] : {std::pair{!args.name.empty(), "--name"},
                                        std::pair{!args.problem.empty(), "--problem"},
                                        std::pair{!args.device.empty(), "--device"},
                                        std::pair{args.ms > 0, "--ms"}})
      if (!given) missing += std::string(missing.empty() ? "" : ", ") + option;
    if (!missing.empty())
      throw Error(ErrorCode::invalid_argument,
                  "give benchmark result files, or --name, --problem, --device and --ms (missing: " +
                      missing + ")");
    records.push_back(make_vendor_record(args.name, args.problem, args.device, args.ms, {}, run_id));
  }
  CreatedLog created(args.db);  // removed again if this command created it and fails
  created.log().append_batch(records);
  for (const auto& r : records)
    std::printf("%s %s on %s: %.5g ms\n", r.template_name.c_str(), r.problem_key.c_str(),
                r.device_key().c_str(), r.trial.median_ms);
  std::printf("recorded %zu vendor time(s) in %s (run %s)\n", records.size(), args.db.c_str(),
              run_id.c_str());
}

}  // namespace

void add_vendor_command(CLI::App& app) {
  auto args = std::make_shared<VendorArgs>();
  auto* cmd = app.add_subcommand(
      "vendor", "Record vendor reference times (cuBLAS, cuDNN) that best/report compare with");
  cmd->add_option("files", args->files,
                  "GPU benchmark result files (benchmarks/gpu_* JSON with <vendor>_ms per problem)");
  cmd->add_option("--db", args->db, "Tuning log (SQLite; created when missing)");
  cmd->add_option("--name", args->name, "Vendor library of a hand-given time, e.g. cublas");
  cmd->add_option("--problem", args->problem,
                  "Problem key, e.g. \"gemm|M=4096,N=4096,K=4096|bias=0,dtype=f16,layout=NT,out=same\"");
  cmd->add_option("--device", args->device, "Device key, e.g. \"NVIDIA H200|sm_90|132\"");
  cmd->add_option("--ms", args->ms, "Median time in milliseconds")->check(finite_positive());
  cmd->callback([args] { run_vendor(*args); });
}

}  // namespace ktune::cli
