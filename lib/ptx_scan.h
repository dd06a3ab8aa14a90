// Reading NVRTC's PTX for what a kernel does before it waits for the previous grid: the first
// global memory access of a piece of PTX, and whether griddepcontrol.wait comes before
// every such access on every path (what programmatic launch needs of a marked kernel step).
#pragma once

#include <string>

namespace ktune::detail {

/// The first instruction of `body` (as written, read as grid_dependency_wait_problem reads
/// statements) that may touch global memory (a global or generic load
/// or store, an atomic or reduction, an asynchronous or bulk copy, a prefetch, a texture or
/// surface access, a wmma fragment load or store, a cache discard or priority change, a tensor
/// map change), or "" when there is none. Kernel parameters, constant memory, the thread's local
/// memory and shared memory (the CTA's or its cluster's) do not count: no other grid writes
/// them. Comments are ignored and a predicate guard (@%p) is looked past.
std::string first_global_memory_access(const std::string& body);

/// "" when every path through entry `entry` of `ptx` (following its branches, conditional ones
/// both ways, and loops) executes an unguarded griddepcontrol.wait before anything that could
/// touch global memory, so every thread waits before any access whatever path it takes (a path
/// may also end at ret or exit without an access). Otherwise a sentence saying what is wrong:
/// no such entry, no wait in it, or the first instruction found on a path without a wait
/// (quoted from the PTX); a call or an indirect branch on such a path counts as an access,
/// since it cannot be followed.
std::string grid_dependency_wait_problem(const std::string& ptx, const std::string& entry);

}  // namespace ktune::detail
