// The named passes: one table from a pass name (as typed on thunder-opt's
// command line) to a function over traces. A pass takes the traces of one
// program (usually one; a forward followed by its backward for
// `rematerialize`) and returns its result, which may be more traces
// (`split`). Adding a pass is one row in src/frontend/passes.cpp.
//
// Traces read from text carry what the printer writes; see parse_trace.h for
// what it does not (executor claims, statement origins). `fusion` therefore
// claims first when nothing in its input is claimed.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "thunder/core/trace.h"

namespace thunder {

struct PassOptions {
  std::vector<std::string> executors = {"dnnl", "cpu_fuser", "attention", "aten"};  // claim, fusion
  std::string fusion_type = "dataflow";                                             // fusion
};

struct NamedPass {
  std::string name;
  std::string description;  // one line, for --help
  std::function<std::vector<Trace>(const std::vector<Trace>&, const PassOptions&)> run;
};

// Every pass, in the order --help lists them.
const std::vector<NamedPass>& named_passes();

// Throws thunder::Error naming the known passes if `name` is not one.
const NamedPass& find_pass(std::string_view name);

}  // namespace thunder
