// Where an installed ktune package lives, for programs built against it. The package may be
// installed under another prefix than the one its build was configured with (cmake --install
// --prefix), so find_package(ktune) defines KTUNE_PACKAGE_LIBEXECDIR for its users with the
// folder it was actually found in, and this header hands that folder to the library when the
// program starts: ktune-worker is then found in <prefix>/libexec (find_worker_executable()).
#pragma once

namespace ktune::detail {

/// Records the libexec folder of the installed package a program was built against; the first
/// call wins (one program, one package). Returns true.
bool register_package_libexec_dir(const char* dir);

#ifdef KTUNE_PACKAGE_LIBEXECDIR
/// Set at start-up in programs built through find_package(ktune).
inline const bool package_libexec_registered = register_package_libexec_dir(KTUNE_PACKAGE_LIBEXECDIR);
#endif

}  // namespace ktune::detail
