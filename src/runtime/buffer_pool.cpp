#include "thunder/runtime/buffer_pool.h"

#include <cstdlib>

namespace thunder {

namespace {
thread_local BufferPool* t_active = nullptr;
}

BufferPool::~BufferPool() {
  for (auto& [size, blocks] : free_)
    for (void* p : blocks) std::free(p);
}

void* BufferPool::take(size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [size, blocks] : free_) {
    if (size != bytes || blocks.empty()) continue;
    void* p = blocks.back();
    blocks.pop_back();
    idle_ -= bytes;
    ++reuses_;
    return p;
  }
  return nullptr;
}

bool BufferPool::give(void* p, size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (idle_ + bytes > kMaxIdleBytes) return false;
  for (auto& [size, blocks] : free_) {
    if (size != bytes) continue;
    blocks.push_back(p);
    idle_ += bytes;
    return true;
  }
  free_.push_back({bytes, {p}});
  idle_ += bytes;
  return true;
}

size_t BufferPool::idle_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return idle_;
}

PoolScope::PoolScope(BufferPool* pool) : prev_(t_active) { t_active = pool; }
PoolScope::~PoolScope() { t_active = prev_; }

BufferPool* active_pool() { return t_active; }

}  // namespace thunder
