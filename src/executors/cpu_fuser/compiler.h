// Compiling generated kernels: the system compiler ($CXX, else c++ on PATH)
// builds each source into a shared object that is dlopen'ed and cached on
// disk under $THUNDER_CACHE_DIR (default ~/.cache/thunder-cpp), keyed by a
// hash of the source, the flags, the compiler's identity (resolved path, size
// and mtime: asking it for --version would mean running it) and the CPU's
// feature flags (the kernels use -march=native). A warm
// process finds every kernel on disk and never runs the compiler. Objects
// are written under a temporary name and renamed into place, so concurrent
// processes never see half-written files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace thunder::cpu_fuser {

using KernelFn = void (*)(void* const*, int64_t);

// False when THUNDER_DISABLE_CODEGEN=1 or no compiler is found (read per call).
bool codegen_enabled();

// Counts a region that runs on the ATen fallback (for cpu_fuser_stats()).
void count_fallback_region();

// Loads (from memory, disk, or by compiling: the missing ones together, one
// compiler process per core) one kernel per source; nullptr where compiling
// failed. compile = false: nullptr for those that would need the compiler.
std::vector<KernelFn> load_kernels(const std::vector<std::string>& sources, bool compile = true);

}  // namespace thunder::cpu_fuser
