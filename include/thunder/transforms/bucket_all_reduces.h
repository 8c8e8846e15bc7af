// Gradient bucketing: the all_reduces of a trace (in the order they appear,
// which in a backward is the order gradients are produced) are grouped
// greedily into buckets of at most `bucket_bytes` (a bucket holds at least
// one tensor); each bucket of two or more becomes one all_reduce of a flat
// pack: cat of the flattened tensors, with a shared scale
// (`prims.div(g, world)` feeding each all_reduce, as synchronize's grad rule
// writes it) applied once to the pack. After the bucket's wait, slices of
// the result (reshaped) take the place of each member's wait result; they
// sit just before the first statement that reads any of them (or at the
// end), so the wait can stay late. Members share the group, dtype, device
// and scale; others start a new bucket. bucket_bytes <= 0 changes nothing.
#pragma once

#include <cstdint>

#include "thunder/core/trace.h"

namespace thunder {

Trace bucket_all_reduces(const Trace& trace, int64_t bucket_bytes);

}  // namespace thunder
