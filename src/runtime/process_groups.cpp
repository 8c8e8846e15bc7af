#include "thunder/runtime/process_groups.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "thunder/core/error.h"

namespace thunder::runtime {
namespace {

struct Group {
  c10::intrusive_ptr<c10d::ProcessGroup> pg;
  std::chrono::milliseconds timeout;
  c10::intrusive_ptr<c10d::ProcessGroup> control;
  int64_t comparisons = 0;
};

struct Pending {
  c10::intrusive_ptr<c10d::Work> work;
  int64_t group;
  at::Tensor tensor;  // keeps the buffer alive while the collective writes it
  // reduce_scatter: the blocks every rank sent this one, summed into `tensor`
  // when the work is done.
  at::Tensor received;
};

// The registry (groups are few; a vector indexed by handle) and the pending
// work keyed by the result's TensorImpl.
struct State {
  std::mutex mu;
  WaitStats waited;  // under mu
  std::vector<Group> groups;
  std::unordered_map<const void*, Pending> pending;
};
State& state() {
  static auto* s = new State;  // outlives static destructors that may still free groups
  return *s;
}

Group group_of(int64_t handle, const char* op) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  THUNDER_CHECK(
      handle >= 0 && handle < static_cast<int64_t>(s.groups.size()) && s.groups[handle].pg,
      "{}: process group {} does not exist (destroyed, or made in another process)", op, handle);
  return s.groups[handle];
}

}  // namespace

int64_t register_process_group(c10::intrusive_ptr<c10d::ProcessGroup> group,
                               std::chrono::milliseconds timeout,
                               c10::intrusive_ptr<c10d::ProcessGroup> control) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.groups.push_back({std::move(group), timeout, std::move(control)});
  return static_cast<int64_t>(s.groups.size()) - 1;
}

void unregister_process_group(int64_t handle) {
  Group dropped;  // destroyed outside the lock
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (handle >= 0 && handle < static_cast<int64_t>(s.groups.size())) {
    dropped.pg = std::move(s.groups[handle].pg);
    dropped.control = std::move(s.groups[handle].control);
  }
}

c10::intrusive_ptr<c10d::ProcessGroup> process_group(int64_t handle, const char* op) {
  return group_of(handle, op).pg;
}

namespace {

// Starts a collective on `in` with `start(pg)`; an exception from c10d
// becomes a thunder::Error naming the op, the group and the tensor.
template <typename Start>
c10::intrusive_ptr<c10d::Work> start_work(const Group& g, int64_t handle, const char* op,
                                          const at::Tensor& in, Start start) {
  try {
    return start(*g.pg);
  } catch (const std::exception& e) {
    fail("{}: process group {} (rank {} of {}) could not start the collective on {}: {}", op,
         handle, g.pg->getRank(), g.pg->getSize(), in.toString(), e.what());
  }
}

// Records `work` as pending on `out` until finish(out).
void add_pending(int64_t handle, c10::intrusive_ptr<c10d::Work> work, at::Tensor out,
                 at::Tensor received = {}) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  const void* key = out.unsafeGetTensorImpl();  // before `out` moves into the entry
  s.pending[key] = Pending{std::move(work), handle, std::move(out), std::move(received)};
}

// Every rank's `shard` into out's dim-0 blocks, in rank order.
c10::intrusive_ptr<c10d::Work> start_gather(const Group& g, int64_t handle, const char* op,
                                            const at::Tensor& shard, const at::Tensor& out) {
  std::vector<std::vector<at::Tensor>> blocks(1);
  for (const at::Tensor& b : out.chunk(g.pg->getSize(), 0)) blocks[0].push_back(b);
  std::vector<at::Tensor> in{shard.contiguous()};
  return start_work(g, handle, op, shard,
                    [&](c10d::ProcessGroup& pg) { return pg.allgather(blocks, in); });
}

}  // namespace

void start_all_reduce_sum(int64_t handle, at::Tensor t) {
  Group g = group_of(handle, "prims.all_reduce");
  std::vector<at::Tensor> ts{t};
  auto work = start_work(g, handle, "prims.all_reduce", t, [&](c10d::ProcessGroup& pg) {
    return pg.allreduce(ts, c10d::AllreduceOptions{.reduceOp = c10d::ReduceOp::SUM});
  });
  add_pending(handle, std::move(work), std::move(t));
}

void start_broadcast(int64_t handle, at::Tensor t, int64_t root) {
  Group g = group_of(handle, "prims.broadcast");
  // Gloo would abort the process on a root outside the group.
  THUNDER_CHECK(root < g.pg->getSize(),
                "prims.broadcast: root {} is not a rank of process group {} (world size {})", root,
                handle, g.pg->getSize());
  std::vector<at::Tensor> ts{t};
  auto work = start_work(g, handle, "prims.broadcast", t, [&](c10d::ProcessGroup& pg) {
    return pg.broadcast(ts, c10d::BroadcastOptions{.rootRank = root});
  });
  add_pending(handle, std::move(work), std::move(t));
}

void start_reduce_scatter_sum(int64_t handle, const at::Tensor& in, at::Tensor out) {
  Group g = group_of(handle, "prims.reduce_scatter");
  at::Tensor received = at::empty_like(in, at::MemoryFormat::Contiguous);
  std::vector<int64_t> equal_splits;  // empty: equal dim-0 blocks
  auto work = start_work(g, handle, "prims.reduce_scatter", in, [&](c10d::ProcessGroup& pg) {
    return pg.alltoall_base(received, const_cast<at::Tensor&>(in), equal_splits, equal_splits);
  });
  add_pending(handle, std::move(work), std::move(out), std::move(received));
}

void start_all_gather(int64_t handle, const at::Tensor& shard, at::Tensor out) {
  Group g = group_of(handle, "prims.all_gather");
  auto work = start_gather(g, handle, "prims.all_gather", shard, out);
  add_pending(handle, std::move(work), std::move(out));
}

void all_gather_into(int64_t handle, const at::Tensor& shard, const at::Tensor& out) {
  Group g = group_of(handle, "distributed.fsdp");
  c10::intrusive_ptr<c10d::Work> work = start_gather(g, handle, "distributed.fsdp", shard, out);
  bool done = false;
  std::string why;
  try {
    done = work->wait(g.timeout);
  } catch (const std::exception& e) {
    why = e.what();
  }
  THUNDER_CHECK(done && why.empty(),
                "distributed.fsdp: gathering the parameters on process group {} failed on rank {} "
                "of {} within {} ms: {}",
                handle, g.pg->getRank(), g.pg->getSize(), g.timeout.count(),
                why.empty() ? "timed out" : why);
}

at::Tensor finish(const at::Tensor& t) {
  Pending p;
  {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.pending.find(t.unsafeGetTensorImpl());
    THUNDER_CHECK(it != s.pending.end(), "prims.wait: no collective is pending on this tensor");
    p = std::move(it->second);
    s.pending.erase(it);
  }
  Group g = group_of(p.group, "prims.wait");
  bool done = false;
  std::string why;
  const auto start = std::chrono::steady_clock::now();
  try {
    done = p.work->wait(g.timeout);
  } catch (const std::exception& e) {
    why = e.what();
  }
  {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    s.waited.seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++s.waited.waits;
  }
  THUNDER_CHECK(done && why.empty(),
                "prims.wait: the collective on process group {} failed on rank {} of {} (a rank "
                "exited, or did not reach the same collective within {} ms, e.g. it compiled a new "
                "entry for this call while this rank reused one): {}",
                p.group, g.pg->getRank(), g.pg->getSize(), g.timeout.count(),
                why.empty() ? "timed out" : why);
  if (p.received.defined()) {  // reduce_scatter: sum the ranks' blocks
    const int64_t world = g.pg->getSize();
    std::vector<int64_t> blocks{world};
    for (int64_t d : p.tensor.sizes()) blocks.push_back(d);
    at::sum_out(p.tensor, p.received.view(blocks), {0});
  }
  return t;
}

WaitStats wait_stats() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.waited;
}

int64_t group_rank(int64_t handle) {
  return group_of(handle, "thunder::distributed").pg->getRank();
}
int64_t group_size(int64_t handle) {
  return group_of(handle, "thunder::distributed").pg->getSize();
}

int64_t comparisons(int64_t handle) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return handle >= 0 && handle < static_cast<int64_t>(s.groups.size())
             ? s.groups[handle].comparisons
             : 0;
}

Compared compare_across_ranks(int64_t handle, uint64_t key, const std::string& text,
                              const std::string& what) {
  Group g;
  {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    THUNDER_CHECK(
        handle >= 0 && handle < static_cast<int64_t>(s.groups.size()) && s.groups[handle].pg,
        "{}: process group {} does not exist (destroyed, or made in another process)", what,
        handle);
    THUNDER_CHECK(s.groups[handle].control, "{}: process group {} has no control group", what,
                  handle);
    ++s.groups[handle].comparisons;
    g = s.groups[handle];
  }
  const int64_t world = g.control->getSize();
  // All-gathers `mine` (the same shape on every rank) on the control group.
  auto gather = [&](const at::Tensor& mine) {
    std::vector<std::vector<at::Tensor>> out(1);
    for (int64_t r = 0; r < world; ++r) out[0].push_back(at::empty_like(mine));
    std::vector<at::Tensor> in{mine};
    std::string why;
    bool done = false;
    try {
      done = g.control->allgather(out, in)->wait(g.timeout);
    } catch (const std::exception& e) {
      const auto* c10 = dynamic_cast<const c10::Error*>(&e);
      why = c10 ? c10->what_without_backtrace() : e.what();
    }
    THUNDER_CHECK(done && why.empty(), "{} (rank {} of {} on process group {}, within {} ms: {})",
                  what, g.control->getRank(), world, handle, g.timeout.count(),
                  why.empty() ? "timed out" : why);
    return out[0];
  };
  // First the keys and the texts' lengths; the texts only when keys differ.
  at::Tensor head = at::empty({2}, at::kLong);
  head.data_ptr<int64_t>()[0] = static_cast<int64_t>(key);  // bits as they are: no arithmetic
  head.data_ptr<int64_t>()[1] = static_cast<int64_t>(text.size());
  std::vector<at::Tensor> heads = gather(head);
  Compared c;
  int64_t longest = 1;
  for (const at::Tensor& h : heads) {
    c.keys.push_back(static_cast<uint64_t>(h[0].item<int64_t>()));
    longest = std::max(longest, h[1].item<int64_t>());
  }
  if (std::all_of(c.keys.begin(), c.keys.end(), [&](uint64_t k) { return k == c.keys[0]; }))
    return c;
  at::Tensor bytes = at::zeros({longest}, at::kByte);
  std::memcpy(bytes.data_ptr<uint8_t>(), text.data(), text.size());
  std::vector<at::Tensor> all = gather(bytes);
  for (int64_t r = 0; r < world; ++r) {
    const auto* p = reinterpret_cast<const char*>(all[r].data_ptr<uint8_t>());
    c.texts.emplace_back(p, static_cast<size_t>(heads[r][1].item<int64_t>()));
  }
  return c;
}

int64_t pending_work() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return static_cast<int64_t>(s.pending.size());
}

}  // namespace thunder::runtime
