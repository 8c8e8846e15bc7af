// The runtime's process groups: a registry that gives each c10d process
// group the integer handle traces name it by (prims.all_reduce(t, 'sum', 0)),
// and the pending asynchronous collectives between a collective and its wait.
//
// A collective's result is a tensor that is not ready until its wait: the
// executor starts the work on a tensor it owns, records the work under that
// tensor here, and the wait kernel finishes it. Any thread may start and
// finish work (a backward runs on libtorch's autograd threads).
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <vector>

namespace thunder::runtime {

// Adds a group and returns its handle; handles are never reused. `control`
// is a second group over the same ranks, for compare_across_ranks only.
int64_t register_process_group(c10::intrusive_ptr<c10d::ProcessGroup> group,
                               std::chrono::milliseconds timeout,
                               c10::intrusive_ptr<c10d::ProcessGroup> control = {});
// Drops a group (its handle then fails clearly in any program that names it).
void unregister_process_group(int64_t handle);
// The group behind a handle; throws thunder::Error naming `op` if there is none.
c10::intrusive_ptr<c10d::ProcessGroup> process_group(int64_t handle, const char* op);

// Starts an asynchronous sum over the group in place on `t`, which becomes
// the pending result.
void start_all_reduce_sum(int64_t handle, at::Tensor t);
// Starts the reduce-scatter of `in` (contiguous, dim 0 = world * out's): rank
// r's `out` becomes the sum over the ranks of their r-th dim-0 block. Gloo
// has no reduce_scatter: an all-to-all of the blocks, summed in finish(out).
void start_reduce_scatter_sum(int64_t handle, const at::Tensor& in, at::Tensor out);
// Starts gathering every rank's `shard` into `out` (its dim-0 blocks, in
// rank order); finish(out) completes it.
void start_all_gather(int64_t handle, const at::Tensor& shard, at::Tensor out);
// Starts sending rank `root`'s `t` to every rank, in place on `t` (contiguous).
void start_broadcast(int64_t handle, at::Tensor t, int64_t root);
// The same, blocking (fsdp's full_parameters).
void all_gather_into(int64_t handle, const at::Tensor& shard, const at::Tensor& out);
// Finishes the work pending on `t` (within the group's timeout) and returns
// `t`; throws thunder::Error if the work failed, timed out or was never started.
at::Tensor finish(const at::Tensor& t);
// Every rank's `key` (indexed by rank), and every rank's `text` when the
// keys differ (else `texts` is empty): the same answer on every rank. It
// runs on the group's control group, never the one collectives use, so a
// rank that is not exchanging (it runs a collective instead) cannot pair
// with it: the others fail after the group's timeout (at once if a rank
// exited) with a thunder::Error that `what` begins. Every message has a
// size all ranks agree on (the texts' longest length goes first), so Gloo
// never sees mismatched sizes. The n-th exchange meets every rank's n-th.
struct Compared {
  std::vector<uint64_t> keys;
  std::vector<std::string> texts;
};
Compared compare_across_ranks(int64_t handle, uint64_t key, const std::string& text,
                              const std::string& what);
// How many compare_across_ranks this process has done on the group.
int64_t comparisons(int64_t handle);
// The group's rank and size.
int64_t group_rank(int64_t handle);
int64_t group_size(int64_t handle);

// Time this process has spent blocked in finish (prims.wait), and how many
// waits: what communication did not overlap (bench/distributed_bench.cpp).
struct WaitStats {
  double seconds = 0;
  int64_t waits = 0;
};
WaitStats wait_stats();

// Work started and not yet finished (0 after every complete program run).
int64_t pending_work();

}  // namespace thunder::runtime
