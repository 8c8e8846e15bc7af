// ltorch linear algebra and nn.functional ops, decomposed into prims: matmul
// (batch broadcasting), linear, dropout, gelu, softmax, log_softmax, layer_norm,
// batch_norm, embedding and cross_entropy (attention is in attention.cpp). Half-precision
// inputs are computed in float32 where torch's kernels accumulate in float.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "lang_util.h"

namespace thunder::ltorch {
namespace detail {
namespace {

const Proxy& float_arg(const std::string& op, const Value& v, const char* name) {
  const Proxy& p = tensor_arg(op, v, name);
  THUNDER_CHECK(is_float(p.dtype), "{}: expected a floating-point tensor for {}, got {}", op, name,
                long_name(p.dtype));
  return p;
}

void check_same_dtype(const std::string& op, const Proxy& a, const char* an, const Proxy& b,
                      const char* bn) {
  THUNDER_CHECK(a.dtype == b.dtype, "{}: dtypes {} ({}) and {} ({}) must be equal", op,
                long_name(a.dtype), an, long_name(b.dtype), bn);
}

// Broadcasts a reduction result (dims removed) back to `shape`.
Value unreduce(const Value& r, const Shape& shape, const std::vector<int64_t>& reduced) {
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) kept.push_back(d);
  return prims::broadcast_in_dim(r, shape, kept);
}

// x - amax(x, dim), in the compute dtype; the shared start of softmax and log_softmax.
struct Shifted {
  Value shifted;
  std::vector<int64_t> dims;
};
Shifted shift_by_max(const std::string& op, const Value& x, int64_t dim) {
  const Proxy& p = float_arg(op, x, "a");
  std::vector<int64_t> dims;
  if (p.ndim() > 0)
    dims.push_back(canonical_dim(op, dim, p.ndim()));
  else
    canonical_dim(op, dim, 0);
  Value xc = maybe_convert(x, compute_dtype(p.dtype));
  Value m = unreduce(prims::amax(xc, dims), p.shape, dims);
  return {prims::sub(xc, m), dims};
}

Value matmul_body(const OpArgs& args) {
  const std::string op = "ltorch.matmul";
  const Proxy& a = tensor_arg(op, args[0], "a");
  const Proxy& b = tensor_arg(op, args[1], "b");
  THUNDER_CHECK(a.ndim() >= 1 && b.ndim() >= 1,
                "{}: both arguments must be at least 1-D, got shapes {} and {}", op,
                shape_str(a.shape), shape_str(b.shape));
  check_same_dtype(op, a, "a", b, "b");
  float_arg(op, args[0], "a");
  int64_t ka = a.shape.back();
  int64_t kb = b.ndim() == 1 ? b.shape[0] : b.shape[b.ndim() - 2];
  THUNDER_CHECK(ka == kb, "{}: shapes {} and {} cannot be multiplied ({} != {})", op,
                shape_str(a.shape), shape_str(b.shape), ka, kb);
  if (a.ndim() < 2 || b.ndim() < 2) return prims::matmul(args[0], args[1]);
  // Broadcast the batch dims of both operands to one batch shape.
  Shape batch = broadcast_shapes(op, Shape(a.shape.begin(), a.shape.end() - 2),
                                 Shape(b.shape.begin(), b.shape.end() - 2));
  Shape sa = batch, sb = batch;
  sa.insert(sa.end(), a.shape.end() - 2, a.shape.end());
  sb.insert(sb.end(), b.shape.end() - 2, b.shape.end());
  return prims::matmul(broadcast_to(op, args[0], sa), broadcast_to(op, args[1], sb));
}

Value linear_body(const OpArgs& args) {
  const std::string op = "ltorch.linear";
  const Proxy& x = float_arg(op, args[0], "x");
  const Proxy& w = tensor_arg(op, args[1], "w");
  check_same_dtype(op, x, "x", w, "w");
  THUNDER_CHECK(x.ndim() >= 1, "{}: input x must be at least 1-D, got shape {}", op,
                shape_str(x.shape));
  THUNDER_CHECK(w.ndim() == 2, "{}: weight w must be 2-D, got shape {}", op, shape_str(w.shape));
  THUNDER_CHECK(x.shape.back() == w.shape[1],
                "{}: shapes {} and {} cannot be multiplied ({} != {})", op, shape_str(x.shape),
                shape_str(w.shape), x.shape.back(), w.shape[1]);
  if (!args[2].is_none()) {
    const Proxy& b = tensor_arg(op, args[2], "bias");
    check_same_dtype(op, x, "x", b, "bias");
    THUNDER_CHECK(b.shape == Shape{w.shape[0]}, "{}: bias must have shape [{}], got {}", op,
                  w.shape[0], shape_str(b.shape));
  }
  return prims::linear(args[0], args[1], args[2]);
}

Value dropout_body(const OpArgs& args) {
  const std::string op = "ltorch.dropout";
  const Proxy& x = tensor_arg(op, args[0], "x");
  double p = args.number(1);
  bool training = args.boolean(2);
  THUNDER_CHECK(p >= 0.0 && p <= 1.0,
                "{}: dropout probability has to be between 0 and 1, but got {}", op,
                format_double(p));
  if (!training || p == 0.0) return args[0];
  float_arg(op, args[0], "x");
  // torch multiplies by a zero tensor rather than making zeros, so NaN stays NaN.
  if (p == 1.0) return prims::mul(args[0], 0.0);
  Value u = prims::uniform(x.shape, 0.0, 1.0, x.device, x.dtype);
  Value keep = prims::convert_element_type(prims::lt(u, 1.0 - p), x.dtype);
  // As torch: the mask holds 0 or 1/(1-p) (rounded in x's dtype), then multiplies x.
  return prims::mul(args[0], prims::mul(keep, 1.0 / (1.0 - p)));
}

Value gelu_body(const OpArgs& args) {
  const std::string op = "ltorch.gelu";
  const Proxy& x = float_arg(op, args[0], "x");
  const std::string& approximate = args.string(1);
  THUNDER_CHECK(approximate == "none" || approximate == "tanh",
                "{}: approximate must be 'none' or 'tanh', got '{}'", op, approximate);
  Value xc = maybe_convert(args[0], compute_dtype(x.dtype));
  Value inner;
  if (approximate == "none") {
    inner = prims::erf(prims::mul(xc, kInvSqrt2));
  } else {
    const double k = std::sqrt(2.0 / std::numbers::pi);
    Value cube = prims::mul(prims::mul(xc, xc), xc);
    inner = prims::tanh(prims::mul(prims::add(xc, prims::mul(cube, 0.044715)), k));
  }
  Value out = prims::mul(prims::mul(xc, 0.5), prims::add(inner, 1.0));
  return maybe_convert(out, x.dtype);
}

Value softmax_body(const OpArgs& args) {
  const std::string op = "ltorch.softmax";
  Shifted s = shift_by_max(op, args[0], args.integer(1));
  const Proxy& x = *args[0].proxy();
  Value e = prims::exp(s.shifted);
  Value out = prims::div(e, unreduce(prims::sum(e, s.dims), x.shape, s.dims));
  return maybe_convert(out, x.dtype);
}

Value log_softmax_body(const OpArgs& args) {
  const std::string op = "ltorch.log_softmax";
  Shifted s = shift_by_max(op, args[0], args.integer(1));
  const Proxy& x = *args[0].proxy();
  Value lse = prims::log(prims::sum(prims::exp(s.shifted), s.dims));
  Value out = prims::sub(s.shifted, unreduce(lse, x.shape, s.dims));
  return maybe_convert(out, x.dtype);
}

// The checks every layer_norm symbol shares: floating x whose trailing dims
// are normalized_shape, and w and b (each may be None) of that shape and
// x's dtype.
const Proxy& check_layer_norm(const std::string& op, const Value& xv,
                              const std::vector<int64_t>& ns, const Value& w, const Value& b) {
  const Proxy& x = float_arg(op, xv, "x");
  THUNDER_CHECK(!ns.empty(), "{}: normalized_shape must have at least one dim", op);
  const int64_t k = static_cast<int64_t>(ns.size());
  THUNDER_CHECK(x.ndim() >= k && Shape(x.shape.end() - k, x.shape.end()) == ns,
                "{}: normalized_shape {} must equal the trailing dims of the input shape {}", op,
                shape_str(ns), shape_str(x.shape));
  for (auto [v, name] : {std::pair{&w, "w"}, std::pair{&b, "b"}}) {
    if (v->is_none()) continue;
    const Proxy& p = tensor_arg(op, *v, name);
    check_same_dtype(op, x, "x", p, name);
    THUNDER_CHECK(p.shape == ns, "{}: {} must have shape normalized_shape {}, got {}", op, name,
                  shape_str(ns), shape_str(p.shape));
  }
  return x;
}

std::vector<int64_t> normalized_dims(const Proxy& x, size_t k) {
  std::vector<int64_t> dims;
  for (int64_t d = x.ndim() - static_cast<int64_t>(k); d < x.ndim(); ++d) dims.push_back(d);
  return dims;
}

// Each row's mean and 1/sqrt(var + eps) of xc (x in the compute dtype), with
// the normalised dims reduced away.
struct RowStats {
  Value mean, rstd;
};
RowStats row_stats(const Value& xc, const std::vector<int64_t>& dims, int64_t n, double eps) {
  return {prims::div(prims::sum(xc, dims), static_cast<double>(n)),
          prims::rsqrt(prims::add(prims::var(xc, dims, 0.0), eps))};
}

// (xc - mean) * rstd, scaled by w and shifted by b, in x's dtype; mean and
// rstd already broadcast to x's shape.
Value normalize(const std::string& op, const Proxy& x, const Value& xc, const Value& mean,
                const Value& rstd, const Value& w, const Value& b) {
  const DType dt = compute_dtype(x.dtype);
  Value out = prims::mul(prims::sub(xc, mean), rstd);
  if (!w.is_none()) out = prims::mul(out, broadcast_to(op, maybe_convert(w, dt), x.shape));
  if (!b.is_none()) out = prims::add(out, broadcast_to(op, maybe_convert(b, dt), x.shape));
  return maybe_convert(out, x.dtype);
}

Value layer_norm_body(const OpArgs& args) {
  const std::string op = "ltorch.layer_norm";
  const std::vector<int64_t>& ns = args.ints(1);
  const Proxy& x = check_layer_norm(op, args[0], ns, args[2], args[3]);
  const std::vector<int64_t> dims = normalized_dims(x, ns.size());
  Value xc = maybe_convert(args[0], compute_dtype(x.dtype));
  RowStats s = row_stats(xc, dims, numel(ns), args.number(4));
  return normalize(op, x, xc, unreduce(s.mean, x.shape, dims), unreduce(s.rstd, x.shape, dims),
                   args[2], args[3]);
}

// [mean, rstd] (layer_norm's grad rule splits the op into its statistics, a
// reduction, and layer_norm_from_stats, elementwise: the backward reads the
// statistics, and the min-cut may recompute the output from them instead of
// saving it).
Value layer_norm_stats_body(const OpArgs& args) {
  const std::string op = "ltorch.layer_norm_stats";
  const std::vector<int64_t>& ns = args.ints(1);
  const Proxy& x = check_layer_norm(op, args[0], ns, Value(), Value());
  RowStats s = row_stats(maybe_convert(args[0], compute_dtype(x.dtype)),
                         normalized_dims(x, ns.size()), numel(ns), args.number(2));
  const Shape stats = stat_shape(x.shape, ns.size());
  return Value(std::vector<Value>{prims::reshape(s.mean, stats), prims::reshape(s.rstd, stats)});
}

Value layer_norm_from_stats_body(const OpArgs& args) {
  const std::string op = "ltorch.layer_norm_from_stats";
  const std::vector<int64_t>& ns = args.ints(1);
  const Proxy& x = check_layer_norm(op, args[0], ns, args[4], args[5]);
  check_layer_norm_stats(op, x, ns, args[2], args[3]);
  return normalize(op, x, maybe_convert(args[0], compute_dtype(x.dtype)),
                   broadcast_to(op, args[2], x.shape), broadcast_to(op, args[3], x.shape), args[4],
                   args[5]);
}

// Normalizes over every dim but 1 (the channels) with the batch's mean and
// biased variance in training, the running statistics otherwise.
Value batch_norm_body(const OpArgs& args) {
  const std::string op = "ltorch.batch_norm";
  const Proxy& x = float_arg(op, args[0], "x");
  THUNDER_CHECK(x.ndim() >= 2, "{}: x must be [N, C, ...], got shape {}", op, shape_str(x.shape));
  const bool training = args.boolean(5);
  const double eps = args.number(6);
  const int64_t channels = x.shape[1];
  static const char* const names[] = {"x", "running_mean", "running_var", "w", "b"};
  for (int i = 1; i <= 4; ++i) {
    if (args[i].is_none()) continue;
    const Proxy& p = float_arg(op, args[i], names[i]);
    THUNDER_CHECK(p.shape == Shape{channels},
                  "{}: {} must have shape [{}] (the channels of x, shape {}), got {}", op, names[i],
                  channels, shape_str(x.shape), shape_str(p.shape));
  }
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < x.ndim(); ++d) dims.push_back(d);
  const int64_t per_channel = numel(x.shape) / std::max<int64_t>(channels, 1);
  DType dt = compute_dtype(x.dtype);
  Value xc = maybe_convert(args[0], dt);
  Value mean, var;
  if (training) {
    THUNDER_CHECK(per_channel > 1,
                  "{}: training needs more than 1 value per channel, got x of shape {}", op,
                  shape_str(x.shape));
    mean = prims::div(prims::sum(xc, dims), static_cast<double>(per_channel));
    var = prims::var(xc, dims, 0.0);
  } else {
    THUNDER_CHECK(!args[1].is_none() && !args[2].is_none(),
                  "{}: evaluation (training=False) needs running_mean and running_var", op);
    mean = maybe_convert(args[1], dt);
    var = maybe_convert(args[2], dt);
  }
  Value rstd = prims::rsqrt(prims::add(var, eps));
  Value out =
      prims::mul(prims::sub(xc, unreduce(mean, x.shape, dims)), unreduce(rstd, x.shape, dims));
  if (!args[3].is_none())
    out = prims::mul(out, prims::broadcast_in_dim(maybe_convert(args[3], dt), x.shape, {1}));
  if (!args[4].is_none())
    out = prims::add(out, prims::broadcast_in_dim(maybe_convert(args[4], dt), x.shape, {1}));
  return maybe_convert(out, x.dtype);
}

Value embedding_body(const OpArgs& args) {
  const std::string op = "ltorch.embedding";
  const Proxy& idx = tensor_arg(op, args[0], "indices");
  const Proxy& w = tensor_arg(op, args[1], "weight");
  THUNDER_CHECK(idx.dtype == DType::i64 || idx.dtype == DType::i32,
                "{}: indices must be int64 or int32, got {}", op, long_name(idx.dtype));
  THUNDER_CHECK(w.ndim() == 2, "{}: weight must be 2-D, got shape {}", op, shape_str(w.shape));
  return prims::embedding(args[0], args[1]);
}

// Mean of -log_softmax(logits)[target] over targets that are not torch's default
// ignore_index (-100).
Value cross_entropy_body(const OpArgs& args) {
  const std::string op = "ltorch.cross_entropy";
  const Proxy& logits = float_arg(op, args[0], "logits");
  const Proxy& targets = tensor_arg(op, args[1], "targets");
  THUNDER_CHECK(targets.dtype == DType::i64, "{}: targets must be int64 class indices, got {}", op,
                long_name(targets.dtype));
  THUNDER_CHECK(logits.ndim() == 1 || logits.ndim() == 2,
                "{}: logits must be [C] or [N, C], got shape {}", op, shape_str(logits.shape));
  Value x = args[0], t = args[1];
  if (logits.ndim() == 1) {
    THUNDER_CHECK(targets.ndim() == 0, "{}: logits of shape {} need a 0-d target, got shape {}", op,
                  shape_str(logits.shape), shape_str(targets.shape));
    x = prims::reshape(x, {1, logits.shape[0]});
    t = prims::reshape(t, {1});
  } else {
    THUNDER_CHECK(targets.shape == Shape{logits.shape[0]},
                  "{}: logits of shape {} need targets of shape [{}], got {}", op,
                  shape_str(logits.shape), logits.shape[0], shape_str(targets.shape));
  }
  return ltorch::nll_loss(ltorch::log_softmax(x, 1), t);
}

// Mean of -logp[i, target[i]] over targets that are not torch's default
// ignore_index (-100); logp is [N, C], targets [N] (cross_entropy's second half).
Value nll_loss_body(const OpArgs& args) {
  const std::string op = "ltorch.nll_loss";
  const Proxy& logp = float_arg(op, args[0], "log_probs");
  const Proxy& targets = tensor_arg(op, args[1], "targets");
  THUNDER_CHECK(
      logp.ndim() == 2 && targets.shape == Shape{logp.shape[0]} && targets.dtype == DType::i64,
      "{}: expected [N, C] log-probabilities and [N] int64 targets, got {} and {} {}", op,
      shape_str(logp.shape), long_name(targets.dtype), shape_str(targets.shape));
  const int64_t n = logp.shape[0];
  const Value &lp = args[0], &t = args[1];
  Value valid = prims::ne(t, int64_t{-100});
  Value safe = prims::where(valid, t, int64_t{0});
  Value picked = prims::reshape(prims::take_along_axis(lp, prims::reshape(safe, {n, 1}), 1), {n});
  picked = prims::where(valid, picked, 0.0);
  Value total = prims::sum(picked, {0});
  Value count = prims::sum(prims::convert_element_type(valid, logp.dtype), {0});
  return prims::neg(prims::div(total, count));
}

}  // namespace

void check_layer_norm_stats(const std::string& op, const Proxy& x, const std::vector<int64_t>& ns,
                            const Value& mean, const Value& rstd) {
  const DType ct = compute_dtype(x.dtype);
  const Shape stats = stat_shape(x.shape, ns.size());
  for (auto [v, name] : {std::pair{&mean, "mean"}, std::pair{&rstd, "rstd"}}) {
    const Proxy& p = tensor_arg(op, *v, name);
    THUNDER_CHECK(p.shape == stats && p.dtype == ct,
                  "{}: {} must be {} {} (one per normalised row), got {} {}", op, name,
                  long_name(ct), shape_str(stats), long_name(p.dtype), shape_str(p.shape));
  }
}

void register_nn() {
  const uint32_t kMatmul = tag_bits({OpTag::MATMUL_OP});
  define("ltorch.matmul", {"a", "b"}, kMatmul, matmul_body);
  define("ltorch.linear", {"x", "w", "bias"}, kMatmul, linear_body);
  define("ltorch.dropout", {"x", "p", "training"}, tag_bits({OpTag::RANDOM_OP}), dropout_body);
  define("ltorch.gelu", {"x", "approximate"}, 0, gelu_body);
  define("ltorch.softmax", {"a", "dim"}, 0, softmax_body);
  define("ltorch.log_softmax", {"a", "dim"}, 0, log_softmax_body);
  define("ltorch.layer_norm", {"x", "normalized_shape", "w", "b", "eps"}, 0, layer_norm_body);
  define("ltorch.layer_norm_stats", {"x", "normalized_shape", "eps"}, 0, layer_norm_stats_body);
  define("ltorch.layer_norm_from_stats", {"x", "normalized_shape", "mean", "rstd", "w", "b"}, 0,
         layer_norm_from_stats_body);
  define("ltorch.batch_norm", {"x", "running_mean", "running_var", "w", "b", "training", "eps"}, 0,
         batch_norm_body);
  define("ltorch.embedding", {"indices", "weight"}, 0, embedding_body);
  define("ltorch.cross_entropy", {"logits", "targets"}, 0, cross_entropy_body);
  define("ltorch.nll_loss", {"log_probs", "targets"}, 0, nll_loss_body);
}

}  // namespace detail

Value matmul(const Value& a, const Value& b) { THUNDER_LTORCH_CALL("ltorch.matmul", a, b); }
Value linear(const Value& x, const Value& w, const Value& bias) {
  THUNDER_LTORCH_CALL("ltorch.linear", x, w, bias);
}
Value dropout(const Value& x, double p, bool training) {
  THUNDER_LTORCH_CALL("ltorch.dropout", x, p, training);
}
Value gelu(const Value& x, const std::string& approximate) {
  THUNDER_LTORCH_CALL("ltorch.gelu", x, approximate);
}
Value softmax(const Value& x, int64_t dim) { THUNDER_LTORCH_CALL("ltorch.softmax", x, dim); }
Value log_softmax(const Value& x, int64_t dim) {
  THUNDER_LTORCH_CALL("ltorch.log_softmax", x, dim);
}
Value layer_norm(const Value& x, const std::vector<int64_t>& normalized_shape, const Value& w,
                 const Value& b, double eps) {
  THUNDER_LTORCH_CALL("ltorch.layer_norm", x, normalized_shape, w, b, eps);
}
Value layer_norm_stats(const Value& x, const std::vector<int64_t>& normalized_shape, double eps) {
  THUNDER_LTORCH_CALL("ltorch.layer_norm_stats", x, normalized_shape, eps);
}
Value layer_norm_from_stats(const Value& x, const std::vector<int64_t>& normalized_shape,
                            const Value& mean, const Value& rstd, const Value& w, const Value& b) {
  THUNDER_LTORCH_CALL("ltorch.layer_norm_from_stats", x, normalized_shape, mean, rstd, w, b);
}
Value batch_norm(const Value& x, const Value& running_mean, const Value& running_var,
                 const Value& w, const Value& b, bool training, double eps) {
  THUNDER_LTORCH_CALL("ltorch.batch_norm", x, running_mean, running_var, w, b, training, eps);
}
Value embedding(const Value& indices, const Value& weight) {
  THUNDER_LTORCH_CALL("ltorch.embedding", indices, weight);
}
Value cross_entropy(const Value& logits, const Value& targets) {
  THUNDER_LTORCH_CALL("ltorch.cross_entropy", logits, targets);
}
Value nll_loss(const Value& log_probs, const Value& targets) {
  THUNDER_LTORCH_CALL("ltorch.nll_loss", log_probs, targets);
}

}  // namespace thunder::ltorch
