#include "thunder/runtime/memory_meter.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <mutex>

namespace thunder {
namespace {

std::atomic<int64_t> g_live{0};
std::atomic<int64_t> g_peak{0};

// A 64-byte-aligned allocator that records each block's size in a header
// before the data, so the context pointer can equal the data pointer (ATen's
// raw_allocate requires that).
constexpr size_t kHeader = 64;

void release(void* data) {
  char* base = static_cast<char*>(data) - kHeader;
  g_live.fetch_sub(*reinterpret_cast<int64_t*>(base));
  std::free(base);
}

class CountingAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) const override {
    void* base = nullptr;
    if (posix_memalign(&base, kHeader, n + kHeader) != 0) throw std::bad_alloc();
    *static_cast<int64_t*>(base) = static_cast<int64_t>(n);
    int64_t live = g_live.fetch_add(static_cast<int64_t>(n)) + static_cast<int64_t>(n);
    int64_t peak = g_peak.load();
    while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {
    }
    void* data = static_cast<char*>(base) + kHeader;
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
};

}  // namespace

void MemoryMeter::install() {
  static std::once_flag once;
  std::call_once(once, [] {
    static CountingAllocator counting;
    c10::SetCPUAllocator(&counting, /*priority=*/100);
  });
}

int64_t MemoryMeter::live_bytes() { return g_live.load(); }
int64_t MemoryMeter::peak_bytes() { return g_peak.load(); }
void MemoryMeter::reset_peak() { g_peak.store(g_live.load()); }

}  // namespace thunder
