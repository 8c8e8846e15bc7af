// Executors: who runs each statement of a trace. The claiming pass walks the
// executors in priority order; an executor may claim a whole composite (its
// own kernel), else the statement is replaced by its decomposition and the
// walk repeats on the subsymbols.
//
// A fusion executor also owns the passes that turn the statements it claimed
// into region statements (symbols with Symbol::is_region) and their kernels.
// The pipeline runs every executor's fusion passes in priority order after
// claiming, recording each as a stage; it knows no executor by name.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "thunder/core/trace.h"
#include "thunder/executors/kernel.h"
#include "thunder/transforms/fusion_regions.h"

namespace thunder {

class Executor;

// What a fusion pass may read: its own position in the executor list (the
// value of BoundSymbol::executor on statements it claimed), the list, and the
// region formation strategy.
struct FusionContext {
  int self = -1;
  const std::vector<Executor*>* executors = nullptr;
  FusionStrategy strategy = FusionStrategy::Dataflow;
};

// One step of an executor's fusion, recorded as a pipeline stage named
// `name`; `key` is its name on thunder-opt's command line.
struct FusionPass {
  std::string name;
  std::string key;
  std::function<Trace(const Trace&, const FusionContext&)> run;
};

class Executor {
 public:
  virtual ~Executor() = default;
  virtual std::string_view name() const = 0;
  // Can this executor run the statement as one kernel?
  virtual bool can_claim(const BoundSymbol& b) const = 0;
  // The kernel of a statement this executor claimed (region statements included).
  virtual Kernel kernel(const BoundSymbol& b) const = 0;
  // State the statement's kernel reads through KernelCall::state(), made once
  // when a program is lowered (an operator looked up by name); none by default.
  virtual std::shared_ptr<const void> kernel_state(const BoundSymbol&) const { return nullptr; }
  // The fusion passes of a fusion executor, in order; none for an operator executor.
  virtual std::vector<FusionPass> fusion_passes() const { return {}; }
};

// Looks an executor up by name; throws thunder::Error naming unknown ones and
// listing the known ones.
Executor& executor_by_name(std::string_view name);
std::vector<std::string> executor_names();

// Every executor's fusion passes in priority order, without recording stages
// (for thunder-opt and tests; the pipeline records each pass).
Trace fusion_pass(const Trace& trace, const std::vector<Executor*>& executors,
                  FusionStrategy strategy);

}  // namespace thunder
