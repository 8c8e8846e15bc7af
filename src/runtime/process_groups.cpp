#include "thunder/runtime/process_groups.h"

#include <mutex>
#include <unordered_map>
#include <vector>

#include "thunder/core/error.h"

namespace thunder::runtime {
namespace {

struct Group {
  c10::intrusive_ptr<c10d::ProcessGroup> pg;
  std::chrono::milliseconds timeout;
};

struct Pending {
  c10::intrusive_ptr<c10d::Work> work;
  int64_t group;
  at::Tensor tensor;  // keeps the buffer alive while the collective writes it
};

// The registry (groups are few; a vector indexed by handle) and the pending
// work keyed by the result's TensorImpl.
struct State {
  std::mutex mu;
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
                               std::chrono::milliseconds timeout) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.groups.push_back({std::move(group), timeout});
  return static_cast<int64_t>(s.groups.size()) - 1;
}

void unregister_process_group(int64_t handle) {
  c10::intrusive_ptr<c10d::ProcessGroup> dropped;  // destroyed outside the lock
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (handle >= 0 && handle < static_cast<int64_t>(s.groups.size()))
    dropped = std::move(s.groups[handle].pg);
}

c10::intrusive_ptr<c10d::ProcessGroup> process_group(int64_t handle, const char* op) {
  return group_of(handle, op).pg;
}

void start_all_reduce_sum(int64_t handle, at::Tensor t) {
  Group g = group_of(handle, "prims.all_reduce");
  std::vector<at::Tensor> ts{t};
  c10::intrusive_ptr<c10d::Work> work;
  try {
    work = g.pg->allreduce(ts, c10d::AllreduceOptions{.reduceOp = c10d::ReduceOp::SUM});
  } catch (const std::exception& e) {
    fail(
        "prims.all_reduce: process group {} (rank {} of {}) could not start the collective on "
        "{}: {}",
        handle, g.pg->getRank(), g.pg->getSize(), t.toString(), e.what());
  }
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  const void* key = t.unsafeGetTensorImpl();  // before `t` moves into the entry
  s.pending[key] = Pending{std::move(work), handle, std::move(t)};
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
  try {
    done = p.work->wait(g.timeout);
  } catch (const std::exception& e) {
    why = e.what();
  }
  THUNDER_CHECK(done && why.empty(),
                "prims.wait: the collective on process group {} failed on rank {} of {} (a rank "
                "exited, or did not reach the same collective within {} ms): {}",
                p.group, g.pg->getRank(), g.pg->getSize(), g.timeout.count(),
                why.empty() ? "timed out" : why);
  return t;
}

int64_t pending_work() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return static_cast<int64_t>(s.pending.size());
}

}  // namespace thunder::runtime
