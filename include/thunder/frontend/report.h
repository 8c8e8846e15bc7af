// The compile report: one self-contained HTML page (no scripts, styles or
// fonts fetched from anywhere) showing what thunder::jit did on the last
// compile of a jitted function: every stage of the forward and backward with
// what each pass changed, the final traces as dataflow graphs with their
// fusion regions and generated C++, the guards, the saved-for-backward
// values and the time each pass took. docs/report.md shows one.
//
//   thunder::write_report(jfn, "report.html");
//
// With THUNDER_REPORT_DIR=dir set, every compile (cache miss) writes
// dir/report-<n>.html as well, with no change to the program.
#pragma once

#include <string>

#include "thunder/frontend/jit.h"

namespace thunder {

namespace detail {
// Throws thunder::Error naming write_report before the first call, and
// naming `path` when it cannot be written.
void write_report(const JitState& s, const std::string& path);
// The THUNDER_REPORT_DIR hook, called by the jit after each compile; a report
// that cannot be written is a warning on stderr, never a failed call.
void write_report_if_requested(const JitState& s);
}  // namespace detail

template <typename F>
void write_report(const Jitted<F>& j, const std::string& path) {
  detail::write_report(j.state(), path);
}

}  // namespace thunder
