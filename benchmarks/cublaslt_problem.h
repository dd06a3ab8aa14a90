// One GEMM problem of templates/gemm in cuBLASLt's terms, for the benchmarks that run NVIDIA's
// own kernels config by config (gpu_cublaslt_kernels, gpu_gemm --cublaslt): the algorithm
// configs cuBLASLt offers for it, each checked and run on our row-major operands.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "cublas_api.h"
#include "cuda_module.h"
#include "ktune/error.h"
#include "templates/gemm/gemm_problem.h"

namespace ktune::bench {

/// One cuBLASLt algorithm config (what cublasLtMatmulAlgoConfigSetAttribute sets). Hopper
/// (wgmma) algorithms refuse the default cluster shape (AUTO, 0) and need an explicit one.
struct LtConfig {
  int algo = 0;
  std::uint32_t tile = 0, stages = 0, swizzle = 0, custom = 0;
  std::uint16_t cluster = 0;  ///< CUBLASLT_CLUSTER_SHAPE_* id; 0 = AUTO

  /// "algo:tile:stages:swizzle:custom", with ":cluster" when it is not AUTO: what parse() reads.
  std::string text() const {
    return std::to_string(algo) + ":" + std::to_string(tile) + ":" + std::to_string(stages) + ":" +
           std::to_string(swizzle) + ":" + std::to_string(custom) +
           (cluster != 0 ? ":" + std::to_string(cluster) : std::string());
  }
  /// Reads "algo:tile:stages:swizzle:custom[:cluster]" (cuBLASLt's numeric ids, as
  /// gpu_cublaslt_kernels writes them); throws Error(invalid_argument) naming `option` and the
  /// text otherwise.
  static LtConfig parse(const std::string& option, const std::string& text) {
    std::vector<std::uint64_t> v;
    std::size_t start = 0;
    while (true) {
      const auto end = text.find(':', start);
      const std::string part = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
      std::uint64_t value = 0;
      const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
      if (part.empty() || ec != std::errc() || ptr != part.data() + part.size() || value > 0x7fffffff)
        throw Error(ErrorCode::invalid_argument,
                    option + " '" + text + "': expected algo:tile:stages:swizzle:custom[:cluster] (numbers)");
      v.push_back(value);
      if (end == std::string::npos) break;
      start = end + 1;
    }
    if (v.size() != 5 && v.size() != 6)
      throw Error(ErrorCode::invalid_argument,
                  option + " '" + text + "': expected algo:tile:stages:swizzle:custom[:cluster] (5 or 6 numbers)");
    if (v.size() == 6 && v[5] > 0xffff)
      throw Error(ErrorCode::invalid_argument, option + " '" + text + "': cluster shape id above 65535");
    return {static_cast<int>(v[0]), static_cast<std::uint32_t>(v[1]), static_cast<std::uint32_t>(v[2]),
            static_cast<std::uint32_t>(v[3]), static_cast<std::uint32_t>(v[4]),
            static_cast<std::uint16_t>(v.size() == 6 ? v[5] : 0)};
  }
  /// The config as JSON fields.
  nlohmann::json to_json() const {
    return {{"algo", algo}, {"tile", tile}, {"stages", stages}, {"swizzle", swizzle},
            {"custom", custom}, {"cluster", cluster}, {"config", text()}};
  }
  /// The config of to_json()'s fields.
  static LtConfig from_json(const nlohmann::json& j) {
    return {j.at("algo").get<int>(), j.at("tile").get<std::uint32_t>(),
            j.at("stages").get<std::uint32_t>(), j.at("swizzle").get<std::uint32_t>(),
            j.at("custom").get<std::uint32_t>(), j.value("cluster", std::uint16_t{0})};
  }
};

/// Workspace the benchmarks give cuBLASLt (configs that need more are refused by configure()).
inline constexpr std::size_t kLtWorkspaceBytes = std::size_t{64} << 20;

/// The cuBLASLt descriptors of the problem, in cuBLAS's column-major terms (C^T = op(B)^T *
/// op(A)^T, as cublas_gemm), and the calls that enumerate, check and run configs.
class LtProblem {
 public:
  explicit LtProblem(const gemm::GemmShape& s, std::size_t workspace_bytes = kLtWorkspaceBytes)
      : api_(CublasLtApi::get()), shape_(s), workspace_(workspace_bytes) {
    check_cublas(api_.create(&handle_), "cublasLtCreate");
    in_ = cublas_input_type(s);
    out_ = cublas_output_type(s);
    check_cublas(api_.desc_create(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    const cublasOperation_t ta = s.b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;  // cuBLAS's A is our B
    const cublasOperation_t tb = s.a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;  // cuBLAS's B is our A
    check_cublas(api_.desc_set(op_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "TRANSA");
    check_cublas(api_.desc_set(op_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "TRANSB");
    // Stored (column-major) shapes: cuBLAS's A is N x K (op N) or K x N (op T), ld = ldb.
    const std::uint64_t n = s.N, m = s.M, k = s.K;
    make_layout(&a_desc_, in_, s.b_transposed ? k : n, s.b_transposed ? n : k, s.ldb());
    make_layout(&b_desc_, in_, s.a_transposed ? m : k, s.a_transposed ? k : m, s.lda());
    make_layout(&c_desc_, out_, n, m, s.N);
  }
  ~LtProblem() {
    api_.layout_destroy(a_desc_);
    api_.layout_destroy(b_desc_);
    api_.layout_destroy(c_desc_);
    api_.desc_destroy(op_);
    api_.destroy(handle_);
  }
  LtProblem(const LtProblem&) = delete;
  LtProblem& operator=(const LtProblem&) = delete;

  /// Every config cublasLtMatmulAlgoCheck accepts (workspace within ours), at most `limit`;
  /// `stopped` tells whether the limit cut the enumeration. Per algo, tile, stages, swizzle
  /// and custom option: the AUTO cluster shape, or where the algo refuses it, the first
  /// explicit cluster shape (in cuBLASLt's id order, 1x1x1 first) that it accepts.
  std::vector<LtConfig> valid_configs(std::size_t limit, bool* stopped) {
    std::vector<int> ids(4096);
    int count = 0;
    check_cublas(api_.algo_ids(handle_, CUBLAS_COMPUTE_32F, CUDA_R_32F, in_, in_, out_, out_,
                               static_cast<int>(ids.size()), ids.data(), &count),
                 "cublasLtMatmulAlgoGetIds");
    ids.resize(static_cast<std::size_t>(count));
    std::vector<LtConfig> valid;
    *stopped = false;
    for (int id : ids) {
      cublasLtMatmulAlgo_t algo;
      if (!init(id, &algo)) continue;
      auto tiles = cap_list(algo, CUBLASLT_ALGO_CAP_TILE_IDS);
      auto stages = cap_list(algo, CUBLASLT_ALGO_CAP_STAGES_IDS);
      std::uint32_t swizzle_support = 0;
      std::int32_t custom_max = 0;
      std::size_t written = 0;
      api_.algo_cap(&algo, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT, &swizzle_support,
                    sizeof swizzle_support, &written);
      api_.algo_cap(&algo, CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX, &custom_max, sizeof custom_max, &written);
      for (std::uint32_t tile : tiles)
        for (std::uint32_t stage : stages)
          for (std::uint32_t swizzle = 0; swizzle <= (swizzle_support ? 1u : 0u); ++swizzle)
            for (std::int32_t custom = 0; custom <= std::max(custom_max, 0); ++custom) {
              LtConfig config{id, tile, stage, swizzle, static_cast<std::uint32_t>(custom)};
              cublasLtMatmulAlgo_t configured;
              bool accepted = configure(config, &configured);
              for (std::uint16_t cluster = kFirstCluster; !accepted && cluster < kClusterEnd; ++cluster) {
                config.cluster = cluster;
                accepted = configure(config, &configured);
              }
              if (!accepted) continue;
              valid.push_back(config);
              if (valid.size() >= limit) {
                *stopped = true;
                return valid;
              }
            }
    }
    return valid;
  }

  /// The algo of `config` set and checked; false when cuBLASLt refuses it for this problem.
  bool configure(const LtConfig& c, cublasLtMatmulAlgo_t* algo) {
    if (!init(c.algo, algo)) return false;
    const std::int32_t splits = 1;
    api_.algo_config_set(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &c.tile, sizeof c.tile);
    api_.algo_config_set(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &c.stages, sizeof c.stages);
    api_.algo_config_set(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splits, sizeof splits);
    api_.algo_config_set(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &c.swizzle, sizeof c.swizzle);
    api_.algo_config_set(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &c.custom, sizeof c.custom);
    api_.algo_config_set(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &c.cluster, sizeof c.cluster);
    cublasLtMatmulHeuristicResult_t result{};
    return api_.algo_check(handle_, op_, a_desc_, b_desc_, c_desc_, c_desc_, algo, &result) ==
               CUBLAS_STATUS_SUCCESS &&
           result.workspaceSize <= workspace_.bytes();
  }

  /// cuBLASLt's own first choice for the problem (its heuristic), as a config; nullopt when
  /// it has none, or when it splits K (split-k configs are not among those this file runs).
  std::optional<LtConfig> heuristic_choice() {
    cublasLtMatmulPreference_t pref = nullptr;
    check_cublas(api_.pref_create(&pref), "cublasLtMatmulPreferenceCreate");
    const std::uint64_t ws = workspace_.bytes();
    api_.pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const auto status = api_.heuristic(handle_, op_, a_desc_, b_desc_, c_desc_, c_desc_, pref, 1,
                                       &result, &found);
    api_.pref_destroy(pref);
    if (status != CUBLAS_STATUS_SUCCESS || found == 0) return std::nullopt;
    LtConfig c;
    std::size_t written = 0;
    const auto get = [&](cublasLtMatmulAlgoConfigAttributes_t attr, auto* value) {
      api_.algo_config_get(&result.algo, attr, value, sizeof *value, &written);
    };
    get(CUBLASLT_ALGO_CONFIG_ID, &c.algo);
    get(CUBLASLT_ALGO_CONFIG_TILE_ID, &c.tile);
    get(CUBLASLT_ALGO_CONFIG_STAGES_ID, &c.stages);
    get(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &c.swizzle);
    get(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &c.custom);
    get(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &c.cluster);
    std::int32_t splits = 1;
    get(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splits);
    if (splits != 1) return std::nullopt;  // a split-k choice: not a config this file can run
    return c;
  }

  /// One product C = alpha * op(A) * op(B) + beta * C (our row-major operands) with a
  /// configured algo, on the default stream.
  void run(const cublasLtMatmulAlgo_t& algo, const void* a, const void* b, void* c) {
    const float alpha = static_cast<float>(gemm::kAlpha), beta = static_cast<float>(gemm::kBeta);
    check_cublas(api_.matmul(handle_, op_, &alpha, b, a_desc_, a, b_desc_, &beta, c, c_desc_, c,
                             c_desc_, &algo, workspace_.get(), workspace_.bytes(), nullptr),
                 "cublasLtMatmul");
  }

 private:
  /// `algo` initialized as algorithm `id` for the problem's types; false where cuBLASLt has
  /// no such algorithm for them.
  bool init(int id, cublasLtMatmulAlgo_t* algo) {
    return api_.algo_init(handle_, CUBLAS_COMPUTE_32F, CUDA_R_32F, in_, in_, out_, out_, id, algo) ==
           CUBLAS_STATUS_SUCCESS;
  }
  void make_layout(cublasLtMatrixLayout_t* desc, cudaDataType type, std::uint64_t rows,
                   std::uint64_t cols, std::int64_t ld) {
    check_cublas(api_.layout_create(desc, type, rows, cols, ld), "cublasLtMatrixLayoutCreate");
  }
  std::vector<std::uint32_t> cap_list(const cublasLtMatmulAlgo_t& algo,
                                      cublasLtMatmulAlgoCapAttributes_t attr) {
    std::size_t bytes = 0;
    std::vector<std::uint32_t> values;
    if (api_.algo_cap(&algo, attr, nullptr, 0, &bytes) == CUBLAS_STATUS_SUCCESS && bytes > 0) {
      values.resize(bytes / sizeof(std::uint32_t));
      api_.algo_cap(&algo, attr, values.data(), values.size() * sizeof(std::uint32_t), &bytes);
    }
    if (values.empty()) values.push_back(0);  // UNDEFINED: the algo has no such choice
    return values;
  }
  static constexpr std::uint16_t kFirstCluster = CUBLASLT_CLUSTER_SHAPE_1x1x1;
  static constexpr std::uint16_t kClusterEnd = CUBLASLT_CLUSTER_SHAPE_END;

  const CublasLtApi& api_;
  gemm::GemmShape shape_;
  detail::DeviceMemory workspace_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_desc_ = nullptr, b_desc_ = nullptr, c_desc_ = nullptr;
  cudaDataType in_ = CUDA_R_16F, out_ = CUDA_R_16F;
};

}  // namespace ktune::bench
