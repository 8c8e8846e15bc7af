// BufferPool: the memory plan of a jitted function. Large CPU buffers that its
// programs free (intermediates at their last use, saved tensors after the
// backward, outputs the caller dropped) go back to the pool and are handed out
// again to the next allocation of the same size, within the call or in a
// later one, instead of going back to the system. With glibc, every large
// allocation is otherwise a fresh mmap whose pages fault on first touch.
//
// A buffer is reused only after its tensor is freed, so outputs and saved
// values that are still alive can never alias a reused buffer.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace thunder {

class BufferPool {
 public:
  // Pools are reference counted: the owner holds one reference and every
  // buffer handed out holds one, so a buffer freed after its jitted function
  // is gone still finds a live pool (or frees itself when it is the last).
  static BufferPool* create() { return new BufferPool(); }
  void retain() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  // Buffers smaller than this come from the system allocator as usual.
  static constexpr size_t kMinBytes = 256 * 1024;
  // A pool keeps at most this much idle memory; beyond it, freed buffers go back.
  static constexpr size_t kMaxIdleBytes = size_t{4} << 30;

  // A free buffer of exactly `bytes` (rounded to pages), or nullptr.
  void* take(size_t bytes);
  // Keeps `p` for reuse; false if the pool is full (the caller frees it).
  bool give(void* p, size_t bytes);
  size_t idle_bytes() const;
  int64_t reuses() const { return reuses_; }

  static size_t rounded(size_t bytes) { return (bytes + 4095) & ~size_t{4095}; }

 private:
  BufferPool() = default;
  ~BufferPool();
  std::atomic<int64_t> refs_{1};
  mutable std::mutex mu_;
  std::vector<std::pair<size_t, std::vector<void*>>> free_;  // by size; few distinct sizes
  size_t idle_ = 0;
  int64_t reuses_ = 0;
};

// While alive, large CPU allocations on this thread are served from `pool`.
class PoolScope {
 public:
  explicit PoolScope(BufferPool* pool);
  ~PoolScope();
  PoolScope(const PoolScope&) = delete;
  PoolScope& operator=(const PoolScope&) = delete;

 private:
  BufferPool* prev_;
};

// Owns one reference to a pool.
class PoolRef {
 public:
  PoolRef() : p_(BufferPool::create()) {}
  ~PoolRef() { p_->release(); }
  PoolRef(const PoolRef&) = delete;
  PoolRef& operator=(const PoolRef&) = delete;
  BufferPool* get() const { return p_; }

 private:
  BufferPool* p_;
};

// Installs thunder's CPU allocator (counting, pooling) into ATen for the rest
// of the process. Idempotent and thread-safe (std::call_once); constructing a
// jitted callable (or MemoryMeter::install) calls it.
//
// Why process-wide and not scoped to a jitted callable: c10 keeps one CPU
// allocator pointer per process, read without synchronization by every ATen
// allocation on every thread, and documents SetCPUAllocator as an
// initialization-time call, not thread-safe. Swapping it around a call (or
// back when the last jitted callable dies) would race with allocations on
// other threads. So it is installed once and stays; what is scoped is the
// pooling (PoolScope). (Freeing is not the obstacle: each block carries its
// own deleter.)
//
// What it changes for code that is not jitted, on any thread:
//  - every CPU allocation is counted (MemoryMeter's live and peak bytes: one
//    atomic add per allocation and per free);
//  - blocks come from posix_memalign with 64-byte alignment (as c10's default)
//    behind a 64-byte header; c10's allocator options (junk or zero fill) and
//    its profiler memory reports do not apply to them;
//  - nothing is pooled: buffers are served from and returned to a BufferPool
//    only for allocations made while a PoolScope is alive on that thread,
//    i.e. inside a jitted call. Tensors allocated there carry their own
//    deleter and may outlive the call, the callable and the pool.
void install_cpu_allocator();
// The pool active on this thread, if any.
BufferPool* active_pool();

}  // namespace thunder
