// Registers the built-in kernel templates with the registry; the list of families lives here
// so that a static library never drops a template through unused-object elimination.
#include "builtin_templates.h"

namespace ktune {

void register_builtin_templates() {
  register_template(make_copy_template());
  register_template(make_faults_template());
  register_template(make_elementwise_template());
  register_template(make_reduction_template());
  register_template(make_layernorm_template());
  register_template(make_gemm_simt_template());
  register_template(make_gemm_mma_template());
}

}  // namespace ktune
