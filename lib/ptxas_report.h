// Parser of the ptxas verbose report (`--ptxas-options=-v`) that NVRTC appends to its log:
// registers, static shared memory, spills, stack frame and constant bank per kernel entry.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ktune/trial.h"

namespace ktune::detail {

/// Resources of each kernel entry in the order ptxas reports them. Lines that are not part of
/// the report (warnings, notes) are skipped; fields absent from the report stay -1.
std::vector<std::pair<std::string, Resources>> parse_ptxas_report(const std::string& log);

}  // namespace ktune::detail
