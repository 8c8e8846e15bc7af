// Compiled guards: the metadata a cache entry depends on, packed into a
// vector of words (dtype, device, rank, requires_grad, stride class, sizes of
// each tensor; kind and value of constants; kind of runtime numbers; grad
// mode; which tensor arguments share storage) and hashed. Building a
// signature reuses the vector's capacity: no allocation, no strings, no
// exceptions on a cache hit.
#pragma once

#include <ATen/core/Tensor.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "thunder/runtime/flat_args.h"

namespace thunder {

class GuardSignature {
 public:
  void clear() {
    words_.clear();
    hash_ = 0xcbf29ce484222325ull;
  }
  void add(int64_t w) {
    words_.push_back(w);
    hash_ = (hash_ ^ static_cast<uint64_t>(w)) * 0x100000001b3ull;
  }
  void add_tensor(const at::Tensor& t) {
    if (!t.defined()) return add(-1);
    const int64_t dim = t.dim();
    const auto dev = t.device();
    add(static_cast<int64_t>(t.scalar_type()) | static_cast<int64_t>(dev.type()) << 8 |
        static_cast<int64_t>(dev.index() + 1) << 16 | dim << 24 |
        static_cast<int64_t>(t.requires_grad()) << 40 |
        static_cast<int64_t>(t.is_contiguous()) << 41);
    for (int64_t s : t.sizes()) add(s);
  }
  void add_arg(const FlatArg& a) {
    switch (a.kind) {
      case FlatArg::Kind::Tensor:
        return add_tensor(a.tensor);
      case FlatArg::Kind::Scalar:
        return add(1000 + a.i);  // its kind only: never recompiles
      case FlatArg::Kind::Double: {
        add(2000);
        int64_t bits;
        static_assert(sizeof bits == sizeof a.d);
        __builtin_memcpy(&bits, &a.d, sizeof bits);
        return add(bits);
      }
      default:
        add(3000 + static_cast<int64_t>(a.kind));
        return add(a.i);
    }
  }

  // Tensor arguments that share storage with an earlier one: one word per
  // such argument (naming the earliest of its group, and whether it is the
  // very same view of it; none in the usual case), so a call that passes one
  // buffer twice compiles its own entry, and one that passes a tensor twice
  // (where `equal(a, b)` was captured as true) does not share an entry with
  // one that passes two overlapping views. Sorting storage pointers in
  // reused buffers: O(N log N), no allocation per call.
  void add_aliasing(const std::vector<FlatArg>& args) {
    alias_scratch_.clear();
    for (size_t i = 0; i < args.size(); ++i) {
      const at::Tensor& t = args[i].tensor;
      if (args[i].kind != FlatArg::Kind::Tensor || !t.defined() || !t.has_storage()) continue;
      alias_scratch_.emplace_back(t.unsafeGetTensorImpl()->unsafe_storage().unsafeGetStorageImpl(),
                                  static_cast<int64_t>(i));
    }
    if (alias_scratch_.size() < 2) return;
    std::sort(alias_scratch_.begin(), alias_scratch_.end());
    alias_pairs_.clear();  // (argument, earliest argument sharing its storage)
    for (size_t k = 1, first = 0; k < alias_scratch_.size(); ++k) {
      if (alias_scratch_[k].first != alias_scratch_[first].first) {
        first = k;
        continue;
      }
      alias_pairs_.emplace_back(alias_scratch_[k].second, alias_scratch_[first].second);
    }
    // In argument order, so the words do not depend on pointer values.
    std::sort(alias_pairs_.begin(), alias_pairs_.end());
    for (const auto& [i, j] : alias_pairs_)
      add(4000 + i * (int64_t{1} << 33) + j * 2 + same_view(args[i].tensor, args[j].tensor));
  }

  // One tensor object, or two that read the same elements in the same order.
  static bool same_view(const at::Tensor& a, const at::Tensor& b) {
    return a.unsafeGetTensorImpl() == b.unsafeGetTensorImpl() ||
           (a.data_ptr() == b.data_ptr() && a.scalar_type() == b.scalar_type() &&
            a.sizes() == b.sizes() && a.strides() == b.strides());
  }

  uint64_t hash() const { return hash_; }
  const std::vector<int64_t>& words() const { return words_; }
  bool operator==(const GuardSignature& o) const { return hash_ == o.hash_ && words_ == o.words_; }

 private:
  std::vector<int64_t> words_;
  uint64_t hash_ = 0xcbf29ce484222325ull;
  std::vector<std::pair<const void*, int64_t>> alias_scratch_;  // (storage, argument)
  std::vector<std::pair<int64_t, int64_t>> alias_pairs_;
};

}  // namespace thunder
