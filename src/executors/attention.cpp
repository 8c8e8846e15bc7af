// The attention executor: ltorch.scaled_dot_product_attention,
// ltorch.sdpa_forward and ltorch.sdpa_backward on the CPU, float32 and
// float64, in tiles of query rows that never hold a [.., T, S] tensor
// (docs/attention.md).
//
// Forward tasks are (batch entry, query-row tile); a batch entry is one head
// of one sequence. Per tile: scores = Q K^T / sqrt(D) for the keys up to the
// causal bound of its last row (one gemm), per row the max, exp once per kept
// score, the sum and the log-sum-exp, then out = P V (one gemm). Backward
// tasks are batch entries (every query row adds to the entry's gk and gv, so
// splitting over query rows would race); per tile P is recomputed from the
// lse and five gemms give dV, dP, dQ and dK. ATen's parallel_for runs the
// tasks on the intra-op threads (OpenMP in this libtorch, like the generated
// kernels); a gemm inside a task runs on its task's thread.
//
// float32 gemms are oneDNN's sgemm (thunder::dnnl::sgemm: AVX2/AVX-512
// kernels picked at run time, which plain loops at the library's baseline
// flags do not reach); float64 ones (tests, references) are plain loops.
// Operands are read in place with any batch and row strides (the [B, H, T, D]
// head views of a qkv split are strided [B, T, 3, H, D]) as long as the last
// dim is contiguous; otherwise that operand is copied once.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "thunder/core/error.h"
#include "thunder/executors/dnnl_matmul.h"
#include "thunder/executors/executor.h"
#include "thunder/executors/kernel.h"
#include "thunder/lang/ltorch.h"

namespace thunder::attention {
namespace {

// Query rows per tile: a [64, S] score tile stays in L2 at the sequence
// lengths of interest, and gemms of 64 rows run near oneDNN's peak.
constexpr int64_t kRowTile = 64;

// Row-major C [m, n] = alpha op(A) op(B) + beta C, op = transpose for 'T'.
void gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  dnnl::sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    double* ci = c + i * ldc;
    for (int64_t j = 0; j < n; ++j) ci[j] = beta == 0 ? 0 : beta * ci[j];
    for (int64_t p = 0; p < k; ++p) {
      const double aip = alpha * (ta == 'N' ? a[i * lda + p] : a[p * lda + i]);
      if (tb == 'N') {
        const double* bp = b + p * ldb;
        for (int64_t j = 0; j < n; ++j) ci[j] += aip * bp[j];
      } else {
        for (int64_t j = 0; j < n; ++j) ci[j] += aip * b[j * ldb + p];
      }
    }
  }
}

// One operand's [rows, cols] matrices: base pointer, batch sizes and strides,
// row stride (a valid leading dimension); the last dim is contiguous.
template <class T>
struct Mat {
  const T* data;
  c10::IntArrayRef sizes, strides;  // all dims; batch dims are [0, ndim - 2)
  int64_t ld;

  const T* row(int64_t b, int64_t i) const {
    int64_t off = 0;
    for (int64_t d = static_cast<int64_t>(sizes.size()) - 3; d >= 0; --d) {
      off += (b % sizes[d]) * strides[d];
      b /= sizes[d];
    }
    return data + off + i * ld;
  }
};

// The operand itself when a gemm can read its matrices (last dim contiguous,
// rows at least a row apart), else a contiguous copy.
at::Tensor gemm_readable(const at::Tensor& t) {
  const bool last = t.size(-1) <= 1 || t.stride(-1) == 1;
  const bool rows = t.size(-2) <= 1 || t.stride(-2) >= std::max<int64_t>(t.size(-1), 1);
  return last && rows ? t : t.contiguous();
}

template <class T>
Mat<T> mat(const at::Tensor& t) {
  const int64_t ld = t.size(-2) <= 1 ? std::max<int64_t>(t.size(-1), 1) : t.stride(-2);
  return {t.data_ptr<T>(), t.sizes(), t.strides(), ld};
}

// Shapes of one call: batch entries, query rows, keys, head sizes.
struct Dims {
  int64_t batch, t, s, d, dv;
  bool causal;
  int64_t keys(int64_t i) const { return causal ? std::min(i + 1, s) : s; }
  int64_t tiles() const { return (t + kRowTile - 1) / kRowTile; }
};

Dims dims_of(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool causal) {
  int64_t batch = 1;
  for (int64_t d = 0; d < q.dim() - 2; ++d) batch *= q.size(d);
  return {batch, q.size(-2), k.size(-2), q.size(-1), v.size(-1), causal};
}

// out = softmax(scores) V and lse per query row, over (batch entry, tile) tasks.
template <class T>
void forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const Dims& n,
             at::Tensor& out, at::Tensor& lse) {
  const Mat<T> mq = mat<T>(q), mk = mat<T>(k), mv = mat<T>(v);
  T* o = out.data_ptr<T>();
  T* l = lse.data_ptr<T>();
  const T scale = T(1) / std::sqrt(static_cast<T>(n.d));
  const int64_t tiles = n.tiles();
  at::parallel_for(0, n.batch * tiles, 1, [&](int64_t begin, int64_t end) {
    std::vector<T> scores(kRowTile * n.s);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t b = task / tiles, i0 = (task % tiles) * kRowTile;
      const int64_t rows = std::min(kRowTile, n.t - i0), keys = n.keys(i0 + rows - 1);
      T* s = scores.data();
      gemm('N', 'T', rows, keys, n.d, scale, mq.row(b, i0), mq.ld, mk.row(b, 0), mk.ld, T(0), s,
           keys);
      for (int64_t r = 0; r < rows; ++r) {
        T* sr = s + r * keys;
        const int64_t kept = n.keys(i0 + r);
        const T m = *std::max_element(sr, sr + kept);
        T sum = 0;
        for (int64_t j = 0; j < kept; ++j) {
          sr[j] = std::exp(sr[j] - m);
          sum += sr[j];
        }
        const T inv = T(1) / sum;
        for (int64_t j = 0; j < kept; ++j) sr[j] *= inv;
        std::fill(sr + kept, sr + keys, T(0));
        l[b * n.t + i0 + r] = m + std::log(sum);
      }
      gemm('N', 'N', rows, n.dv, keys, T(1), s, keys, mv.row(b, 0), mv.ld, T(0),
           o + (b * n.t + i0) * n.dv, n.dv);
    }
  });
}

// gq, gk, gv with P = exp(scores - lse) recomputed per tile; one task per
// batch entry, its tiles in order (each adds to the entry's gk and gv).
template <class T>
void backward(const at::Tensor& go, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
              const at::Tensor& out, const at::Tensor& lse, const Dims& n, at::Tensor& gq,
              at::Tensor& gk, at::Tensor& gv) {
  const Mat<T> mgo = mat<T>(go), mq = mat<T>(q), mk = mat<T>(k), mv = mat<T>(v), mo = mat<T>(out);
  const T* l = lse.data_ptr<T>();
  T *dq = gq.data_ptr<T>(), *dk = gk.data_ptr<T>(), *dv = gv.data_ptr<T>();
  const T scale = T(1) / std::sqrt(static_cast<T>(n.d));
  at::parallel_for(0, n.batch, 1, [&](int64_t begin, int64_t end) {
    std::vector<T> p_tile(kRowTile * n.s), ds_tile(kRowTile * n.s);
    for (int64_t b = begin; b < end; ++b) {
      T* dkb = dk + b * n.s * n.d;
      T* dvb = dv + b * n.s * n.dv;
      std::fill(dkb, dkb + n.s * n.d, T(0));
      std::fill(dvb, dvb + n.s * n.dv, T(0));
      for (int64_t i0 = 0; i0 < n.t; i0 += kRowTile) {
        const int64_t rows = std::min(kRowTile, n.t - i0), keys = n.keys(i0 + rows - 1);
        const T *qt = mq.row(b, i0), *got = mgo.row(b, i0), *kb = mk.row(b, 0), *vb = mv.row(b, 0);
        T *p = p_tile.data(), *ds = ds_tile.data();
        gemm('N', 'T', rows, keys, n.d, scale, qt, mq.ld, kb, mk.ld, T(0), p, keys);
        for (int64_t r = 0; r < rows; ++r) {
          T* pr = p + r * keys;
          const int64_t kept = n.keys(i0 + r);
          const T li = l[b * n.t + i0 + r];
          for (int64_t j = 0; j < kept; ++j) pr[j] = std::exp(pr[j] - li);
          std::fill(pr + kept, pr + keys, T(0));
        }
        gemm('T', 'N', keys, n.dv, rows, T(1), p, keys, got, mgo.ld, T(1), dvb, n.dv);
        gemm('N', 'T', rows, keys, n.dv, T(1), got, mgo.ld, vb, mv.ld, T(0), ds, keys);
        // dS = P * (dO V^T - rowsum(dO * O)); P is 0 past the causal bound.
        for (int64_t r = 0; r < rows; ++r) {
          const T *gor = mgo.row(b, i0 + r), *orow = mo.row(b, i0 + r);
          T delta = 0;
          for (int64_t c = 0; c < n.dv; ++c) delta += gor[c] * orow[c];
          T *pr = p + r * keys, *dsr = ds + r * keys;
          for (int64_t j = 0; j < keys; ++j) dsr[j] = pr[j] * (dsr[j] - delta);
        }
        gemm('N', 'N', rows, n.d, keys, scale, ds, keys, kb, mk.ld, T(0), dq + (b * n.t + i0) * n.d,
             n.d);
        gemm('T', 'N', keys, n.d, rows, scale, ds, keys, qt, mq.ld, T(1), dkb, n.d);
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
  const at::Tensor q = gemm_readable(k.tensor(0)), key = gemm_readable(k.tensor(1)),
                   v = gemm_readable(k.tensor(2));
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
  const at::Tensor go = gemm_readable(k.tensor(0)), q = gemm_readable(k.tensor(1)),
                   key = gemm_readable(k.tensor(2)), v = gemm_readable(k.tensor(3)),
                   out = gemm_readable(k.tensor(4)), lse = k.tensor(5).contiguous();
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
  // q, k, v (and grad, out and lse) on the CPU, all float32 or all float64,
  // at least 3-D, with one batch shape (sdpa_forward and sdpa_backward check
  // that in their metas; the plain op may broadcast, which stays with its
  // decomposition). The metas also refuse k without keys.
  bool can_claim(const BoundSymbol& b) const override {
    const AttentionSymbols& s = symbols();
    const bool backward = b.sym == s.backward;
    if (!backward && b.sym != s.sdpa && b.sym != s.forward) return false;
    const size_t tensors = backward ? 5 : 3;  // [grad,] q, k, v[, out]
    if (b.args.size() < tensors + 1 || !b.args[0].is_tensor()) return false;
    const Proxy& first = *b.args[0].proxy();
    if (first.dtype != DType::f32 && first.dtype != DType::f64) return false;
    for (size_t i = 0; i < tensors; ++i) {
      if (!cpu_tensor_of(b.args[i], first.dtype)) return false;
      const Proxy& p = *b.args[i].proxy();
      if (p.ndim() < 3 || p.ndim() != first.ndim() ||
          !std::equal(p.shape.begin(), p.shape.end() - 2, first.shape.begin()))
        return false;
    }
    return !backward || cpu_tensor_of(b.args[5], first.dtype);
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
