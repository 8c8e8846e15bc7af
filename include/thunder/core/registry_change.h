// Changes to thunder's process-wide registries (grad rules, symbol tags) as
// values: every change returns a RegistryChange that can put back what was
// there before, and every change bumps one global registry version that
// jitted callables compare on each call, so a cache entry never runs with a
// rule or tag set that changed after it was compiled.
//
//   thunder::add_tags("ltorch.dropout", {...});          // permanent, as always
//   {
//     thunder::ScopedRegistryChange g =                   // undone at the end of the scope
//         thunder::scoped_add_tags("ltorch.dropout", {...});
//     ...
//   }
//   thunder::RegistryChange c = thunder::register_grad("ltorch.silu", rule);
//   ...
//   c.restore();                                          // the previous rule again
//
// A RegistryChange does nothing when destroyed: a discarded return value keeps
// the change (the meaning these calls always had). Only ScopedRegistryChange
// restores on destruction.
//
// Restoring, nested and out of order: each change is a layer over the state
// it found. Restoring a layer removes exactly that layer and keeps every other
// change that is still in effect:
//   - grad rules: the rule of a symbol is the one of its newest layer still in
//     effect, else the built-in one (or none). Restoring the newest layer puts
//     back the rule it replaced; restoring an older layer changes nothing now,
//     but the older rule is gone once the newer layers are restored too.
//   - tags: a tag stays on while the symbol was registered with it or any
//     layer that asked for it is still in effect. Restoring in reverse order
//     gives back exactly the bits before each change.
// Restoring twice (or a default-constructed handle) does nothing.
//
// Registries are not locked against compiles running on other threads:
// change them between calls, not while another thread compiles.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

namespace thunder {

namespace detail {
// The global registry version; every change and every restore bumps it.
extern std::atomic<uint64_t> g_registry_version;
}  // namespace detail

// Read by jitted callables on every call: one relaxed atomic load.
inline uint64_t registry_version() {
  return detail::g_registry_version.load(std::memory_order_relaxed);
}
// For registries: call after changing what compiled programs depend on.
void bump_registry_version();

// A change that was made, with the way to undo it. Movable, not copyable.
class RegistryChange {
 public:
  RegistryChange() = default;
  explicit RegistryChange(std::function<void()> undo) : undo_(std::move(undo)) {}
  RegistryChange(RegistryChange&& o) noexcept : undo_(std::move(o.undo_)) { o.undo_ = nullptr; }
  // The change held before is kept (not restored), like at destruction.
  RegistryChange& operator=(RegistryChange&& o) noexcept;
  RegistryChange(const RegistryChange&) = delete;
  RegistryChange& operator=(const RegistryChange&) = delete;
  ~RegistryChange() = default;  // keeps the change

  // Puts back what the change replaced (see the header comment); then inactive.
  void restore();
  // Can restore() still undo something?
  bool active() const { return static_cast<bool>(undo_); }

 private:
  std::function<void()> undo_;
};

// RAII: restores its change when destroyed (or on restore()); release() keeps
// the change and hands back the plain RegistryChange.
class ScopedRegistryChange {
 public:
  ScopedRegistryChange() = default;
  // Implicit, so `ScopedRegistryChange g = thunder::add_tags(...);` scopes a change.
  ScopedRegistryChange(RegistryChange c) : change_(std::move(c)) {}  // NOLINT
  ScopedRegistryChange(ScopedRegistryChange&&) noexcept = default;
  // Restores the change held before, then takes o's.
  ScopedRegistryChange& operator=(ScopedRegistryChange&& o) noexcept;
  ScopedRegistryChange(const ScopedRegistryChange&) = delete;
  ScopedRegistryChange& operator=(const ScopedRegistryChange&) = delete;
  ~ScopedRegistryChange() { change_.restore(); }

  void restore() { change_.restore(); }
  RegistryChange release() { return std::move(change_); }
  bool active() const { return change_.active(); }

 private:
  RegistryChange change_;
};

}  // namespace thunder
