// Scaled dot-product attention as ltorch symbols: the op itself
// (ltorch.scaled_dot_product_attention) and the pair its grad rule emits,
// ltorch.sdpa_forward (the output and each query row's log-sum-exp) and
// ltorch.sdpa_backward (gq, gk, gv from q, k, v, the output and the lse), so
// training saves no [.., T, S] probabilities. Each decomposes into prims with
// torch's math-path arithmetic: q scaled by 1/sqrt(D) first, then q @ k^T; the
// causal mask is the top-left aligned tril (key j kept for query i iff j <= i).
#include <cmath>
#include <limits>
#include <utility>

#include "lang_util.h"

namespace thunder::ltorch::detail {
namespace {

struct Qkv {
  const Proxy *q, *k, *v;
};

// The checks every attention symbol shares: floating q, k and v of one dtype,
// at least 2-D, q and k of one head size, k and v of one sequence length, and
// at least one key (a query with no key to attend to has no softmax).
Qkv check_qkv(const std::string& op, const Value& qv, const Value& kv, const Value& vv) {
  const Proxy& q = tensor_arg(op, qv, "q");
  const Proxy& k = tensor_arg(op, kv, "k");
  const Proxy& v = tensor_arg(op, vv, "v");
  THUNDER_CHECK(is_float(q.dtype), "{}: expected a floating-point tensor for q, got {}", op,
                long_name(q.dtype));
  for (auto [p, name] : {std::pair{&k, "k"}, std::pair{&v, "v"}})
    THUNDER_CHECK(p->dtype == q.dtype, "{}: dtypes {} (q) and {} ({}) must be equal", op,
                  long_name(q.dtype), long_name(p->dtype), name);
  for (const Proxy* p : {&q, &k, &v})
    THUNDER_CHECK(p->ndim() >= 2, "{}: q, k and v must be at least 2-D, got shape {}", op,
                  shape_str(p->shape));
  THUNDER_CHECK(q.shape.back() == k.shape.back(),
                "{}: q {} and k {} must have the same embedding size", op, shape_str(q.shape),
                shape_str(k.shape));
  THUNDER_CHECK(k.shape[k.ndim() - 2] == v.shape[v.ndim() - 2],
                "{}: k {} and v {} must have the same sequence length", op, shape_str(k.shape),
                shape_str(v.shape));
  THUNDER_CHECK(k.shape[k.ndim() - 2] > 0,
                "{}: k {} has no keys: every query row would be fully masked", op,
                shape_str(k.shape));
  return {&q, &k, &v};
}

// sdpa_forward and sdpa_backward take q, k and v with one batch shape (the
// grad rule expands broadcast batch dims), so their kernels index no broadcast.
void check_same_batch(const std::string& op, const Qkv& t) {
  auto batch = [](const Proxy* p) { return Shape(p->shape.begin(), p->shape.end() - 2); };
  THUNDER_CHECK(batch(t.q) == batch(t.k) && batch(t.q) == batch(t.v),
                "{}: q {}, k {} and v {} must have the same batch dims", op, shape_str(t.q->shape),
                shape_str(t.k->shape), shape_str(t.v->shape));
}

double scale_of(const Proxy& q) { return 1.0 / std::sqrt(static_cast<double>(q.shape.back())); }

Value transpose_last(const Value& x) { return ltorch::transpose(x, -2, -1); }

// q k^T / sqrt(D) (q scaled first, as torch), keys past the causal bound -inf.
Value masked_scores(const std::string& op, const Value& q, const Value& k, bool causal) {
  const Proxy &qp = *q.proxy(), &kp = *k.proxy();
  Value scores = ltorch::matmul(prims::mul(q, scale_of(qp)), transpose_last(k));
  if (!causal) return scores;
  const int64_t l = qp.shape[qp.ndim() - 2], s = kp.shape[kp.ndim() - 2];
  Value rows = prims::broadcast_in_dim(prims::iota(l, 0, 1, qp.device, DType::i64), {l, s}, {0});
  Value cols = prims::broadcast_in_dim(prims::iota(s, 0, 1, qp.device, DType::i64), {l, s}, {1});
  Value keep = broadcast_to(op, prims::le(cols, rows), scores.proxy()->shape);
  return prims::where(keep, scores, -std::numeric_limits<double>::infinity());
}

Value sdpa_body(const OpArgs& args) {
  const std::string op = "ltorch.scaled_dot_product_attention";
  check_qkv(op, args[0], args[1], args[2]);
  Value scores = masked_scores(op, args[0], args[1], args.boolean(3));
  return ltorch::matmul(ltorch::softmax(scores, -1), args[2]);
}

// [out, lse]: lse = log(sum(exp(scores))) per query row, in the compute dtype.
Value sdpa_forward_body(const OpArgs& args) {
  const std::string op = "ltorch.sdpa_forward";
  const Qkv t = check_qkv(op, args[0], args[1], args[2]);
  check_same_batch(op, t);
  const DType ct = compute_dtype(t.q->dtype);
  Value s = maybe_convert(masked_scores(op, args[0], args[1], args.boolean(3)), ct);
  Value m = ltorch::amax(s, {-1}, true);
  Value e = ltorch::exp(ltorch::sub(s, m));
  Value sum = ltorch::sum(e, {-1}, true);
  Value lse = ltorch::squeeze(ltorch::add(ltorch::log(sum), m), std::vector<int64_t>{-1});
  Value p = maybe_convert(ltorch::div(e, sum), t.q->dtype);
  return Value(std::vector<Value>{ltorch::matmul(p, args[2]), lse});
}

// [gq, gk, gv]. The probabilities are recomputed as exp(scores - lse); with
// dS = P * (dO V^T - rowsum(dO * O)): gq = dS K / sqrt(D), gk = dS^T Q / sqrt(D),
// gv = P^T dO.
Value sdpa_backward_body(const OpArgs& args) {
  const std::string op = "ltorch.sdpa_backward";
  const Value &go = args[0], &q = args[1], &k = args[2], &v = args[3], &out = args[4],
              &lse = args[5];
  const Qkv t = check_qkv(op, q, k, v);
  check_same_batch(op, t);
  const DType dt = t.q->dtype, ct = compute_dtype(dt);
  const Proxy& lp = tensor_arg(op, lse, "lse");
  Shape rows(t.q->shape.begin(), t.q->shape.end() - 1);
  THUNDER_CHECK(lp.shape == rows && lp.dtype == ct,
                "{}: lse must be {} {} (one per query row), got {} {}", op, long_name(ct),
                shape_str(rows), long_name(lp.dtype), shape_str(lp.shape));
  Value s = maybe_convert(masked_scores(op, q, k, args.boolean(6)), ct);
  Value p = ltorch::exp(ltorch::sub(s, ltorch::unsqueeze(lse, -1)));
  Value goc = maybe_convert(go, ct);
  Value gv = ltorch::matmul(transpose_last(p), goc);
  Value dp = ltorch::matmul(goc, transpose_last(maybe_convert(v, ct)));
  Value delta = ltorch::sum(ltorch::mul(goc, maybe_convert(out, ct)), {-1}, true);
  Value ds = ltorch::mul(p, ltorch::sub(dp, delta));
  const double scale = scale_of(*t.q);
  Value gq = ltorch::mul(ltorch::matmul(ds, maybe_convert(k, ct)), scale);
  Value gk = ltorch::mul(ltorch::matmul(transpose_last(ds), maybe_convert(q, ct)), scale);
  return Value(
      std::vector<Value>{maybe_convert(gq, dt), maybe_convert(gk, dt), maybe_convert(gv, dt)});
}

}  // namespace

void register_attention() {
  const uint32_t kMatmul = tag_bits({OpTag::MATMUL_OP});
  define("ltorch.scaled_dot_product_attention", {"q", "k", "v", "is_causal"}, kMatmul, sdpa_body);
  define("ltorch.sdpa_forward", {"q", "k", "v", "is_causal"}, kMatmul, sdpa_forward_body);
  define("ltorch.sdpa_backward", {"grad", "q", "k", "v", "out", "lse", "is_causal"}, kMatmul,
         sdpa_backward_body);
}

}  // namespace thunder::ltorch::detail

namespace thunder::ltorch {

Value scaled_dot_product_attention(const Value& q, const Value& k, const Value& v, bool is_causal) {
  THUNDER_LTORCH_CALL("ltorch.scaled_dot_product_attention", q, k, v, is_causal);
}
Value sdpa_forward(const Value& q, const Value& k, const Value& v, bool is_causal) {
  THUNDER_LTORCH_CALL("ltorch.sdpa_forward", q, k, v, is_causal);
}
Value sdpa_backward(const Value& grad, const Value& q, const Value& k, const Value& v,
                    const Value& out, const Value& lse, bool is_causal) {
  THUNDER_LTORCH_CALL("ltorch.sdpa_backward", grad, q, k, v, out, lse, is_causal);
}

}  // namespace thunder::ltorch
