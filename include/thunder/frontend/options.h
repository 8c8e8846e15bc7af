// JitOptions: how thunder::jit compiles (aggregate; use designated initializers).
#pragma once

#include <string>
#include <vector>

namespace thunder {

struct JitOptions {
  // Executors in priority order. "cpu_fuser" fuses elementwise, view and
  // reduction prims into generated kernels (docs/fusion.md); "aten" claims
  // every symbol with libtorch's kernels; "aten_prims" runs every composite as
  // its decomposition into prims.
  std::vector<std::string> executors = {"cpu_fuser", "aten"};
  // How cpu_fuser forms regions.
  std::string fusion_type = "dataflow";  // "consecutive" or "dataflow"
  // Validated now; they take effect with the passes that read them
  // (rematerialization and stateless RNG, functionalization), which are not
  // built yet.
  bool rematerialize = true;
  bool disable_replace_uniform = false;
  bool skip_inplace_functionalization = false;
  // Error when the backward reads a forward value that no grad rule saved
  // explicitly (thunder::save_for_backward; built-in rules count as explicit).
  bool strict_saved_for_backward = false;
  std::string cache = "shapes";  // "shapes" or "none" (retrace every call)
  // Names of the traced function's inputs, in order (default x0, x1, ...).
  std::vector<std::string> arg_names = {};
};

// Throws thunder::Error naming an unknown executor, fusion_type or cache value.
void validate(const JitOptions& o);

}  // namespace thunder
