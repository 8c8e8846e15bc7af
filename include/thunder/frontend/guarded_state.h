// State beyond arguments and training flags that changes what a module's
// forward traces to (e.g. distributed::no_sync turning gradient
// communication off). A module that implements GuardedState has each of its
// flags read on every call of thunder::jit(module) and made part of the cache
// entry's guard, like a training flag: each setting gets its own compiled
// entry, and the prologue prints the check.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace thunder::nn {
class Module;
}

namespace thunder::detail {

class GuardedState {
 public:
  virtual ~GuardedState() = default;
  // Name (as the prologue prints it) and reader of each flag.
  virtual std::vector<std::pair<std::string, std::function<bool()>>> guarded_flags() const = 0;
};

// A module whose backward all-reduces gradients in buckets of this many bytes
// (distributed::ddp); the pipeline runs bucket_all_reduces on its backward.
class GradientBuckets {
 public:
  virtual ~GradientBuckets() = default;
  virtual int64_t gradient_bucket_bytes() const = 0;
};

// A module whose compiled programs communicate over these process groups
// (their handles; distributed::ddp). Before a new cache entry's first call
// the ranks compare its collective sequence on each of them, even when the
// entry has none (no_sync), so that a rank that skipped communication is seen.
class CollectiveGroups {
 public:
  virtual ~CollectiveGroups() = default;
  virtual std::vector<int64_t> collective_groups() const = 0;
};

class JitState;
// The thunder module a jitted callable was made from (for a wrapper around a
// torch::nn module: its thunder-side state), or nullptr.
nn::Module* jit_module(const JitState& s);

}  // namespace thunder::detail
