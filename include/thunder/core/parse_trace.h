// The trace parser: reads back exactly what the trace printer (Trace::str)
// writes, so a pass can be run on a trace kept as text (thunder-opt, golden
// pass tests) instead of only end to end through thunder::jit.
//
// It reads the header comments (the first is the provenance, the others
// notes), `def name(inputs):`, one `# x: "cpu f32[3]"` line per input (with
// `requires_grad` and tag words after the type), statements with their output
// type comments, nested `#` decomposition lines at any depth, the
// `backward:`/`forward:` marker lines of joint traces, `del` lines and
// `return`. Symbols are looked up by id in symbol_registry(): the caller
// registers the ones it needs first (ltorch::ensure_registered() brings every
// prims.* and ltorch.* symbol); fusion regions (`cppFusion0`) are not in it
// and are rejected.
//
// What the text does not say is recomputed as tracing computes it: an
// output's requires_grad from its arguments (and its `detached` tag), a
// subsymbol's origins from the statements it is nested in. A prim's meta runs
// on the parsed arguments, so a type comment that disagrees with it is an
// error. Every parsed name is reserved, so a later pass's new names never
// collide with them.
//
// Errors are thunder::Error with a message "line N: <what was expected>",
// N counting from 1 in the whole text.
#pragma once

#include <string_view>
#include <vector>

#include "thunder/core/trace.h"

namespace thunder {

// One trace; anything but blank and `;` lines after its `return` is an error.
Trace parse_trace(std::string_view text);

// Every trace in the text, in order (e.g. a forward followed by its backward).
// Blank lines and lines starting with `;` (FileCheck directives) are skipped.
// A name that an earlier trace defined with the same type is the same value
// (a backward's saved inputs are the forward's values, as in memory).
std::vector<Trace> parse_traces(std::string_view text);

}  // namespace thunder
