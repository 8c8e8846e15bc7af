// Grad rules for composites whose decomposition would save or recompute too
// much: the forward stays one ltorch statement (ATen runs it whole) and the
// backward reads only what it needs (gelu saves its input, softmax its output).
// Statements the forward output does not need run in the backward.
#include <array>
#include <cmath>
#include <numbers>

#include "grad_rule_registry.h"
#include "thunder/core/error.h"
#include "thunder/lang/ltorch.h"
#include "thunder/prims/prims.h"
#include "thunder/transforms/autodiff.h"

namespace thunder {

namespace {

std::vector<int64_t> shape_of(const Value& v) { return P(v).shape; }

Value linear_rule(VjpContext& g, const OpArgs& a) {
  Value out = ltorch::linear(a[0], a[1], a[2]);
  Value go = g.get_grad(out);
  const Shape xs = shape_of(a[0]);
  const int64_t in = xs.back(), outf = P(out).shape.back();
  if (g.requires_grad(a[0])) g.put_grad(a[0], ltorch::matmul(go, a[1]));
  Value g2 = ltorch::reshape(go, {-1, outf});
  if (g.requires_grad(a[1]))
    g.put_grad(a[1], ltorch::matmul(ltorch::transpose(g2, 0, 1), ltorch::reshape(a[0], {-1, in})));
  if (!a[2].is_none() && g.requires_grad(a[2])) g.put_grad(a[2], ltorch::sum(g2, {0}, false));
  return out;
}

Value gelu_rule(VjpContext& g, const OpArgs& a) {
  const std::string approx = a.string(1);
  Value x = a[0];
  Value out = ltorch::gelu(x, approx);
  Value go = g.get_grad(out);
  if (!g.requires_grad(x)) return out;
  g.put_grad(x, ltorch::gelu_backward(go, x, approx));
  return out;
}

Value softmax_rule(VjpContext& g, const OpArgs& a) {
  Value out = ltorch::softmax(a[0], a.integer(1));
  Value go = g.get_grad(out);
  if (!g.requires_grad(a[0])) return out;
  g.put_grad(a[0], ltorch::softmax_backward(go, out, a.integer(1)));
  return out;
}

Value log_softmax_rule(VjpContext& g, const OpArgs& a) {
  Value out = ltorch::log_softmax(a[0], a.integer(1));
  Value go = g.get_grad(out);
  if (!g.requires_grad(a[0])) return out;
  g.put_grad(a[0], ltorch::log_softmax_backward(go, out, a.integer(1)));
  return out;
}

// The forward keeps each row's mean and rstd, so the backward (one
// statement: libtorch's fused kernel under ATen) reads them instead of
// normalising x again. The output is an elementwise step from x and the
// statistics, which the backward needs anyway: the min-cut recomputes it
// there instead of saving it (a linear layer after the norm reads it).
Value layer_norm_rule(VjpContext& g, const OpArgs& a) {
  const Value &x = a[0], &w = a[2], &b = a[3];
  const auto& norm_shape = a.ints(1);
  double eps = a.number(4);
  if (!g.requires_grad(x) && !g.requires_grad(w) && !g.requires_grad(b))
    return ltorch::layer_norm(x, norm_shape, w, b, eps);
  const std::vector<Value> stats = ltorch::layer_norm_stats(x, norm_shape, eps).as_list();
  Value out = ltorch::layer_norm_from_stats(x, norm_shape, stats[0], stats[1], w, b);
  Value go = g.get_grad(out);
  Value r =
      ltorch::native_layer_norm_backward(go, x, norm_shape, stats[0], stats[1], w, !b.is_none());
  const auto& grads = r.as_list();
  g.put_grad(x, grads[0]);
  if (!w.is_none()) g.put_grad(w, grads[1]);
  if (!b.is_none()) g.put_grad(b, grads[2]);
  return out;
}

// v summed down to `shape` (the inverse of batch broadcasting).
Value sum_to(const Value& v, const Shape& shape) {
  const Shape& vs = P(v).shape;
  const int64_t lead = static_cast<int64_t>(vs.size() - shape.size());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < static_cast<int64_t>(vs.size()); ++d)
    if (d < lead || (shape[d - lead] == 1 && vs[d] != 1)) dims.push_back(d);
  Value r = dims.empty() ? v : ltorch::sum(v, dims, false);
  return P(r).shape == shape ? r : ltorch::reshape(r, shape);
}

// matmul stays one statement; 1-D operands are promoted to matrices (as torch
// does), gradients are matmuls summed over broadcast batch dims.
Value matmul_rule(VjpContext& g, const OpArgs& a) {
  Value out = ltorch::matmul(a[0], a[1]);
  Value go = g.get_grad(out);
  const Proxy &x = P(a[0]), &y = P(a[1]);
  Value x2 = x.ndim() == 1 ? ltorch::unsqueeze(a[0], 0) : a[0];
  Value y2 = y.ndim() == 1 ? ltorch::unsqueeze(a[1], 1) : a[1];
  Value g2 = go;
  if (x.ndim() == 1) g2 = ltorch::unsqueeze(g2, P(g2).ndim() == 0 ? 0 : P(g2).ndim() - 1);
  if (y.ndim() == 1) g2 = ltorch::unsqueeze(g2, P(g2).ndim());
  auto mT = [](const Value& v) { return ltorch::transpose(v, -1, -2); };
  // Sum over batch dims against the promoted shape, then drop the promotion.
  auto unpromote = [](const Value& v, const Shape& s) {
    return P(v).shape == s ? v : ltorch::reshape(v, s);
  };
  if (g.requires_grad(a[0]))
    g.put_grad(a[0], unpromote(sum_to(ltorch::matmul(g2, mT(y2)), P(x2).shape), x.shape));
  if (g.requires_grad(a[1]))
    g.put_grad(a[1], unpromote(sum_to(ltorch::matmul(mT(x2), g2), P(y2).shape), y.shape));
  return out;
}

// The forward computes each row's log-sum-exp and picks the target's logit:
// mean(lse - logits[i, t_i]) over targets that are not ignore_index (-100),
// without the [N, C] log-probabilities libtorch saves. The backward reads the
// logits (which the caller holds anyway: the lm head's output) and the N
// log-sum-exps, and recomputes softmax in the pass that writes the gradient.
Value cross_entropy_rule(VjpContext& g, const OpArgs& a) {
  const Proxy& x = P(a[0]);
  Value logits = a[0], t = a[1];
  if (x.ndim() == 1) {
    logits = ltorch::reshape(logits, {1, x.shape[0]});
    t = ltorch::reshape(t, {1});
  }
  const int64_t n = P(logits).shape[0];
  const DType ct = x.dtype == DType::f16 || x.dtype == DType::bf16 ? DType::f32 : x.dtype;
  Value xc = x.dtype == ct ? logits : ltorch::to(logits, ct);
  Value m = ltorch::amax(xc, {1}, true);
  Value lse = ltorch::add(ltorch::log(ltorch::sum(ltorch::exp(ltorch::sub(xc, m)), {1}, false)),
                          ltorch::reshape(m, {n}));
  Value valid = ltorch::ne(t, int64_t{-100});
  Value safe = ltorch::where(valid, t, int64_t{0});
  Value picked = ltorch::reshape(ltorch::gather(xc, 1, ltorch::reshape(safe, {n, 1})), {n});
  Value per_row = ltorch::where(valid, ltorch::sub(lse, picked), 0.0);
  Value count = ltorch::sum(ltorch::to(valid, ct), {0}, false);
  Value out = ltorch::div(ltorch::sum(per_row, {0}, false), count);
  if (x.dtype != ct) out = ltorch::to(out, x.dtype);
  if (!g.requires_grad(a[0])) return out;
  Value gx = ltorch::cross_entropy_backward(g.get_grad(out), logits, lse, t);
  g.put_grad(a[0], x.ndim() == 1 ? ltorch::reshape(gx, x.shape) : gx);
  return out;
}

// Attention is one statement each way: ltorch.sdpa_forward returns the output
// and each query row's log-sum-exp, ltorch.sdpa_backward recomputes the
// probabilities from q, k and that lse. Saved: q, k, v, out and lse, never
// the [.., T, S] probabilities the decomposition's softmax would save. Batch
// dims that broadcast (as in matmul) are expanded first and the gradients
// summed back.
Value sdpa_rule(VjpContext& g, const OpArgs& a) {
  const bool causal = a.boolean(3);
  const std::array<Value, 3> qkv = {a[0], a[1], a[2]};
  Shape batch;
  for (const Value& x : qkv) {
    const Shape& s = P(x).shape;
    const size_t n = s.size() - 2;
    if (batch.size() < n) batch.insert(batch.begin(), n - batch.size(), 1);
    for (size_t i = 0; i < n; ++i) {
      int64_t& b = batch[batch.size() - n + i];
      if (b == 1) b = s[i];
    }
  }
  std::array<Value, 3> e;
  for (size_t i = 0; i < 3; ++i) {
    const Shape& s = P(qkv[i]).shape;
    Shape full = batch;
    full.insert(full.end(), s.end() - 2, s.end());
    e[i] = s == full ? qkv[i] : ltorch::expand(qkv[i], full);
  }
  Value r = ltorch::sdpa_forward(e[0], e[1], e[2], causal);
  Value out = r.as_list()[0], lse = r.as_list()[1];
  if (!g.requires_grad(a[0]) && !g.requires_grad(a[1]) && !g.requires_grad(a[2])) return out;
  Value grads = ltorch::sdpa_backward(g.get_grad(out), e[0], e[1], e[2], out, lse, causal);
  for (size_t i = 0; i < 3; ++i)
    if (g.requires_grad(qkv[i])) g.put_grad(qkv[i], sum_to(grads.as_list()[i], P(qkv[i]).shape));
  return out;
}

// The weight's gradient is libtorch's embedding backward; only indices are saved.
Value embedding_rule(VjpContext& g, const OpArgs& a) {
  Value out = ltorch::embedding(a[0], a[1]);
  if (g.requires_grad(a[1]))
    g.put_grad(a[1], ltorch::embedding_backward(g.get_grad(out), a[0], P(a[1]).shape[0]));
  return out;
}

// The backward reads the 1-byte keep mask, not the random values or the
// scaled float mask the decomposition's mul would save.
Value dropout_rule(VjpContext& g, const OpArgs& a) {
  const Value& x = a[0];
  double p = a.number(1);
  bool training = a.boolean(2);
  // Identity and all-zero cases: the decomposition has no random draw to keep.
  if (!training || p == 0.0 || p == 1.0) {
    Value out = ltorch::dropout(x, p, training);
    if (out.proxy() == x.proxy()) return out;  // the output is x: its cotangent is x's
    g.put_grad(x, prims::mul(g.get_grad(out), 0.0));
    return out;
  }
  const Proxy& xp = P(x);
  Value u = prims::uniform(xp.shape, 0.0, 1.0, xp.device, xp.dtype);
  Value keep = prims::lt(u, 1.0 - p);
  double scale = 1.0 / (1.0 - p);
  Value out = prims::mul(x, prims::mul(prims::convert_element_type(keep, xp.dtype), scale));
  Value go = g.get_grad(out);
  if (g.requires_grad(x))
    g.put_grad(x, prims::mul(go, prims::mul(prims::convert_element_type(keep, xp.dtype), scale)));
  return out;
}

// split's pieces get their cotangents back as one cat, instead of one padded
// full-size tensor per piece summed up.
Value split_rule(VjpContext& g, const OpArgs& a) {
  const Value& sizes = a[1];
  int64_t dim = a.integer(2);
  Value out = sizes.kind() == Value::Kind::IntList ? ltorch::split(a[0], sizes.as_int_list(), dim)
                                                   : ltorch::split(a[0], sizes.as_int(), dim);
  if (!g.requires_grad(a[0])) return out;
  std::vector<Value> grads;
  for (const Value& piece : out.as_list()) grads.push_back(g.get_grad(piece));
  g.put_grad(a[0], ltorch::cat(grads, dim));
  return out;
}

}  // namespace

void register_composite_grad_rules() {
  set_grad_rule("ltorch.linear", linear_rule);
  set_grad_rule("ltorch.gelu", gelu_rule);
  set_grad_rule("ltorch.softmax", softmax_rule);
  set_grad_rule("ltorch.log_softmax", log_softmax_rule);
  set_grad_rule("ltorch.layer_norm", layer_norm_rule);
  set_grad_rule("ltorch.split", split_rule);
  set_grad_rule("ltorch.dropout", dropout_rule);
  set_grad_rule("ltorch.matmul", matmul_rule);
  set_grad_rule("ltorch.cross_entropy", cross_entropy_rule);
  set_grad_rule("ltorch.scaled_dot_product_attention", sdpa_rule);
  set_grad_rule("ltorch.embedding", embedding_rule);
}

}  // namespace thunder
