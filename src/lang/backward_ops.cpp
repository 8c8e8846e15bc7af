// Backward helpers as ltorch symbols: grad rules emit one statement each
// (ATen runs it with its fused backward kernel) whose decomposition states the
// formula in prims for every other executor.
#include <cmath>
#include <numbers>

#include "lang_util.h"

namespace thunder::ltorch {
namespace detail {

void register_backward() {
  define("ltorch.gelu_backward", {"grad", "a", "approximate"}, 0, [](const OpArgs& args) -> Value {
    const Value &go = args[0], &x = args[1];
    const std::string& approx = args.string(2);
    Value d;
    if (approx == "tanh") {
      // d/dx 0.5 x (1 + t), t = tanh(k (x + c x^3)):
      // 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2)
      const double k = std::sqrt(2.0 / std::numbers::pi), c = 0.044715;
      Value x2 = ltorch::mul(x, x);
      Value t = ltorch::tanh(ltorch::mul(ltorch::add(x, ltorch::mul(ltorch::mul(x2, x), c)), k));
      Value left = ltorch::mul(ltorch::add(t, 1.0), 0.5);
      Value dt = ltorch::mul(ltorch::sub(1.0, ltorch::mul(t, t)),
                             ltorch::mul(ltorch::add(ltorch::mul(x2, 3 * c), 1.0), k));
      d = ltorch::add(left, ltorch::mul(ltorch::mul(x, 0.5), dt));
    } else {
      THUNDER_CHECK(approx == "none",
                    "ltorch.gelu_backward: approximate must be 'none' or "
                    "'tanh', got '{}'",
                    approx);
      // Phi(x) + x phi(x)
      Value cdf = ltorch::mul(ltorch::add(ltorch::erf(ltorch::mul(x, kInvSqrt2)), 1.0), 0.5);
      Value pdf = ltorch::mul(ltorch::exp(ltorch::mul(ltorch::mul(x, x), -0.5)),
                              1.0 / std::sqrt(2.0 * std::numbers::pi));
      d = ltorch::add(cdf, ltorch::mul(x, pdf));
    }
    return ltorch::mul(go, d);
  });
  define("ltorch.softmax_backward", {"grad", "out", "dim"}, 0, [](const OpArgs& args) -> Value {
    const Value &go = args[0], &out = args[1];
    Value s = ltorch::sum(ltorch::mul(go, out), {args.integer(2)}, true);
    return ltorch::mul(out, ltorch::sub(go, s));
  });
  define("ltorch.log_softmax_backward", {"grad", "out", "dim"}, 0, [](const OpArgs& args) -> Value {
    const Value &go = args[0], &out = args[1];
    Value s = ltorch::sum(go, {args.integer(2)}, true);
    return ltorch::sub(go, ltorch::mul(ltorch::exp(out), s));
  });
  // layer_norm's backward from the statistics its forward saved (layer_norm_stats):
  // [grad_a, grad_weight or None, grad_bias or None]. has_bias says whether
  // the forward had a bias (the bias itself is not read).
  define("ltorch.native_layer_norm_backward",
         {"grad", "a", "normalized_shape", "mean", "rstd", "weight", "has_bias"}, 0,
         [](const OpArgs& args) -> Value {
           const std::string op = "ltorch.native_layer_norm_backward";
           const Proxy& x = tensor_arg(op, args[1], "a");
           const Proxy& g = tensor_arg(op, args[0], "grad");
           THUNDER_CHECK(is_float(x.dtype), "{}: a must be floating-point, got {}", op,
                         long_name(x.dtype));
           THUNDER_CHECK(g.shape == x.shape && g.dtype == x.dtype,
                         "{}: grad {} {} must match a {} {}", op, long_name(g.dtype),
                         shape_str(g.shape), long_name(x.dtype), shape_str(x.shape));
           const std::vector<int64_t>& ns = args.ints(2);
           const int64_t rank = x.ndim(), k = static_cast<int64_t>(ns.size());
           THUNDER_CHECK(k >= 1 && rank >= k && Shape(x.shape.end() - k, x.shape.end()) == ns,
                         "{}: normalized_shape {} must be the trailing dims of a's shape {}", op,
                         shape_str(ns), shape_str(x.shape));
           const DType ct = compute_dtype(x.dtype);
           check_layer_norm_stats(op, x, ns, args[3], args[4]);
           const Value& w = args[5];
           if (!w.is_none()) {
             const Proxy& p = tensor_arg(op, w, "weight");
             THUNDER_CHECK(p.shape == ns && p.dtype == x.dtype,
                           "{}: weight must be {} {}, got {} {}", op, long_name(x.dtype),
                           shape_str(ns), long_name(p.dtype), shape_str(p.shape));
           }
           std::vector<int64_t> dims, leading;
           for (int64_t d = 0; d < rank; ++d) (d < rank - k ? leading : dims).push_back(d);
           auto sum_leading = [&](const Value& v) {
             return leading.empty() ? v : ltorch::sum(v, leading, false);
           };
           auto in_ct = [&](const Value& v) { return x.dtype == ct ? v : ltorch::to(v, ct); };
           auto out_dt = [&](const Value& v) { return x.dtype == ct ? v : ltorch::to(v, x.dtype); };
           Value go = in_ct(args[0]);
           Value rstd = args[4];
           Value xhat = ltorch::mul(ltorch::sub(in_ct(args[1]), args[3]), rstd);
           Value gxhat = w.is_none() ? go : ltorch::mul(go, in_ct(w));
           Value m1 = ltorch::mean(gxhat, dims, true);
           Value m2 = ltorch::mean(ltorch::mul(gxhat, xhat), dims, true);
           Value gx = ltorch::mul(rstd, ltorch::sub(ltorch::sub(gxhat, m1), ltorch::mul(xhat, m2)));
           Value gw = w.is_none() ? Value() : out_dt(sum_leading(ltorch::mul(go, xhat)));
           Value gb = args.boolean(6) ? out_dt(sum_leading(go)) : Value();
           return Value(std::vector<Value>{out_dt(gx), gw, gb});
         });
  // (softmax(logits) - onehot(target)) * grad / count, rows of ignored targets zero.
  // softmax = exp(logits - log_sum_exp) is recomputed here, in the compute
  // dtype (log_sum_exp's), in the same pass that writes the gradient.
  define("ltorch.cross_entropy_backward", {"grad", "logits", "log_sum_exp", "targets"}, 0,
         [](const OpArgs& args) -> Value {
           const Value &go = args[0], &x = args[1], &lse = args[2], &t = args[3];
           const Proxy& p = *x.proxy();
           const DType ct = lse.proxy()->dtype;
           const int64_t n = p.shape[0], c = p.shape[1];
           Value valid = ltorch::ne(t, int64_t{-100});
           Value count = ltorch::sum(ltorch::to(valid, ct), {0}, false);
           Value cls =
               prims::broadcast_in_dim(prims::iota(c, 0, 1, p.device, DType::i64), {n, c}, {1});
           Value onehot = ltorch::to(ltorch::eq(cls, ltorch::unsqueeze(t, 1)), ct);
           Value rows = ltorch::unsqueeze(ltorch::to(valid, ct), 1);
           Value soft = ltorch::exp(ltorch::sub(ltorch::to(x, ct), ltorch::unsqueeze(lse, 1)));
           Value d = ltorch::mul(ltorch::sub(soft, onehot), rows);
           return ltorch::to(ltorch::mul(d, ltorch::div(ltorch::to(go, ct), count)), p.dtype);
         });
  define("ltorch.embedding_backward", {"grad", "indices", "num_weights"}, 0,
         [](const OpArgs& args) -> Value {
           const Value &go = args[0], &idx = args[1];
           const Proxy& g = *go.proxy();
           const int64_t n = idx.proxy()->numel(), d = g.shape.back();
           Value flat = ltorch::reshape(ltorch::to(idx, DType::i64), {n, 1});
           Value zeros = ltorch::zeros({args.integer(2), d}, g.device, g.dtype);
           return ltorch::scatter_add(zeros, 0, ltorch::expand(flat, {n, d}),
                                      ltorch::reshape(go, {n, d}));
         });
}

}  // namespace detail

Value native_layer_norm_backward(const Value& grad, const Value& a,
                                 const std::vector<int64_t>& normalized_shape, const Value& mean,
                                 const Value& rstd, const Value& weight, bool has_bias) {
  THUNDER_LTORCH_CALL("ltorch.native_layer_norm_backward", grad, a, normalized_shape, mean, rstd,
                      weight, has_bias);
}

Value gelu_backward(const Value& grad, const Value& a, const std::string& approximate) {
  THUNDER_LTORCH_CALL("ltorch.gelu_backward", grad, a, approximate);
}
Value softmax_backward(const Value& grad, const Value& out, int64_t dim) {
  THUNDER_LTORCH_CALL("ltorch.softmax_backward", grad, out, dim);
}
Value log_softmax_backward(const Value& grad, const Value& out, int64_t dim) {
  THUNDER_LTORCH_CALL("ltorch.log_softmax_backward", grad, out, dim);
}

Value cross_entropy_backward(const Value& grad, const Value& logits, const Value& log_sum_exp,
                             const Value& targets) {
  THUNDER_LTORCH_CALL("ltorch.cross_entropy_backward", grad, logits, log_sum_exp, targets);
}
Value embedding_backward(const Value& grad, const Value& indices, int64_t num_weights) {
  THUNDER_LTORCH_CALL("ltorch.embedding_backward", grad, indices, num_weights);
}

}  // namespace thunder::ltorch
