// thunder's CPU allocator for ATen: counts live bytes (MemoryMeter) and serves
// large buffers from the thread's active BufferPool (the memory plan of a
// jitted function). Each block has a 64-byte header before the data (so the
// context pointer can equal the data pointer, as ATen's raw_allocate requires)
// holding its size and the pool it came from.
#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <new>

#include "thunder/runtime/buffer_pool.h"
#include "thunder/runtime/memory_meter.h"

namespace thunder {
namespace {

std::atomic<int64_t> g_live{0};
std::atomic<int64_t> g_peak{0};

constexpr size_t kHeader = 64;

struct Header {
  int64_t bytes;     // as requested
  size_t block;      // the allocation behind it (header included)
  BufferPool* pool;  // holds a reference; nullptr for system blocks
};
static_assert(sizeof(Header) <= kHeader);

void count(int64_t n) {
  int64_t live = g_live.fetch_add(n) + n;
  int64_t peak = g_peak.load();
  while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {
  }
}

void release(void* data) {
  char* base = static_cast<char*>(data) - kHeader;
  Header* h = reinterpret_cast<Header*>(base);
  g_live.fetch_sub(h->bytes);
  if (BufferPool* pool = h->pool) {
    if (!pool->give(base, h->block)) std::free(base);
    pool->release();
    return;
  }
  std::free(base);
}

class ThunderCpuAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) const override {
    BufferPool* pool = active_pool();
    size_t block = n + kHeader;
    void* base = nullptr;
    if (pool && n >= BufferPool::kMinBytes) {
      block = BufferPool::rounded(block);
      base = pool->take(block);
      pool->retain();
    } else {
      pool = nullptr;
    }
    if (!base && posix_memalign(&base, kHeader, block) != 0) {
      if (pool) pool->release();
      // As libtorch's own allocator: a c10::Error, which a program reports
      // as a thunder::Error naming the op.
      TORCH_CHECK(false, "CPU allocator: not enough memory: you tried to allocate ", n, " bytes");
    }
    *static_cast<Header*>(base) = {static_cast<int64_t>(n), block, pool};
    count(static_cast<int64_t>(n));
    void* data = static_cast<char*>(base) + kHeader;
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
};

}  // namespace

// Once per process and never undone: why it cannot be scoped is in buffer_pool.h.
void install_cpu_allocator() {
  static std::once_flag once;
  std::call_once(once, [] {
    static ThunderCpuAllocator allocator;
    c10::SetCPUAllocator(&allocator, /*priority=*/100);
  });
}

void MemoryMeter::install() { install_cpu_allocator(); }
int64_t MemoryMeter::live_bytes() { return g_live.load(); }
int64_t MemoryMeter::peak_bytes() { return g_peak.load(); }
void MemoryMeter::reset_peak() { g_peak.store(g_live.load()); }

}  // namespace thunder
