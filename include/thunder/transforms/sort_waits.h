// Collective scheduling: each collective (prims.all_reduce) is issued as soon
// as its inputs exist, and each prims.wait sinks to just before the first
// statement that reads its result (or the end of the trace), so the
// statements in between overlap the communication. Everything else keeps its
// order. A trace without collectives comes back unchanged.
#pragma once

#include "thunder/core/trace.h"

namespace thunder {

Trace sort_waits(const Trace& trace);

// Does the trace (top level) contain a collective or a wait?
bool has_collectives(const Trace& trace);

}  // namespace thunder
