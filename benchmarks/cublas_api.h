// The vendor GEMM libraries the GPU benchmarks compare against, loaded at run time (dlopen of
// libcublas.so.13 / libcublasLt.so.13, or .12), so that no benchmark links anything beyond
// ktune: the entry points used, a status check that names the failed call, and the cuBLAS call
// that computes a gemm problem of templates/gemm (row-major C) in cuBLAS's column-major terms.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <dlfcn.h>

#include <initializer_list>
#include <string>
#include <type_traits>

#include "ktune/error.h"
#include "templates/gemm/gemm_problem.h"

namespace ktune::bench {

/// Opens the first of `names` that loads; throws Error(not_found) naming them all otherwise.
inline void* open_vendor_library(std::initializer_list<const char*> names, const std::string& what) {
  std::string tried;
  for (const char* name : names) {
    if (void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return lib;
    tried += (tried.empty() ? "" : ", ") + std::string(name);
  }
  throw Error(ErrorCode::not_found, "cannot load " + what + " (tried " + tried + ")");
}

/// Sets `fn` to `symbol` of `lib`; throws Error(not_found) naming the symbol and `what`.
template <class Fn>
void load_vendor_symbol(void* lib, Fn& fn, const char* symbol, const std::string& what) {
  fn = reinterpret_cast<std::remove_reference_t<Fn>>(dlsym(lib, symbol));
  if (!fn) throw Error(ErrorCode::not_found, std::string("no ") + symbol + " in " + what);
}

/// Throws Error(cuda_error) "<what> failed: cublas status N" unless `status` is success.
inline void check_cublas(cublasStatus_t status, const std::string& what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(ErrorCode::cuda_error,
                what + " failed: cublas status " + std::to_string(static_cast<int>(status)));
}

/// The cuBLAS entry points the benchmarks use.
struct CublasApi {
  decltype(&cublasCreate_v2) create = nullptr;              ///< cublasCreate
  decltype(&cublasDestroy_v2) destroy = nullptr;            ///< cublasDestroy
  decltype(&cublasSetMathMode) set_math_mode = nullptr;     ///< cublasSetMathMode
  /// cublasGemmEx (spelled out: C++ sees more than one overload of it)
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                            const void*, const void*, cudaDataType, int, const void*,
                            cudaDataType, int, const void*, void*, cudaDataType, int,
                            cublasComputeType_t, cublasGemmAlgo_t) = nullptr;

  /// Loads libcublas once; throws Error(not_found) naming what is missing.
  static const CublasApi& get() {
    static const CublasApi api = [] {
      CublasApi a;
      const std::string what = "cuBLAS";
      void* lib = open_vendor_library({"libcublas.so.13", "libcublas.so.12", "libcublas.so"}, what);
      load_vendor_symbol(lib, a.create, "cublasCreate_v2", what);
      load_vendor_symbol(lib, a.destroy, "cublasDestroy_v2", what);
      load_vendor_symbol(lib, a.set_math_mode, "cublasSetMathMode", what);
      load_vendor_symbol(lib, a.gemm_ex, "cublasGemmEx", what);
      return a;
    }();
    return api;
  }
};

/// The cuBLASLt entry points the benchmarks use (algorithm enumeration and matmul).
struct CublasLtApi {
  decltype(&cublasLtCreate) create = nullptr;                                 ///< handle
  decltype(&cublasLtDestroy) destroy = nullptr;                               ///< handle
  decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;                  ///< operation
  decltype(&cublasLtMatmulDescDestroy) desc_destroy = nullptr;                ///< operation
  decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;               ///< operation
  decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;              ///< operands
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;            ///< operands
  decltype(&cublasLtMatmulAlgoGetIds) algo_ids = nullptr;                     ///< enumeration
  decltype(&cublasLtMatmulAlgoInit) algo_init = nullptr;                      ///< enumeration
  decltype(&cublasLtMatmulAlgoCapGetAttribute) algo_cap = nullptr;            ///< enumeration
  decltype(&cublasLtMatmulAlgoConfigSetAttribute) algo_config_set = nullptr;  ///< enumeration
  decltype(&cublasLtMatmulAlgoConfigGetAttribute) algo_config_get = nullptr;  ///< heuristic's
  decltype(&cublasLtMatmulAlgoCheck) algo_check = nullptr;                    ///< enumeration
  decltype(&cublasLtMatmulPreferenceCreate) pref_create = nullptr;            ///< heuristic
  decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy = nullptr;          ///< heuristic
  decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set = nullptr;         ///< heuristic
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;              ///< heuristic
  decltype(&cublasLtMatmul) matmul = nullptr;                                 ///< the product

  /// Loads libcublasLt once; throws Error(not_found) naming what is missing.
  static const CublasLtApi& get() {
    static const CublasLtApi api = [] {
      CublasLtApi a;
      const std::string what = "cuBLASLt";
      void* lib =
          open_vendor_library({"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}, what);
      load_vendor_symbol(lib, a.create, "cublasLtCreate", what);
      load_vendor_symbol(lib, a.destroy, "cublasLtDestroy", what);
      load_vendor_symbol(lib, a.desc_create, "cublasLtMatmulDescCreate", what);
      load_vendor_symbol(lib, a.desc_destroy, "cublasLtMatmulDescDestroy", what);
      load_vendor_symbol(lib, a.desc_set, "cublasLtMatmulDescSetAttribute", what);
      load_vendor_symbol(lib, a.layout_create, "cublasLtMatrixLayoutCreate", what);
      load_vendor_symbol(lib, a.layout_destroy, "cublasLtMatrixLayoutDestroy", what);
      load_vendor_symbol(lib, a.algo_ids, "cublasLtMatmulAlgoGetIds", what);
      load_vendor_symbol(lib, a.algo_init, "cublasLtMatmulAlgoInit", what);
      load_vendor_symbol(lib, a.algo_cap, "cublasLtMatmulAlgoCapGetAttribute", what);
      load_vendor_symbol(lib, a.algo_config_set, "cublasLtMatmulAlgoConfigSetAttribute", what);
      load_vendor_symbol(lib, a.algo_config_get, "cublasLtMatmulAlgoConfigGetAttribute", what);
      load_vendor_symbol(lib, a.algo_check, "cublasLtMatmulAlgoCheck", what);
      load_vendor_symbol(lib, a.pref_create, "cublasLtMatmulPreferenceCreate", what);
      load_vendor_symbol(lib, a.pref_destroy, "cublasLtMatmulPreferenceDestroy", what);
      load_vendor_symbol(lib, a.pref_set, "cublasLtMatmulPreferenceSetAttribute", what);
      load_vendor_symbol(lib, a.heuristic, "cublasLtMatmulAlgoGetHeuristic", what);
      load_vendor_symbol(lib, a.matmul, "cublasLtMatmul", what);
      return a;
    }();
    return api;
  }
};

/// A cuBLAS handle in default math mode, destroyed with its scope.
struct CublasHandle {
  cublasHandle_t handle = nullptr;  ///< what cuBLAS calls take
  /// Creates the handle; throws Error naming the failed call.
  CublasHandle() {
    check_cublas(CublasApi::get().create(&handle), "cublasCreate");
    check_cublas(CublasApi::get().set_math_mode(handle, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  }
  ~CublasHandle() { CublasApi::get().destroy(handle); }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
};

/// cuBLAS's data type of a gemm problem's inputs.
inline cudaDataType cublas_input_type(const gemm::GemmShape& s) {
  return s.precision == gemm::Precision::f16    ? CUDA_R_16F
         : s.precision == gemm::Precision::bf16 ? CUDA_R_16BF
                                                : CUDA_R_32F;
}

/// cuBLAS's data type of a gemm problem's C.
inline cudaDataType cublas_output_type(const gemm::GemmShape& s) {
  return s.out_f32 ? CUDA_R_32F : cublas_input_type(s);
}

/// cuBLAS call computing our row-major C = alpha * op(A) * op(B) + beta * C, i.e. the
/// column-major C^T = op(B)^T * op(A)^T (cuBLAS's default algorithm choice).
inline void cublas_gemm(cublasHandle_t handle, const gemm::GemmShape& s, const void* A,
                        const void* B, void* C) {
  const float alpha = static_cast<float>(gemm::kAlpha), beta = static_cast<float>(gemm::kBeta);
  const cudaDataType in = cublas_input_type(s);
  const cublasComputeType_t compute =
      s.precision == gemm::Precision::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  // Row-major B 'N' (K x N) is column-major N x K: op N; B 'T' (N x K) is column-major K x N: op T.
  check_cublas(CublasApi::get().gemm_ex(handle, s.b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N,
                            s.a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(s.N),
                            static_cast<int>(s.M), static_cast<int>(s.K), &alpha, B, in,
                            static_cast<int>(s.ldb()), A, in, static_cast<int>(s.lda()), &beta,
                            C, cublas_output_type(s), static_cast<int>(s.N), compute,
                            CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx");
}

}  // namespace ktune::bench
