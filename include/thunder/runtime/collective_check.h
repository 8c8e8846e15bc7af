// The ranks' agreement on a new cache entry's collectives. Gloo pairs the
// n-th collective of every rank and aborts the process (from one of its own
// threads: nothing to catch) when their sizes differ; ranks that compiled
// different programs (a rank-dependent branch, another bucket size, another
// model) would get there. So before a new entry's first call, thunder::jit
// has the ranks of each process group the entry communicates on compare the
// entry's collectives on that group (op, arguments, group, shape, dtype, in
// forward-then-backward order), and every rank throws thunder::Error when
// they differ, before any collective of the entry is issued.
//
// The comparison runs on the group's control group (a second Gloo group
// over the same ranks), never the one collectives use, so it cannot pair
// with another rank's gradient all_reduce: when one rank compiles a new
// entry while another reuses one it has, the compiling rank fails after the
// group's timeout with a message naming that cause (and the other rank's
// wait fails too). A rank that exited makes it fail at once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "thunder/core/trace.h"

namespace thunder::runtime {

// One collective statement as the ranks compare it.
struct CollectiveInfo {
  int64_t group = 0;
  std::string desc;  // "prims.all_reduce(cpu f64[103], 'sum', group=0)"
};

// The collectives of `traces`, in order (top-level statements).
std::vector<CollectiveInfo> collectives_of(const std::vector<const Trace*>& traces);

// 64-bit FNV-1a over the descriptions of the collectives on `group`.
uint64_t collective_hash(const std::vector<CollectiveInfo>& seq, int64_t group);

// Compares `seq` on each of `groups` and every group a collective names
// (in increasing handle order, the same on every rank) with the other ranks;
// throws thunder::Error on every rank of a group whose ranks differ. Groups
// of one rank are skipped.
void check_collectives(const std::vector<CollectiveInfo>& seq, std::vector<int64_t> groups);

}  // namespace thunder::runtime
