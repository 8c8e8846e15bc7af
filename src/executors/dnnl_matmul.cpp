// The dnnl executor: float32 CPU matmul and linear through oneDNN's row-major
// sgemm (dnnl_sgemm). Every oneDNN include of the project is in this file.
//
// Why sgemm and not ATen: libtorch 1.13 reaches OpenBLAS, whose kernel choice
// depends on whether it recognises the CPU (issue 17); oneDNN picks its
// kernel from the CPU's ISA at run time. Neither wins everywhere, so the
// executor decides per shape by measurement: the first call of a shape class
// (kind, M, N, K, transposes, batch) times both and remembers the faster in a
// process-wide table; later calls look the choice up and run it (each thread
// keeps a copy of the choices it used, so a lookup takes no lock).
//
// Operands are read in place: a matrix whose strides are (ld, 1) or (1, ld) is
// handed to sgemm with its leading dimension and a transpose flag (a weight's
// t(), k.transpose(-2, -1) of a 4-D view), and batch dims may have any
// strides, broadcast ones 0. Only matrices with neither inner stride 1 are
// copied (.contiguous()). A batched product runs one sgemm per matrix; when
// the right operand is the same matrix for every batch and the left one's
// rows are evenly spaced (linear on [B, T, C], x @ W), the batch folds into
// M and one sgemm runs.
//
// THUNDER_DNNL=0 in the environment when a function is compiled makes the
// executor claim nothing (its statements go to the next executor, ATen).
#include "thunder/executors/dnnl_matmul.h"

#include <ATen/ATen.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "thunder/core/error.h"
#include "thunder/executors/executor.h"
#include "thunder/executors/kernel.h"
#include "thunder/lang/ltorch.h"

namespace thunder::dnnl {
namespace {

constexpr int kMaxBatchDims = 8;

// One side of a product as sgemm sees it: per batch matrix a [rows, cols]
// view at `data + batch offset`, stored transposed or not with leading dim ld.
struct Side {
  const float* data = nullptr;
  char trans = 'N';
  int64_t ld = 1;
  std::array<int64_t, kMaxBatchDims> batch_stride{};  // over the output's batch dims
};

// A planned product: C [batch..., M, N] = A [batch..., M, K] @ B [batch..., K, N].
struct Plan {
  int64_t m = 0, n = 0, k = 0;
  int nbatch = 0;                                   // batch dims iterated (after folding)
  std::array<int64_t, kMaxBatchDims> batch_size{};  // their sizes
  int64_t batch_count = 1;
  Side a, b;
};

// Raw sizes and strides of a matrix operand with batch dims (no tensor views:
// making one would allocate a TensorImpl on the hot path).
struct Operand {
  const float* data;
  int ndim;
  const int64_t* sizes;
  const int64_t* strides;
};

// sgemm's view of a [rows, cols] matrix with strides (rs, cs): 'N' with ld rs
// when rows are contiguous, 'T' with ld cs when columns are; false otherwise.
bool layout_of(int64_t rows, int64_t cols, int64_t rs, int64_t cs, char* trans, int64_t* ld) {
  if (cs == 1 || cols == 1) {
    if (rows == 1 || rs >= cols) {
      *trans = 'N';
      *ld = rows == 1 ? std::max<int64_t>(cols, 1) : rs;
      return true;
    }
  }
  if (rs == 1 || rows == 1) {
    if (cols == 1 || cs >= rows) {
      *trans = 'T';
      *ld = cols == 1 ? std::max<int64_t>(rows, 1) : cs;
      return true;
    }
  }
  return false;
}

// Can dims [0, ndim - 1) of `x` be read as one row dim of stride x.strides[ndim - 2]?
bool rows_fold(const Operand& x) {
  int64_t expect = x.strides[x.ndim - 2] * x.sizes[x.ndim - 2];
  for (int i = x.ndim - 3; i >= 0; --i) {
    if (x.sizes[i] != 1 && x.strides[i] != expect) return false;
    expect *= x.sizes[i];
  }
  return true;
}

// Plans A @ B where `a` is [..., M, K] and `b` is [..., K, N] (batch dims
// broadcast). `out_batch` receives the broadcast batch shape. Returns false
// when an operand's matrices need a copy first (or too many batch dims).
bool plan(const Operand& a, const Operand& b, Plan* p, int* out_nbatch,
          std::array<int64_t, kMaxBatchDims>* out_batch) {
  const int na = a.ndim - 2, nb = b.ndim - 2, nbatch = std::max(na, nb);
  if (nbatch > kMaxBatchDims) return false;
  p->m = a.sizes[a.ndim - 2];
  p->k = a.sizes[a.ndim - 1];
  p->n = b.sizes[b.ndim - 1];
  if (!layout_of(p->m, p->k, a.strides[a.ndim - 2], a.strides[a.ndim - 1], &p->a.trans, &p->a.ld))
    return false;
  if (!layout_of(p->k, p->n, b.strides[b.ndim - 2], b.strides[b.ndim - 1], &p->b.trans, &p->b.ld))
    return false;
  p->a.data = a.data;
  p->b.data = b.data;
  bool b_shared = true;  // the same B matrix for every batch entry
  p->batch_count = 1;
  for (int j = 0; j < nbatch; ++j) {
    const int ia = j - (nbatch - na), ib = j - (nbatch - nb);
    const int64_t sa = ia >= 0 ? a.sizes[ia] : 1, sb = ib >= 0 ? b.sizes[ib] : 1;
    const int64_t size = sa == 1 ? sb : sa;
    (*out_batch)[j] = size;
    p->batch_size[j] = size;
    p->a.batch_stride[j] = sa == 1 ? 0 : a.strides[ia];
    p->b.batch_stride[j] = sb == 1 ? 0 : b.strides[ib];
    if (size != 1 && p->b.batch_stride[j] != 0) b_shared = false;
    p->batch_count *= size;
  }
  *out_nbatch = nbatch;
  p->nbatch = nbatch;
  // Fold the batch into M: one sgemm over [batch * M, K] rows.
  if (nbatch > 0 && b_shared && p->a.trans == 'N' && na == nbatch && rows_fold(a) &&
      (p->m * p->batch_count == 1 || a.strides[a.ndim - 2] >= p->k)) {
    p->m *= p->batch_count;
    p->a.ld = p->m == 1 ? std::max<int64_t>(p->k, 1) : a.strides[a.ndim - 2];
    p->nbatch = 0;
    p->batch_count = 1;
  }
  return true;
}

void run_plan(const Plan& p, float* c, float beta) {
  const int64_t mn = p.m * p.n;
  std::array<int64_t, kMaxBatchDims> idx{};
  const float *pa = p.a.data, *pb = p.b.data;
  for (int64_t i = 0; i < p.batch_count; ++i) {
    dnnl_status_t st = dnnl_sgemm(p.a.trans, p.b.trans, p.m, p.n, p.k, 1.0f, pa, p.a.ld, pb, p.b.ld,
                                  beta, c + i * mn, std::max<int64_t>(p.n, 1));
    THUNDER_CHECK(st == dnnl_success, "dnnl: dnnl_sgemm failed with status {}",
                  static_cast<int>(st));
    // Step the batch odometer, moving the operand pointers by their strides.
    for (int j = p.nbatch - 1; j >= 0; --j) {
      pa += p.a.batch_stride[j];
      pb += p.b.batch_stride[j];
      if (++idx[j] < p.batch_size[j]) break;
      pa -= p.a.batch_stride[j] * p.batch_size[j];
      pb -= p.b.batch_stride[j] * p.batch_size[j];
      idx[j] = 0;
    }
  }
}

// ---- choosing oneDNN or ATen per shape class ----

enum class Kind : uint8_t { Matmul, Linear, LinearBias };

struct ShapeKey {
  Kind kind;
  char ta, tb;
  int64_t m, n, k, batch;
  bool operator==(const ShapeKey&) const = default;
};

struct ShapeKeyHash {
  size_t operator()(const ShapeKey& s) const {
    size_t h = static_cast<size_t>(s.kind) | (static_cast<size_t>(s.ta) << 8) |
               (static_cast<size_t>(s.tb) << 16);
    for (int64_t v : {s.m, s.n, s.k, s.batch}) h = h * 1000003u ^ static_cast<size_t>(v);
    return h;
  }
};

using ChoiceTable = std::unordered_map<ShapeKey, bool, ShapeKeyHash>;

struct Choices {
  std::mutex mu;
  ChoiceTable use_dnnl;
  int64_t measured = 0, dnnl_won = 0;
  std::atomic<uint64_t> generation{0};  // bumped by reset_choices: thread copies are stale
};

// The choices one thread has looked up. A choice never changes once made
// (until reset_choices), so a thread's copy answers later calls without the
// process-wide lock: concurrent callers of one jitted model do not serialise
// on every matmul.
struct ThreadChoices {
  uint64_t generation = ~uint64_t{0};
  ChoiceTable seen;
};

Choices& choices() {
  static Choices c;
  return c;
}

template <class F>
double best_of_ms(int reps, F&& f) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return best;
}

// oneDNN or ATen for this shape class: looked up, or measured on the call's
// own operands the first time (one warm-up and three timed reps each).
template <class Dnnl, class Aten>
bool choose_dnnl(const ShapeKey& key, Dnnl&& run_dnnl, Aten&& run_aten) {
  Choices& c = choices();
  thread_local ThreadChoices mine;
  const uint64_t generation = c.generation.load(std::memory_order_acquire);
  if (mine.generation != generation) {
    mine.seen.clear();
    mine.generation = generation;
  }
  if (auto it = mine.seen.find(key); it != mine.seen.end()) return it->second;
  bool pick;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.use_dnnl.find(key);
    if (it != c.use_dnnl.end()) {
      pick = it->second;
    } else {
      run_dnnl();
      run_aten();
      const double d = best_of_ms(3, run_dnnl), a = best_of_ms(3, run_aten);
      pick = d <= a;
      c.use_dnnl.emplace(key, pick);
      ++c.measured;
      c.dnnl_won += pick;
    }
  }
  mine.seen.emplace(key, pick);
  return pick;
}

Operand operand_of(const at::Tensor& t) {
  return {t.data_ptr<float>(), static_cast<int>(t.dim()), t.sizes().data(), t.strides().data()};
}

// A @ B with batch broadcasting; both operands at least 2-D.
template <bool Measured>
at::Tensor matmul_f32(const at::Tensor& a_in, const at::Tensor& b_in) {
  at::Tensor a = a_in, b = b_in;
  if (a.dim() - 2 > kMaxBatchDims || b.dim() - 2 > kMaxBatchDims) return at::matmul(a, b);
  Plan p;
  int nbatch = 0;
  std::array<int64_t, kMaxBatchDims + 2> out_shape{};
  std::array<int64_t, kMaxBatchDims> batch{};
  if (!plan(operand_of(a), operand_of(b), &p, &nbatch, &batch)) {
    a = a.contiguous();
    b = b.contiguous();
    THUNDER_INTERNAL_CHECK(plan(operand_of(a), operand_of(b), &p, &nbatch, &batch),
                           "dnnl: contiguous operands must have an sgemm layout");
  }
  if (p.m == 0 || p.n == 0 || p.k == 0 || p.batch_count == 0) return at::matmul(a_in, b_in);
  std::copy(batch.begin(), batch.begin() + nbatch, out_shape.begin());
  out_shape[nbatch] = a.size(-2);
  out_shape[nbatch + 1] = b.size(-1);
  // The output is allocated only once oneDNN is chosen (or being measured).
  at::Tensor out;
  auto run = [&] {
    if (!out.defined())
      out = at::empty(c10::IntArrayRef(out_shape.data(), nbatch + 2), a.options());
    run_plan(p, out.data_ptr<float>(), 0.0f);
  };
  const ShapeKey key{Kind::Matmul, p.a.trans, p.b.trans, p.m, p.n, p.k, p.batch_count};
  if (Measured && !choose_dnnl(key, run, [&] { (void)at::matmul(a_in, b_in); }))
    return at::matmul(a_in, b_in);
  run();
  return out;
}

// x @ w^T (+ bias) with x [..., in], w [out, in], bias [out] or undefined.
template <bool Measured>
at::Tensor linear_f32(const at::Tensor& x_in, const at::Tensor& w_in, const at::Tensor& bias) {
  if (x_in.dim() - 2 > kMaxBatchDims) return at::linear(x_in, w_in, bias);
  at::Tensor x = x_in, w = w_in;
  char trans;
  int64_t ld;
  if (!layout_of(w.size(1), w.size(0), w.stride(1), w.stride(0), &trans, &ld)) w = w.contiguous();
  // w^T as an [in, out] matrix: w's sizes and strides swapped.
  const int64_t wt_sizes[2] = {w.size(1), w.size(0)}, wt_strides[2] = {w.stride(1), w.stride(0)};
  const Operand wt{w.data_ptr<float>(), 2, wt_sizes, wt_strides};
  Plan p;
  int nbatch = 0;
  std::array<int64_t, kMaxBatchDims> batch{};
  auto plan_x = [&] {
    if (x.dim() >= 2) return plan(operand_of(x), wt, &p, &nbatch, &batch);
    const int64_t sizes[2] = {1, x.size(0)}, strides[2] = {x.size(0), x.stride(0)};
    return plan(Operand{x.data_ptr<float>(), 2, sizes, strides}, wt, &p, &nbatch, &batch);
  };
  if (!plan_x()) {
    x = x.contiguous();
    THUNDER_INTERNAL_CHECK(plan_x(), "dnnl: contiguous operands must have an sgemm layout");
  }
  if (p.m == 0 || p.n == 0 || p.k == 0 || p.batch_count == 0) return at::linear(x_in, w_in, bias);
  std::array<int64_t, kMaxBatchDims + 2> out_shape{};
  std::copy(x.sizes().begin(), x.sizes().end() - 1, out_shape.begin());
  out_shape[x.dim() - 1] = w.size(0);
  const bool has_bias = bias.defined();
  at::Tensor out;
  auto run = [&] {
    if (!out.defined()) out = at::empty(c10::IntArrayRef(out_shape.data(), x.dim()), x.options());
    // The bias is written first and the product accumulated onto it (beta = 1).
    if (has_bias) out.copy_(bias);
    run_plan(p, out.data_ptr<float>(), has_bias ? 1.0f : 0.0f);
  };
  const ShapeKey key{has_bias ? Kind::LinearBias : Kind::Linear,
                     p.a.trans,
                     p.b.trans,
                     p.m,
                     p.n,
                     p.k,
                     p.batch_count};
  if (Measured && !choose_dnnl(key, run, [&] { (void)at::linear(x_in, w_in, bias); }))
    return at::linear(x_in, w_in, bias);
  run();
  return out;
}

// Kernels. Measured: the choice table decides per shape class; Always: oneDNN
// without measuring (THUNDER_DNNL=1, for tests and A/B runs).
template <bool Measured>
void matmul_kernel(KernelCall& k) {
  const at::Tensor &a = k.tensor(0), &b = k.tensor(1);
  if (a.scalar_type() != at::kFloat || b.scalar_type() != at::kFloat || a.dim() < 2 || b.dim() < 2)
      [[unlikely]] {
    k.set_output(0, at::matmul(a, b));
    return;
  }
  k.set_output(0, matmul_f32<Measured>(a, b));
}

template <bool Measured>
void linear_kernel(KernelCall& k) {
  const at::Tensor &x = k.tensor(0), &w = k.tensor(1);
  at::Tensor bias = k.optional_tensor(2);
  if (x.scalar_type() != at::kFloat || w.scalar_type() != at::kFloat ||
      (bias.defined() && bias.scalar_type() != at::kFloat)) [[unlikely]] {
    k.set_output(0, at::linear(x, w, bias));
    return;
  }
  k.set_output(0, linear_f32<Measured>(x, w, bias));
}

bool f32_cpu_tensor(const Value& v) {
  return v.is_tensor() && v.proxy()->dtype == DType::f32 &&
         v.proxy()->device.type == Device::Type::CPU;
}

enum class Op { None, Matmul, Linear };

// By registered symbol, not by id string (docs/architecture.md): the four
// symbols are looked up once.
struct MatmulSymbols {
  const Symbol *prims_matmul, *ltorch_matmul, *prims_linear, *ltorch_linear;
};
MatmulSymbols lookup_matmul_symbols() {
  ltorch::ensure_registered();
  const SymbolRegistry& r = symbol_registry();
  return {&r.get("prims.matmul"), &r.get("ltorch.matmul"), &r.get("prims.linear"),
          &r.get("ltorch.linear")};
}

Op op_of(const BoundSymbol& b) {
  static const MatmulSymbols s = lookup_matmul_symbols();
  if (b.sym == s.prims_matmul || b.sym == s.ltorch_matmul) return Op::Matmul;
  if (b.sym == s.prims_linear || b.sym == s.ltorch_linear) return Op::Linear;
  return Op::None;
}

class DnnlExecutor : public Executor {
 public:
  std::string_view name() const override { return "dnnl"; }
  bool can_claim(const BoundSymbol& b) const override {
    if (mode() == Mode::Off) return false;
    switch (op_of(b)) {
      case Op::Matmul:
        return b.args.size() == 2 && f32_cpu_tensor(b.args[0]) && f32_cpu_tensor(b.args[1]) &&
               b.args[0].proxy()->ndim() >= 2 && b.args[1].proxy()->ndim() >= 2;
      case Op::Linear:
        return b.args.size() == 3 && f32_cpu_tensor(b.args[0]) && f32_cpu_tensor(b.args[1]) &&
               (b.args[2].is_none() || f32_cpu_tensor(b.args[2])) &&
               b.args[0].proxy()->ndim() >= 1 && b.args[1].proxy()->ndim() == 2;
      case Op::None:
        return false;
    }
    return false;
  }
  Kernel kernel(const BoundSymbol& b) const override {
    const bool measured = mode() != Mode::Always;
    if (op_of(b) == Op::Matmul) return measured ? &matmul_kernel<true> : &matmul_kernel<false>;
    return measured ? &linear_kernel<true> : &linear_kernel<false>;
  }
};

}  // namespace

Mode mode() {
  const char* v = std::getenv("THUNDER_DNNL");
  if (v == nullptr || *v == '\0') return Mode::Measure;
  const std::string_view s(v);
  if (s == "0") return Mode::Off;
  if (s == "1") return Mode::Always;
  fail("THUNDER_DNNL: expected 0 (off), 1 (always oneDNN) or unset (measure), got '{}'", s);
}

ChoiceStats choice_stats() {
  Choices& c = choices();
  std::lock_guard<std::mutex> lock(c.mu);
  return {c.measured, c.dnnl_won};
}

void reset_choices() {
  Choices& c = choices();
  std::lock_guard<std::mutex> lock(c.mu);
  c.use_dnnl.clear();
  c.measured = c.dnnl_won = 0;
  c.generation.fetch_add(1, std::memory_order_release);
}

Executor& dnnl_executor() {
  static DnnlExecutor e;
  return e;
}

void sgemm(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  dnnl_status_t st = dnnl_sgemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  THUNDER_CHECK(st == dnnl_success, "dnnl: dnnl_sgemm failed with status {}", static_cast<int>(st));
}

}  // namespace thunder::dnnl
