// User templates: a kernel a user brings as a plain .cu file plus a T1 / Kernel Tuner JSON
// document (ConfigurationSpace + KernelSpecification), tuned without writing C++. The T1
// KernelSpecification gives the kernel name, launch geometry (LocalSize, GridDivX/Y/Z over
// ProblemSize, or GlobalSize) and arguments (vectors with sizes and fills, scalars); a
// "KtuneExtensions" object adds what T1 cannot say: named problem dimensions and the
// independent reference kernel run on the GPU (Workload::device_reference). The rules are in
// docs/custom_templates.md.
//
// A registered user template is also announced to ktune-worker processes started later
// (through the KTUNE_USER_TEMPLATES variable of their environment, read when the worker
// registers its built-in templates; the registering process's own environment is left as it
// is), so GpuMeasurer works with it like with a built-in one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ktune/template.h"

namespace ktune {

/// Where a user template's definition lives.
struct UserTemplateFiles {
  std::string spec_path;    ///< T1 JSON with ConfigurationSpace and KernelSpecification
  std::string kernel_path;  ///< kernel .cu; "" = KernelSpecification.KernelFile beside spec_path
};

/// Reads a user template from its files. Throws Error naming the file and the field
/// ("saxpy.T1.json: KernelSpecification.Arguments[2].Size: ...") for a bad definition, and
/// Error(not_found) for a missing file.
std::shared_ptr<const KernelTemplate> load_user_template(const UserTemplateFiles& files);

/// Builds a user template from already read texts: the JSON document, the kernel source and
/// the reference source ("" when the document names no reference file). `origin` names the
/// document in errors; `kernel_name` names the kernel source in compiler messages ("" = the
/// document's KernelFile).
std::shared_ptr<const KernelTemplate> make_user_template(const std::string& spec_json,
                                                         const std::string& kernel_source,
                                                         const std::string& reference_source,
                                                         const std::string& origin,
                                                         const std::string& kernel_name = "");

/// Loads a user template, registers it (find_template finds it by its name) and announces it
/// to worker processes started afterwards; returns it. Thread-safe: templates registered from
/// several threads at once are all announced. Throws like load_user_template, and
/// Error(invalid_argument) when the name is that of a built-in template.
std::shared_ptr<const KernelTemplate> register_user_template(const UserTemplateFiles& files);

/// Registers the user templates listed in $KTUNE_USER_TEMPLATES (set by
/// register_user_template in a parent process). A broken entry is reported on stderr and
/// skipped. Called when the built-in templates are registered.
void register_user_templates_from_environment();

}  // namespace ktune
