// Collective scheduling: each collective (all_reduce, reduce_scatter,
// all_gather) is issued as soon as its inputs exist, and each prims.wait
// sinks to just before the first statement that reads its result (or the end
// of the trace), so the statements in between overlap the communication.
// All-gathers (FSDP's parameters, whose shards exist from the start) run at
// most 2 ahead of their waits: the next one is issued when a wait is
// emitted, instead of gathering every parameter before any compute. Everything
// else keeps its order, except a bucket's unfused pack (shape prims and cats
// read only by collectives), which moves up with its collective. A trace
// without collectives comes back unchanged.
#pragma once

#include "thunder/core/trace.h"

namespace thunder {

Trace sort_waits(const Trace& trace);

// Does the trace (top level) contain a collective or a wait?
bool has_collectives(const Trace& trace);

}  // namespace thunder
