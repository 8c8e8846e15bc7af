// The registry version and the change handles (see registry_change.h).
#include "thunder/core/registry_change.h"

namespace thunder {

namespace detail {
std::atomic<uint64_t> g_registry_version{0};
}  // namespace detail

void bump_registry_version() { detail::g_registry_version.fetch_add(1, std::memory_order_relaxed); }

RegistryChange& RegistryChange::operator=(RegistryChange&& o) noexcept {
  if (this != &o) {
    undo_ = std::move(o.undo_);
    o.undo_ = nullptr;
  }
  return *this;
}

void RegistryChange::restore() {
  if (!undo_) return;
  // Inactive before undoing: an undo that throws is not retried by a destructor.
  std::function<void()> undo = std::move(undo_);
  undo_ = nullptr;
  undo();
}

ScopedRegistryChange& ScopedRegistryChange::operator=(ScopedRegistryChange&& o) noexcept {
  if (this != &o) {
    change_.restore();
    change_ = std::move(o.change_);
  }
  return *this;
}

}  // namespace thunder
