// Registers the built-in kernel templates with the registry; the list of families lives here
// so that a static library never drops a template through unused-object elimination.
#include "builtin_templates.h"

namespace ktune {

void register_builtin_templates() {
  register_template(make_copy_template());
  register_template(make_faults_template());
}

}  // namespace ktune
