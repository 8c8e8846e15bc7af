// JitOptions: how thunder::jit compiles (aggregate; use designated initializers).
#pragma once

#include <string>
#include <vector>

namespace thunder {

struct JitOptions {
  // Executors in priority order (claiming, then each one's fusion passes in
  // this order). "dnnl" runs float32 CPU matmul and linear as oneDNN
  // primitives where that measured faster than ATen for the shape, fusing the
  // elementwise epilogues after a product (docs/matmul.md; THUNDER_DNNL=0
  // turns it off); it comes first so that its epilogue pass sees those
  // statements before cpu_fuser makes regions of them. "cpu_fuser" fuses
  // elementwise, view and reduction prims into generated kernels
  // (docs/fusion.md); "attention" runs float32 and float64 CPU attention
  // forward and backward without [.., T, S] probabilities
  // (docs/attention.md); "aten" claims every symbol with libtorch's kernels;
  // "aten_prims" runs every composite as its decomposition into prims.
  std::vector<std::string> executors = {"dnnl", "cpu_fuser", "attention", "aten"};
  // How cpu_fuser forms regions.
  std::string fusion_type = "dataflow";  // "consecutive" or "dataflow"
  // Choose the saved-for-backward set by a minimum cut, recomputing cheap
  // values in the backward (docs/rematerialization.md); false saves exactly
  // what the backward reads.
  bool rematerialize = true;
  // Keep prims.uniform (libtorch's stateful generator) instead of rewriting
  // every draw into get_and_update_rng_state + the pure uniform_philox
  // (replace_uniform), which a backward can recompute instead of saving.
  bool disable_replace_uniform = false;
  // Rewrite attention written out by hand (matmul, scale by 1/sqrt(D),
  // optional causal masked_fill, softmax, matmul) into one
  // ltorch.scaled_dot_product_attention, which the "attention" executor runs
  // without [.., T, S] probabilities (recognize_attention, docs/attention.md).
  bool recognize_attention = true;
  // Keep in-place ops as traced (out-of-place op + prims.copy_ writing into
  // the destination at run time) instead of functionalizing them, to debug
  // the pass. Reordering passes are not safe on such a trace, and autodiff
  // cannot differentiate through prims.copy_ (docs/inplace.md).
  bool skip_inplace_functionalization = false;
  // Error when the backward reads a forward value that no grad rule saved
  // explicitly (thunder::save_for_backward; built-in rules count as explicit).
  // The saved set is then exactly those values: rematerialization does not run.
  bool strict_saved_for_backward = false;
  // Schedule collectives (sort_waits, docs/distributed.md): each issued as
  // soon as its input exists, each wait just before its result's first
  // reader, so computation overlaps communication. false keeps the order the
  // grad rules and bucketing wrote (a wait right after its collective, or a
  // bucket's at its first reader): blocking communication, to measure what
  // the overlap buys.
  bool schedule_collectives = true;
  std::string cache = "shapes";  // "shapes" or "none" (retrace every call)
  // Names of the traced function's inputs, in order (default x0, x1, ...).
  std::vector<std::string> arg_names = {};
  // With cache = "shapes": at most this many compiled entries; a compile
  // beyond it drops the oldest entry (its programs, kernels' symbols and
  // traces are freed once no call runs them).
  int64_t max_cache_entries = 64;
};

// Throws thunder::Error naming an unknown executor, fusion_type or cache
// value, or a max_cache_entries below 1.
void validate(const JitOptions& o);

}  // namespace thunder
