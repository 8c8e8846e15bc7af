// ATen-executor kernels of the stateless RNG: get_and_update_rng_state reads
// the device's generator (thunder/runtime/rng_state.h); uniform_philox fills
// its output with the mapping of thunder/core/philox.h, in parallel chunks of
// counters written straight into the output.
#include <ATen/Parallel.h>

#include <algorithm>

#include "aten_util.h"
#include "thunder/core/philox.h"
#include "thunder/runtime/rng_state.h"

namespace thunder::aten::detail {

namespace {

// A seed or offset operand: an int, or a cpu i64[] tensor (the meta checked which).
uint64_t state_word(const KernelCall& k, size_t i) {
  int64_t v = k.is_tensor(i) ? *k.tensor(i).data_ptr<int64_t>() : k.scalar(i).toLong();
  return static_cast<uint64_t>(v);
}

// One Philox block yields E = 4 (float words) or 2 (double words) elements.
template <typename T, typename C>
void fill_uniform(T* out, int64_t n, C lo, C hi, uint64_t seed, uint64_t offset) {
  constexpr int64_t E = sizeof(C) == 8 ? 2 : 4;
  constexpr int64_t kGrainCounters = 2048;  // ~40 us of work per chunk
  at::parallel_for(0, (n + E - 1) / E, kGrainCounters, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const philox::Block b = philox::block(seed, offset + static_cast<uint64_t>(c));
      T* o = out + c * E;
      const int64_t m = std::min(E, n - c * E);
      for (int64_t j = 0; j < m; ++j) {
        if constexpr (E == 2)
          o[j] = philox::scale<T, C>(philox::unit_double(b[2 * j], b[2 * j + 1]), lo, hi);
        else
          o[j] = philox::scale<T, C>(philox::unit_float(b[j]), lo, hi);
      }
    }
  });
}

template <typename T, typename C>
void fill_uniform(at::Tensor& out, const KernelCall& k) {
  fill_uniform<T, C>(out.data_ptr<T>(), out.numel(), static_cast<C>(k.number(1)),
                     static_cast<C>(k.number(2)), state_word(k, 3), state_word(k, 4));
}

}  // namespace

void register_random() {
  THUNDER_KERNEL("prims.get_and_update_rng_state", {
    PhiloxState s = get_and_update_rng_state(k.constant(0).as_device(), k.integer(1));
    k.set_output(0, at::scalar_tensor(static_cast<int64_t>(s.seed), at::kLong));
    k.set_output(1, at::scalar_tensor(static_cast<int64_t>(s.offset), at::kLong));
  });
  THUNDER_KERNEL("prims.uniform_philox", {
    THUNDER_CHECK(k.device(5).is_cpu(), "prims.uniform_philox: no kernel for device {} in this build",
                  k.device(5).str());
    at::Tensor out = at::empty(k.ints(0), at::TensorOptions().dtype(k.dtype(6)));
    switch (out.scalar_type()) {
      case at::kFloat: fill_uniform<float, float>(out, k); break;
      case at::kDouble: fill_uniform<double, double>(out, k); break;
      case at::kHalf: fill_uniform<at::Half, float>(out, k); break;
      case at::kBFloat16: fill_uniform<at::BFloat16, float>(out, k); break;
      default: fail("prims.uniform_philox: dtype must be floating, got {}", c10::toString(out.scalar_type()));
    }
    k.set_output(0, std::move(out));
  });
}

}  // namespace thunder::aten::detail
