// Distributed prims: collectives as trace statements. A process group is
// named in a trace by an integer handle (the runtime's registry,
// thunder/runtime/process_groups.h, maps it to a c10d group), so traces stay
// printable, parseable and torch-free.
//
// Asynchronous collectives return a *future*: a tensor proxy with the
// result's metadata whose value may only be read through prims.wait. The
// runtime starts the communication when the collective runs and finishes it
// in wait, so computation placed between the two overlaps communication.
//
//   prims.all_reduce(a, op, group) -> future   op: 'sum' (the only one so far)
//   prims.wait(future) -> tensor               the reduced value
//   prims.synchronize(a, group, world_size) -> a
//       identity in the forward; its grad rule (transforms/grad_rules_distributed.cpp)
//       is data-parallel replication: grad / world_size, all_reduce 'sum', wait.
//   prims.reduce_scatter(a, op, group, world_size) -> future
//       rank r's future is the sum over the ranks of a's r-th dim-0 block
//       (a's dim 0 a multiple of world_size).
//   prims.all_gather(a, group, world_size) -> future
//       every rank's a, stacked along dim 0 in rank order. FSDP gathers its
//       shards with it; its grad rule scales the gradient by 1/world_size
//       and reduce-scatters it. all_gather and wait are not pinned for
//       recomputation (all_reduce and reduce_scatter are): ZeRO-3 tags the
//       gathered values RECOMPUTE_IN_BACKWARD and the backward gathers again.
//   prims.broadcast(a, root, group) -> future
//       rank root's a on every rank (a's shape and dtype the same on all).
//       No grad rule: differentiating through it is an error.
#pragma once

#include <cstdint>
#include <string>

#include "thunder/core/symbol.h"

namespace thunder::prims {

Value all_reduce(const Value& a, const std::string& op, int64_t group);
Value wait(const Value& future);
Value synchronize(const Value& a, int64_t group, int64_t world_size);
Value reduce_scatter(const Value& a, const std::string& op, int64_t group, int64_t world_size);
Value all_gather(const Value& a, int64_t group, int64_t world_size);
Value broadcast(const Value& a, int64_t root, int64_t group);

// Whether a statement of `sym` communicates: every rank of its group must
// issue the same ones, in the same order, on the same shapes (all_reduce,
// reduce_scatter, all_gather, broadcast; not wait or synchronize). Its group is its argument named
// "group".
bool is_collective(const Symbol& sym);

}  // namespace thunder::prims
