// A compiled program: the final execution trace lowered to a flat vector of
// instructions (kernel pointer, operand slots, frees) over slot arrays of
// at::Tensor and c10::Scalar. Running it does no lookups, string work or
// allocation of its own. A program is immutable once lowered: each run takes
// its slot arrays (a frame) from its thread, so any number of threads may run
// one program at once.
#pragma once

#include <memory>
#include <vector>

#include "thunder/executors/executor.h"
#include "thunder/runtime/flat_args.h"

namespace thunder {

// Whether a statement's kernel may run a matrix product: a product symbol,
// one from a product's decomposition, or a composite claimed whole that
// contains one. Programs with such a statement hold OpenBLAS to one thread
// while they run (runtime/blas_threads.h).
bool runs_matrix_product(const BoundSymbol& b);

class Program {
 public:
  // Where a trace input comes from at call time.
  struct Input {
    enum class Source : uint8_t { ArgTensor, ArgNumber, Captured };
    Source source;
    int32_t index;  // into the call's flat arguments, or the captured tensors
  };

  // Lowers a claimed trace. `inputs[i]` feeds trace.inputs[i]; `executors`
  // resolves BoundSymbol::executor.
  static Program lower(const Trace& trace, const std::vector<Input>& inputs,
                       const std::vector<Executor*>& executors);

  // Runs with the call's flat arguments (indexed by Input::index) and the
  // captured tensors; flat outputs go to `outs`.
  void run(const FlatArg* args, const std::vector<at::Tensor>& captured,
           std::vector<at::Tensor>& outs) const;

 private:
  struct InputSlot {
    Input input;
    int32_t slot;
    bool is_number;
  };
  std::vector<InputSlot> inputs_;
  std::vector<Instr> instrs_;
  std::vector<int32_t> output_slots_;      // -1: None
  int32_t n_tensors_ = 0, n_numbers_ = 0;  // the frame's size
  bool multiplies_ = false;  // some statement runs a matrix product (BlasThreadsScope)
  std::vector<std::shared_ptr<const Symbol>> symbols_;  // the trace's region symbols
};

}  // namespace thunder
