// Gradient bucketing: the all_reduces of a trace, and its reduce_scatters
// (FSDP), each kind on its own (in the order they appear,
// which in a backward is the order gradients are produced) are grouped
// greedily into buckets of at most `bucket_bytes` (a bucket holds at least
// one tensor); each bucket of two or more becomes one all_reduce of a flat
// pack: cat of the flattened tensors. Each tensor is reduced as it was
// (already scaled: synchronize's grad rule writes `prims.div(g, world)`
// before each all_reduce, the same op with or without buckets), and
// cpu_fuser fuses those scales with the reshapes and the cat into one kernel
// that writes the pack. After the bucket's wait, slices of the result
// (reshaped) take the place of each member's wait result; they sit just
// before the first statement that reads any of them (or at the end), so the
// wait can stay late. Members share the group, dtype and device; others
// start a new bucket. A reduce_scatter bucket packs [world, n] (row r: every
// member's r-th dim-0 block), so each rank's result row is its shards'
// blocks one after the other. bucket_bytes <= 0 changes nothing.
#pragma once

#include <cstdint>

#include "thunder/core/trace.h"

namespace thunder {

Trace bucket_all_reduces(const Trace& trace, int64_t bucket_bytes);

}  // namespace thunder
