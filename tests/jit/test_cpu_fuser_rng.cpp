// prims.uniform_philox inside cpu_fuser's generated kernels: the fused draw is
// thunder/core/philox.h bit for bit (the ATen kernel and the ATen fallback
// too) for every float dtype, with partial last counters, a non-zero offset,
// 64-bit seed and counter words, runtime bounds, and view consumers that read
// the draw out of order; and dropout's forward and backward each fuse into one
// region that draws its own mask.
#include <gtest/gtest.h>
#include <thunder/core/philox.h>
#include <thunder/executors/cpu_fuser.h>
#include <thunder/prims/prims.h>
#include <thunder/thunder.h>

#include <cstdlib>

namespace thunder {
namespace {

namespace F = nn::functional;

constexpr uint64_t kSeed = 0x0123456789ABCDEFull;
constexpr uint64_t kOffset = (uint64_t{1} << 32) - 3;  // the counter's high word changes mid-draw

const JitOptions kFused = {.executors = {"cpu_fuser", "aten"}};
const JitOptions kATen = {.executors = {"aten"}};

DType to_thunder(at::ScalarType t) {
  switch (t) {
    case at::kDouble:
      return DType::f64;
    case at::kHalf:
      return DType::f16;
    case at::kBFloat16:
      return DType::bf16;
    default:
      return DType::f32;
  }
}

// philox::element over a shape, in row-major order.
template <typename T, typename C>
at::Tensor reference(at::IntArrayRef shape, double lo, double hi, at::ScalarType dt) {
  at::Tensor e = at::empty(shape, dt);
  T* p = e.data_ptr<T>();
  for (int64_t i = 0; i < e.numel(); ++i)
    p[i] = philox::element<T, C>(kSeed, kOffset, i, static_cast<C>(lo), static_cast<C>(hi));
  return e;
}

at::Tensor reference(at::IntArrayRef shape, double lo, double hi, at::ScalarType dt) {
  switch (dt) {
    case at::kDouble:
      return reference<double, double>(shape, lo, hi, dt);
    case at::kHalf:
      return reference<at::Half, float>(shape, lo, hi, dt);
    case at::kBFloat16:
      return reference<at::BFloat16, float>(shape, lo, hi, dt);
    default:
      return reference<float, float>(shape, lo, hi, dt);
  }
}

Tensor draw(const Shape& shape, const Value& lo, double hi, const Tensor& seed,
            const Tensor& offset, DType dt) {
  return Tensor(prims::uniform_philox(shape, lo, hi, Value(seed.proxy()), Value(offset.proxy()),
                                      Device::cpu(), dt)
                    .proxy());
}

at::Tensor state_word(uint64_t w) { return at::scalar_tensor(static_cast<int64_t>(w), at::kLong); }

// Regions of the final trace, and whether one of them draws.
struct Regions {
  int count = 0, drawing = 0, unfused_draws = 0;
};
Regions regions(const Trace& t) {
  Regions r;
  for (const BoundSymbol& b : t.bsyms) {
    r.unfused_draws += b.sym->id == "prims.uniform_philox";
    if (!b.sym->is_region) continue;
    ++r.count;
    for (const BoundSymbol& s : b.subsymbols) r.drawing += s.sym->id == "prims.uniform_philox";
  }
  return r;
}

const at::ScalarType kFloatTypes[] = {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16};

// The draw alone (a flat kernel), over sizes that leave a partial last counter
// for E = 4 and E = 2, and one large enough for parallel chunks.
TEST(CpuFuserRng, FusedDrawIsThePhiloxReferenceBitForBit) {
  for (at::ScalarType dt : kFloatTypes) {
    for (std::vector<int64_t> shape :
         std::vector<std::vector<int64_t>>{{1}, {7}, {3, 5}, {2, 3, 5}, {100003}}) {
      SCOPED_TRACE(std::string(c10::toString(dt)) + " " + c10::str(at::IntArrayRef(shape)));
      auto fn = [&](const Tensor& seed, const Tensor& offset) {
        return draw(shape, -1.5, 2.25, seed, offset, to_thunder(dt));
      };
      const at::Tensor want = reference(shape, -1.5, 2.25, dt);
      auto jfused = jit(fn, kFused);
      EXPECT_TRUE(at::equal(jfused(state_word(kSeed), state_word(kOffset)).aten(), want));
      const Trace final_trace = last_traces(jfused).back();
      EXPECT_EQ(regions(final_trace).drawing, 1) << final_trace;
      auto jaten = jit(fn, kATen);
      EXPECT_TRUE(at::equal(jaten(state_word(kSeed), state_word(kOffset)).aten(), want));
    }
  }
}

// seed and offset given as ints (kernel literals) rather than tensors.
TEST(CpuFuserRng, LiteralSeedAndOffset) {
  for (at::ScalarType dt : kFloatTypes) {
    SCOPED_TRACE(c10::toString(dt));
    auto fn = [dt](const Tensor& x) {
      Value u = prims::uniform_philox({2, 7}, -1.5, 2.25, static_cast<int64_t>(kSeed),
                                      static_cast<int64_t>(kOffset), Device::cpu(), to_thunder(dt));
      return x + Tensor(u.proxy());
    };
    const at::Tensor x = at::randn({2, 7}).to(dt);
    auto jfn = jit(fn, kFused);
    EXPECT_TRUE(at::equal(jfn(x).aten(), x + reference({2, 7}, -1.5, 2.25, dt)));
    const Trace final_trace = last_traces(jfn).back();
    EXPECT_EQ(regions(final_trace).drawing, 1) << final_trace;
  }
}

// Consumers in non-flat regions: a broadcast partner (row tiles that start
// mid-counter), a broadcast draw (read at an index not the nest's), reshape
// and transpose (read out of row-major order), runtime bounds (a number
// argument), and a sum over the draw.
TEST(CpuFuserRng, DrawReadThroughViewsInOneRegion) {
  for (at::ScalarType dt : kFloatTypes) {
    SCOPED_TRACE(c10::toString(dt));
    const DType d = to_thunder(dt);
    auto fn = [d](const Tensor& x, const Tensor& seed, const Tensor& offset, const Scalar& lo) {
      Tensor row = draw({5}, lo.value(), 1.0, seed, offset, d);  // broadcast over rows
      Tensor grid = draw({3, 5}, -2.0, 0.5, seed, offset, d);    // by rows, and transposed
      Tensor flat = draw({15}, 0.0, 1.0, seed, offset, d);       // read as [5, 3]
      return std::make_tuple(x + row, grid * 2.0 + x.select(0, 0),
                             grid.transpose(0, 1) * 2.0 + flat.reshape({5, 3}), grid.sum({1}));
    };
    const at::Tensor x = at::randn({5, 5}).to(dt);
    const at::Tensor row = reference({5}, 0.25, 1.0, dt), grid = reference({3, 5}, -2.0, 0.5, dt),
                     flat = reference({15}, 0.0, 1.0, dt);
    for (const JitOptions& o : {kFused, kATen}) {
      auto jfn = jit(fn, o);
      auto [y, w, z, s] = jfn(x, state_word(kSeed), state_word(kOffset), Scalar(0.25));
      EXPECT_TRUE(at::equal(y.aten(), x + row));
      EXPECT_TRUE(at::equal(w.aten(), grid * 2.0 + x[0]));
      EXPECT_TRUE(at::equal(z.aten(), grid.t() * 2.0 + flat.reshape({5, 3})));
      EXPECT_TRUE(
          at::allclose(s.aten().to(at::kDouble), grid.to(at::kDouble).sum({1}), 1e-2, 1e-2));
    }
  }
}

// Without a compiler the regions run op by op on ATen: the same bits.
TEST(CpuFuserRng, FallbackWithoutCodegenDrawsTheSameBits) {
  setenv("THUNDER_DISABLE_CODEGEN", "1", 1);
  reset_cpu_fuser_stats();
  for (at::ScalarType dt : kFloatTypes) {
    SCOPED_TRACE(c10::toString(dt));
    auto fn = [dt](const Tensor& seed, const Tensor& offset) {
      return draw({3, 7}, -1.5, 2.25, seed, offset, to_thunder(dt)) * 2.0;
    };
    auto jfn = jit(fn, kFused);
    EXPECT_TRUE(at::equal(jfn(state_word(kSeed), state_word(kOffset)).aten(),
                          reference({3, 7}, -1.5, 2.25, dt) * 2.0));
  }
  EXPECT_EQ(cpu_fuser_stats().compiler_invocations, 0);
  EXPECT_GE(cpu_fuser_stats().fallback_regions, 4);
  unsetenv("THUNDER_DISABLE_CODEGEN");
}

// dropout draws, compares and scales in one region forward, and recomputes
// its mask from (seed, offset) in one region backward; the mask is the one
// the forward drew.
TEST(CpuFuserRng, DropoutForwardAndBackwardAreOneRegionEach) {
  auto jfn = jit([](const Tensor& x) { return F::dropout(x, 0.9, true); }, kFused);
  at::Tensor x = (at::rand({64, 33}) + 0.5).requires_grad_();
  at::Tensor g = at::rand({64, 33}) + 1.0;
  Tensor out = jfn(x);
  out.backward(g);
  at::Tensor kept = out.aten().detach() != 0;
  EXPECT_TRUE(at::equal(x.grad() != 0, kept));
  EXPECT_TRUE(at::equal(x.grad().masked_select(kept), g.masked_select(kept) * 10.0f));
  const Trace fwd = last_traces(jfn).back();
  const Trace bwd = last_backward_traces(jfn).back();
  for (const Trace* t : {&fwd, &bwd}) {
    Regions r = regions(*t);
    EXPECT_EQ(r.count, 1) << *t;
    EXPECT_EQ(r.drawing, 1) << *t;
    EXPECT_EQ(r.unfused_draws, 0) << *t;
  }
}

}  // namespace
}  // namespace thunder
