// The prologue of a cache entry (private to src/frontend): what the entry
// assumes of its arguments, captured tensors and global state, as a printable
// trace (last_prologue_trace). The checks themselves run as a compiled
// signature compare (runtime/guard.h); this trace states them for people.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <utility>
#include <vector>

#include "thunder/core/trace.h"
#include "thunder/runtime/flat_args.h"
#include "thunder/runtime/program.h"
#include "value_guards.h"

namespace thunder::detail {

// How the trace was made from one call's arguments.
struct TracedCall {
  Trace trace;
  std::vector<Program::Input> sources;  // per trace input
  std::vector<at::Tensor> captured;     // concrete tensors met while tracing
  std::vector<std::string> arg_names;   // per flat argument
  std::vector<Value> arg_values;        // per flat argument: proxy or literal
};

// Sets of trace inputs whose tensors share storage in this call.
std::vector<std::vector<ProxyPtr>> alias_groups(const TracedCall& c,
                                                const std::vector<FlatArg>& args);

Trace build_prologue(const TracedCall& c, const std::vector<FlatArg>& args,
                     const std::vector<std::vector<ProxyPtr>>& alias_groups, bool grad_mode,
                     const std::vector<int64_t>* module_training,
                     const std::vector<std::pair<std::string, bool>>& state_flags = {},
                     bool module_identities = false,
                     const std::vector<EqualGuard>& equal_guards = {});

}  // namespace thunder::detail
