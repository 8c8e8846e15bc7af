// ATen-executor kernels of the stateless RNG: get_and_update_rng_state reads
// the device's generator (thunder/runtime/rng_state.h); uniform_philox fills
// its output with the mapping of thunder/core/philox.h, in parallel chunks of
// counters written straight into the output.
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
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

// The first m elements a Philox block yields (E per block: 4 float words, or 2 double words).
template <typename T, typename C, int64_t E>
void put(T* out, const philox::Block& b, int64_t m, C lo, C hi) {
  for (int64_t j = 0; j < m; ++j) {
    if constexpr (E == 2)
      out[j] = philox::scale<T, C>(philox::unit_double(b[2 * j], b[2 * j + 1]), lo, hi);
    else
      out[j] = philox::scale<T, C>(philox::unit_float(b[j]), lo, hi);
  }
}

template <typename T, typename C>
void fill_uniform(T* out, int64_t n, C lo, C hi, uint64_t seed, uint64_t offset) {
  constexpr int64_t E = sizeof(C) == 8 ? 2 : 4;
  constexpr int64_t kGrainCounters = 2048;  // ~20 us of work per chunk
  at::parallel_for(0, (n + E - 1) / E, kGrainCounters, [&](int64_t begin, int64_t end) {
    // Whole blocks with a constant trip count, then the partial last one.
    const int64_t full = std::min(end, n / E);
    for (int64_t c = begin; c < full; ++c)
      put<T, C, E>(out + c * E, philox::block(seed, offset + c), E, lo, hi);
    if (full < end)
      put<T, C, E>(out + full * E, philox::block(seed, offset + full), n - full * E, lo, hi);
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
    THUNDER_CHECK(k.device(5).is_cpu(),
                  "prims.uniform_philox: no kernel for device {} in this build", k.device(5).str());
    at::Tensor out = at::empty(k.ints(0), at::TensorOptions().dtype(k.dtype(6)));
    // The compute type: float for f32, f16 and bf16 (philox.h's mapping), double for f64.
    AT_DISPATCH_FLOATING_TYPES_AND2(
        at::kHalf, at::kBFloat16, out.scalar_type(), "uniform_philox",
        [&] { fill_uniform<scalar_t, at::opmath_type<scalar_t>>(out, k); });
    k.set_output(0, std::move(out));
  });
}

}  // namespace thunder::aten::detail
