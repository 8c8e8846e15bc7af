// The attention executor: ltorch.scaled_dot_product_attention,
// ltorch.sdpa_forward and ltorch.sdpa_backward on the CPU, float32 and
// float64, as loops that never hold a [.., T, S] tensor (docs/attention.md).
//
// Work is split over (batch, query-row tile) in the forward and over batch
// entries (a batch entry is one head of one sequence) in the backward, whose
// key gradients every query row adds to; ATen's parallel_for runs the split
// on the intra-op threads (OpenMP in this libtorch, like the generated
// kernels). Per query row, scores are computed for the keys up to the
// causal bound only, exp once per score, and the row's log-sum-exp kept; the
// backward recomputes the probabilities from it.
//
// Operands are read in place: any batch strides (the [B, H, T, D] head views
// of a qkv split are strided [B, T, 3, H, D]) and any row stride, as long as
// the last dim is contiguous (otherwise that operand is copied once). Every
// inner loop runs over a contiguous range: K^T and V^T are packed per task
// so that a row's scores and its dO V^T are axpys over the keys.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "thunder/core/error.h"
#include "thunder/executors/executor.h"
#include "thunder/executors/kernel.h"
#include "thunder/lang/ltorch.h"

namespace thunder::attention {
namespace {

// Query rows per forward task: enough work per task to amortise packing K^T,
// and enough tasks to keep the threads busy at small batch.
constexpr int64_t kRowTile = 32;

// One operand's [rows, cols] matrices: base pointer, batch sizes and strides
// (over the output's batch dims), row stride; the last dim is contiguous.
template <class T>
struct Mat {
  const T* data;
  c10::IntArrayRef sizes, strides;  // all dims; batch dims are [0, ndim - 2)
  int64_t row_stride;

  const T* batch(int64_t b) const {
    int64_t off = 0;
    for (int64_t d = static_cast<int64_t>(sizes.size()) - 3; d >= 0; --d) {
      off += (b % sizes[d]) * strides[d];
      b /= sizes[d];
    }
    return data + off;
  }
  const T* row(int64_t b, int64_t i) const { return batch(b) + i * row_stride; }
};

at::Tensor last_dim_contiguous(const at::Tensor& t) {
  return t.size(-1) <= 1 || t.stride(-1) == 1 ? t : t.contiguous();
}

template <class T>
Mat<T> mat(const at::Tensor& t) {
  return {t.data_ptr<T>(), t.sizes(), t.strides(), t.stride(-2)};
}

// Shapes of one call: batch entries, query rows, keys, head sizes.
struct Dims {
  int64_t batch, t, s, d, dv;
  bool causal;
  int64_t keys(int64_t i) const { return causal ? std::min(i + 1, s) : s; }
};

Dims dims_of(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool causal) {
  const int64_t t = q.size(-2), d = q.size(-1);
  return {t == 0 || d == 0 ? q.numel() : q.numel() / (t * d), t, k.size(-2), d, v.size(-1), causal};
}

// dst[c][j] = src row j, col c for j < n: a [n, cols] matrix transposed into
// a [cols, n] scratch, so that loops over keys are contiguous.
template <class T>
void pack_transposed(const T* src, int64_t row_stride, int64_t n, int64_t cols, T* dst) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t c = 0; c < cols; ++c) dst[c * n + j] = src[j * row_stride + c];
}

template <class T>
void axpy(T a, const T* x, T* y, int64_t n) {
  for (int64_t c = 0; c < n; ++c) y[c] += a * x[c];
}

template <class T>
T dot(const T* a, const T* b, int64_t n) {
  T acc = 0;
  for (int64_t c = 0; c < n; ++c) acc += a[c] * b[c];
  return acc;
}

// out = softmax(scores) V and lse per query row, over (batch, row tile) tasks.
template <class T>
void forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const Dims& n,
             at::Tensor& out, at::Tensor& lse) {
  const Mat<T> mq = mat<T>(q), mk = mat<T>(k), mv = mat<T>(v);
  T* o = out.data_ptr<T>();
  T* l = lse.data_ptr<T>();
  const T scale = T(1) / std::sqrt(static_cast<T>(n.d));
  const int64_t tiles = (n.t + kRowTile - 1) / kRowTile;
  at::parallel_for(0, n.batch * tiles, 1, [&](int64_t begin, int64_t end) {
    std::vector<T> kt(n.d * n.s), p(n.s);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t b = task / tiles, i0 = (task % tiles) * kRowTile;
      const int64_t i1 = std::min(i0 + kRowTile, n.t);
      const int64_t packed = n.keys(i1 - 1);
      pack_transposed(mk.batch(b), mk.row_stride, packed, n.d, kt.data());
      // Packed with `packed` keys per dim: row i reads the first keys(i) of each.
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t keys = n.keys(i);
        T* s = p.data();
        std::fill(s, s + keys, T(0));
        const T* qi = mq.row(b, i);
        for (int64_t c = 0; c < n.d; ++c) axpy(qi[c] * scale, kt.data() + c * packed, s, keys);
        const T m = *std::max_element(s, s + keys);
        T sum = 0;
        for (int64_t j = 0; j < keys; ++j) {
          s[j] = std::exp(s[j] - m);
          sum += s[j];
        }
        T* oi = o + (b * n.t + i) * n.dv;
        std::fill(oi, oi + n.dv, T(0));
        for (int64_t j = 0; j < keys; ++j) axpy(s[j], mv.row(b, j), oi, n.dv);
        const T inv = T(1) / sum;
        for (int64_t c = 0; c < n.dv; ++c) oi[c] *= inv;
        l[b * n.t + i] = m + std::log(sum);
      }
    }
  });
}

// gq, gk, gv with P = exp(scores - lse) recomputed, one task per batch entry
// (every query row of an entry adds to its gk and gv rows).
template <class T>
void backward(const at::Tensor& go, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
              const at::Tensor& out, const at::Tensor& lse, const Dims& n, at::Tensor& gq,
              at::Tensor& gk, at::Tensor& gv) {
  const Mat<T> mgo = mat<T>(go), mq = mat<T>(q), mk = mat<T>(k), mv = mat<T>(v), mo = mat<T>(out);
  const T* l = lse.data_ptr<T>();
  T *dq = gq.data_ptr<T>(), *dk = gk.data_ptr<T>(), *dv = gv.data_ptr<T>();
  const T scale = T(1) / std::sqrt(static_cast<T>(n.d));
  at::parallel_for(0, n.batch, 1, [&](int64_t begin, int64_t end) {
    std::vector<T> kt(n.d * n.s), vt(n.dv * n.s), p(n.s), ds(n.s);
    for (int64_t b = begin; b < end; ++b) {
      pack_transposed(mk.batch(b), mk.row_stride, n.s, n.d, kt.data());
      pack_transposed(mv.batch(b), mv.row_stride, n.s, n.dv, vt.data());
      T* dkb = dk + b * n.s * n.d;
      T* dvb = dv + b * n.s * n.dv;
      std::fill(dkb, dkb + n.s * n.d, T(0));
      std::fill(dvb, dvb + n.s * n.dv, T(0));
      for (int64_t i = 0; i < n.t; ++i) {
        const int64_t keys = n.keys(i);
        const T *qi = mq.row(b, i), *goi = mgo.row(b, i);
        const T li = l[b * n.t + i];
        std::fill(p.data(), p.data() + keys, T(0));
        for (int64_t c = 0; c < n.d; ++c) axpy(qi[c] * scale, kt.data() + c * n.s, p.data(), keys);
        for (int64_t j = 0; j < keys; ++j) p[j] = std::exp(p[j] - li);
        // ds = P * (dO V^T - rowsum(dO * O))
        std::fill(ds.data(), ds.data() + keys, -dot(goi, mo.row(b, i), n.dv));
        for (int64_t c = 0; c < n.dv; ++c) axpy(goi[c], vt.data() + c * n.s, ds.data(), keys);
        T* dqi = dq + (b * n.t + i) * n.d;
        std::fill(dqi, dqi + n.d, T(0));
        for (int64_t j = 0; j < keys; ++j) {
          const T dsj = p[j] * ds[j] * scale;
          axpy(p[j], goi, dvb + j * n.dv, n.dv);
          axpy(dsj, mk.row(b, j), dqi, n.d);
          axpy(dsj, qi, dkb + j * n.d, n.d);
        }
      }
    }
  });
}

// A fresh contiguous tensor shaped like `like`'s batch dims plus `tail`.
at::Tensor empty_with(const at::Tensor& like, std::initializer_list<int64_t> tail) {
  std::vector<int64_t> shape(like.sizes().begin(), like.sizes().end() - 2);
  shape.insert(shape.end(), tail);
  return at::empty(shape, like.options().memory_format(at::MemoryFormat::Contiguous));
}

// ltorch.scaled_dot_product_attention (WithLse false) and ltorch.sdpa_forward
// ([out, lse]) share this kernel.
template <bool WithLse>
void forward_kernel(KernelCall& k) {
  const at::Tensor q = last_dim_contiguous(k.tensor(0)), key = last_dim_contiguous(k.tensor(1)),
                   v = last_dim_contiguous(k.tensor(2));
  const Dims n = dims_of(q, key, v, k.boolean(3));
  at::Tensor out = empty_with(q, {n.t, n.dv});
  at::Tensor lse = at::empty(q.sizes().slice(0, q.dim() - 1), q.options());
  if (q.scalar_type() == at::kFloat)
    forward<float>(q, key, v, n, out, lse);
  else
    forward<double>(q, key, v, n, out, lse);
  k.set_output(0, out);
  if constexpr (WithLse) k.set_output(1, lse);
}

void backward_kernel(KernelCall& k) {
  const at::Tensor go = last_dim_contiguous(k.tensor(0)), q = last_dim_contiguous(k.tensor(1)),
                   key = last_dim_contiguous(k.tensor(2)), v = last_dim_contiguous(k.tensor(3)),
                   out = last_dim_contiguous(k.tensor(4)), lse = k.tensor(5).contiguous();
  const Dims n = dims_of(q, key, v, k.boolean(6));
  at::Tensor gq = empty_with(q, {n.t, n.d}), gk = empty_with(key, {n.s, n.d}),
             gv = empty_with(v, {n.s, n.dv});
  if (q.scalar_type() == at::kFloat)
    backward<float>(go, q, key, v, out, lse, n, gq, gk, gv);
  else
    backward<double>(go, q, key, v, out, lse, n, gq, gk, gv);
  k.set_output(0, gq);
  k.set_output(1, gk);
  k.set_output(2, gv);
}

bool cpu_tensor_of(const Value& v, DType dtype) {
  return v.is_tensor() && v.proxy()->dtype == dtype && v.proxy()->device.type == Device::Type::CPU;
}

// By registered symbol, not by id string: looked up once.
struct AttentionSymbols {
  const Symbol *sdpa, *forward, *backward;
};
const AttentionSymbols& symbols() {
  static const AttentionSymbols s = [] {
    ltorch::ensure_registered();
    const SymbolRegistry& r = symbol_registry();
    return AttentionSymbols{&r.get("ltorch.scaled_dot_product_attention"),
                            &r.get("ltorch.sdpa_forward"), &r.get("ltorch.sdpa_backward")};
  }();
  return s;
}

class AttentionExecutor : public Executor {
 public:
  std::string_view name() const override { return "attention"; }
  // q, k, v (and grad and out) on the CPU, all float32 or all float64, at
  // least 3-D with one batch shape (sdpa_forward and sdpa_backward check that
  // in their metas; the plain op may broadcast, which stays with its
  // decomposition), and at least one key.
  bool can_claim(const BoundSymbol& b) const override {
    const AttentionSymbols& s = symbols();
    const bool backward = b.sym == s.backward;
    if (!backward && b.sym != s.sdpa && b.sym != s.forward) return false;
    const size_t tensors = backward ? 5 : 3;  // [grad,] q, k, v[, out]
    if (b.args.size() < tensors + 1 || !b.args[0].is_tensor()) return false;
    const Proxy& q = *b.args[0].proxy();
    if (q.dtype != DType::f32 && q.dtype != DType::f64) return false;
    for (size_t i = 0; i < tensors; ++i) {
      if (!cpu_tensor_of(b.args[i], q.dtype)) return false;
      const Proxy& p = *b.args[i].proxy();
      if (p.ndim() < 3 || p.ndim() != q.ndim() ||
          !std::equal(p.shape.begin(), p.shape.end() - 2, q.shape.begin()))
        return false;
    }
    return !backward || cpu_tensor_of(b.args[5], q.dtype);  // lse
  }
  Kernel kernel(const BoundSymbol& b) const override {
    const AttentionSymbols& s = symbols();
    if (b.sym == s.backward) return &backward_kernel;
    return b.sym == s.forward ? &forward_kernel<true> : &forward_kernel<false>;
  }
};

}  // namespace

Executor& attention_executor() {
  static AttentionExecutor e;
  return e;
}

}  // namespace thunder::attention
