// Trace: a small program of bound symbols over proxies, printed in Thunder's
// style. Passes are functions Trace -> Trace; each stamps its result with a
// provenance line ("# Constructed by Dead Code Elimination (took 0 ms)").
#pragma once

#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "thunder/core/bound_symbol.h"

namespace thunder {

class Trace {
 public:
  std::string fn_name = "computation";
  std::vector<ProxyPtr> inputs;  // flat, in calling order
  std::vector<BoundSymbol> bsyms;
  Value output;                    // what the program returns
  std::string provenance;          // "Constructed by ..." (without '#')
  std::vector<std::string> notes;  // extra header comment lines
  // Symbols made for this trace (fusion regions), kept alive by every trace
  // and program that may refer to them; copied by empty_like.
  std::vector<std::shared_ptr<const Symbol>> owned_symbols;

  const std::vector<BoundSymbol>& bound_symbols() const { return bsyms; }

  // Fresh deterministic names: "t0", "t1", ... for tensors, "i0"/"f0"/"b0" for numbers.
  std::string new_name(const std::string& prefix);
  // Registers a name as taken (inputs named by the user or by a module path).
  void reserve_name(const std::string& name);
  bool name_taken(const std::string& name) const;

  // A copy with the same inputs, output and name counters but no statements:
  // the starting point of a pass.
  Trace empty_like() const;

  std::string str() const;

 private:
  std::map<std::string, int> counters_;
  std::vector<std::string> reserved_;
};

std::ostream& operator<<(std::ostream& os, const Trace& t);

// The provenance a pipeline stage stamps on its trace:
// "Constructed by <pass> (took <ms> ms)".
std::string stage_provenance(std::string_view pass, double ms);
// The pass name of a stage's provenance ("" when it is not a stage's).
std::string_view stage_name(const Trace& t);
// The first stage made by `pass` (exact pass name, e.g. "Rematerialization");
// throws thunder::Error listing the stages there are when none matches.
const Trace& find_stage(const std::vector<Trace>& stages, std::string_view pass);
// (The reference points into `stages`: keep the vector, e.g. last_traces(jfn), alive.)
const Trace& find_stage(std::vector<Trace>&& stages, std::string_view pass) = delete;
bool has_stage(const std::vector<Trace>& stages, std::string_view pass);
// Every statement of a trace with this name is a backward statement
// (StmtTag::BACKWARD); other traces mark runs of them with these lines.
inline constexpr const char* kBackwardFnName = "backward";
inline constexpr const char* kBackwardMarker = "backward:";
inline constexpr const char* kForwardMarker = "forward:";
// One statement (and its decomposition as '#' lines), indented by `indent` spaces.
std::string bsym_str(const BoundSymbol& b, int indent = 0);

}  // namespace thunder
