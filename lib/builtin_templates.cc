// Registers the built-in kernel templates with the registry; the list of families lives here
// so that a static library never drops a template through unused-object elimination.
#include "builtin_templates.h"
#include "ktune/user_template.h"

namespace ktune {

void register_builtin_templates() {
  register_template(make_copy_template());
  register_template(make_faults_template());
  register_template(make_elementwise_template());
  register_template(make_reduction_template());
  register_template(make_layernorm_template());
  register_template(make_gemm_simt_template());
  register_template(make_gemm_mma_template());
  register_template(make_gemm_wgmma_template());
  register_template(make_conv2d_simt_template());
  register_template(make_conv2d_mma_template());
  register_template(make_conv2d_wgmma_template());
  register_user_templates_from_environment();  // user templates announced by a parent process
}

}  // namespace ktune
