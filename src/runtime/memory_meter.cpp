#include "thunder/runtime/memory_meter.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include <atomic>
#include <mutex>

namespace thunder {
namespace {

std::atomic<int64_t> g_live{0};
std::atomic<int64_t> g_peak{0};

// Wraps the allocator found at install time; each block remembers its size.
class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* inner) : inner_(inner) {}

  c10::DataPtr allocate(size_t n) const override {
    c10::DataPtr inner = inner_->allocate(n);
    void* data = inner.get();
    auto* ctx = new Block{std::move(inner), static_cast<int64_t>(n)};
    int64_t live = g_live.fetch_add(ctx->bytes) + ctx->bytes;
    int64_t peak = g_peak.load();
    while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {
    }
    return {data, ctx, &release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }

 private:
  struct Block {
    c10::DataPtr inner;
    int64_t bytes;
  };
  static void release(void* p) {
    auto* b = static_cast<Block*>(p);
    g_live.fetch_sub(b->bytes);
    delete b;
  }
  c10::Allocator* inner_;
};

}  // namespace

void MemoryMeter::install() {
  static std::once_flag once;
  std::call_once(once, [] {
    static CountingAllocator counting(c10::GetCPUAllocator());
    c10::SetCPUAllocator(&counting, /*priority=*/100);
  });
}

int64_t MemoryMeter::live_bytes() { return g_live.load(); }
int64_t MemoryMeter::peak_bytes() { return g_peak.load(); }
void MemoryMeter::reset_peak() { g_peak.store(g_live.load()); }

}  // namespace thunder
