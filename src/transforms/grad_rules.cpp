// Built-in grad rules, one per line where possible: each computes the forward
// with prims and states the input cotangents with get_grad/put_grad.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include "grad_rule_registry.h"
#include "thunder/core/error.h"
#include "thunder/prims/prims.h"
#include "thunder/transforms/autodiff.h"

namespace thunder {

namespace {

// The gradient of broadcast_in_dim: sum over the broadcast dims, then reshape.
Value unbroadcast(const Value& g, const Shape& in_shape, const std::vector<int64_t>& dims) {
  const Shape& out_shape = P(g).shape;
  std::vector<int64_t> reduce;
  for (int64_t d = 0; d < static_cast<int64_t>(out_shape.size()); ++d) {
    auto it = std::find(dims.begin(), dims.end(), d);
    if (it == dims.end() || (in_shape[it - dims.begin()] == 1 && out_shape[d] != 1))
      reduce.push_back(d);
  }
  Value r = reduce.empty() ? g : prims::sum(g, reduce);
  return P(r).shape == in_shape ? r : prims::reshape(r, in_shape);
}

std::vector<int64_t> iota_dims(int64_t n) {
  std::vector<int64_t> d(n);
  for (int64_t i = 0; i < n; ++i) d[i] = i;
  return d;
}

// The dims of a rank-n tensor that survive reducing `dims`.
std::vector<int64_t> kept_dims(int64_t n, const std::vector<int64_t>& dims) {
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < n; ++i)
    if (std::find(dims.begin(), dims.end(), i) == dims.end()) kept.push_back(i);
  return kept;
}

// A reduction's result broadcast back to the input shape.
Value restore(const Value& r, const Shape& in_shape, const std::vector<int64_t>& dims) {
  if (dims.empty()) return r;
  return prims::broadcast_in_dim(r, in_shape,
                                 kept_dims(static_cast<int64_t>(in_shape.size()), dims));
}

Value zeros_like(const Proxy& p) { return prims::full(p.shape, 0.0, p.device, p.dtype); }

// g (shape `inner`) placed at the start of a zeros tensor of shape `outer`.
Value pad_to(const Value& g, const Shape& outer) {
  const Shape& inner = P(g).shape;
  if (inner == outer) return g;
  std::vector<int64_t> cfg;
  for (size_t d = 0; d < inner.size(); ++d) cfg.insert(cfg.end(), {0, outer[d] - inner[d], 0});
  return prims::pad(g, 0.0, cfg);
}

// Swaps the last two dims.
Value mT(const Value& a) {
  auto perm = iota_dims(P(a).ndim());
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return prims::transpose(a, perm);
}

Value as_i64(const Value& index) {
  return P(index).dtype == DType::i64 ? index : prims::convert_element_type(index, DType::i64);
}

// The input cotangent of a unary elementwise prim from (a, out, g).
using UnaryGrad = Value (*)(const Value& a, const Value& out, const Value& go);

void rule(const char* id, GradRule r) { set_grad_rule(id, std::move(r)); }

}  // namespace

void register_builtin_grad_rules() {
  rule("prims.add", [](VjpContext& g, const OpArgs& a) {
    Value out = prims::add(a[0], a[1]);
    Value go = g.get_grad(out);
    g.put_grad(a[0], go);
    g.put_grad(a[1], go);
    return out;
  });
  rule("prims.sub", [](VjpContext& g, const OpArgs& a) {
    Value out = prims::sub(a[0], a[1]);
    Value go = g.get_grad(out);
    g.put_grad(a[0], go);
    if (g.requires_grad(a[1])) g.put_grad(a[1], prims::neg(go));
    return out;
  });
  rule("prims.mul", [](VjpContext& g, const OpArgs& a) {
    Value out = prims::mul(a[0], a[1]);
    Value go = g.get_grad(out);
    if (g.requires_grad(a[0])) g.put_grad(a[0], prims::mul(go, a[1]));
    if (g.requires_grad(a[1])) g.put_grad(a[1], prims::mul(go, a[0]));
    return out;
  });
  rule("prims.neg", [](VjpContext& g, const OpArgs& a) {
    Value out = prims::neg(a[0]);
    g.put_grad(a[0], prims::neg(g.get_grad(out)));
    return out;
  });
  rule("prims.broadcast_in_dim", [](VjpContext& g, const OpArgs& a) {
    Value out = prims::broadcast_in_dim(a[0], a.ints(1), a.ints(2));
    if (g.requires_grad(a[0]))
      g.put_grad(a[0], unbroadcast(g.get_grad(out), P(a[0]).shape, a.ints(2)));
    return out;
  });

  // ---- elementwise unary: put_grad(a, f(a, out, g)) ----
  auto unary = [](const char* id, Value (*prim)(const Value&), UnaryGrad grad) {
    rule(id, [prim, grad](VjpContext& g, const OpArgs& a) {
      Value out = prim(a[0]);
      if (g.requires_grad(a[0])) g.put_grad(a[0], grad(a[0], out, g.get_grad(out)));
      return out;
    });
  };
  unary("prims.exp", prims::exp,
        [](const Value&, const Value& out, const Value& go) { return prims::mul(go, out); });
  unary("prims.log", prims::log,
        [](const Value& a, const Value&, const Value& go) { return prims::div(go, a); });
  unary("prims.log1p", prims::log1p, [](const Value& a, const Value&, const Value& go) {
    return prims::div(go, prims::add(a, 1.0));
  });
  unary("prims.sqrt", prims::sqrt, [](const Value&, const Value& out, const Value& go) {
    return prims::div(go, prims::mul(out, 2.0));
  });
  unary("prims.rsqrt", prims::rsqrt, [](const Value&, const Value& out, const Value& go) {
    return prims::mul(prims::mul(go, -0.5), prims::mul(prims::mul(out, out), out));
  });
  unary("prims.sin", prims::sin, [](const Value& a, const Value&, const Value& go) {
    return prims::mul(go, prims::cos(a));
  });
  unary("prims.cos", prims::cos, [](const Value& a, const Value&, const Value& go) {
    return prims::mul(go, prims::neg(prims::sin(a)));
  });
  unary("prims.tanh", prims::tanh, [](const Value&, const Value& out, const Value& go) {
    return prims::mul(go, prims::sub(1.0, prims::mul(out, out)));
  });
  unary("prims.erf", prims::erf, [](const Value& a, const Value&, const Value& go) {
    const double two_over_sqrt_pi = 1.1283791670955126;  // 2 / sqrt(pi)
    return prims::mul(go, prims::mul(prims::exp(prims::neg(prims::mul(a, a))), two_over_sqrt_pi));
  });
  unary("prims.reciprocal", prims::reciprocal, [](const Value&, const Value& out, const Value& go) {
    return prims::mul(prims::neg(go), prims::mul(out, out));
  });
  unary("prims.sigmoid", prims::sigmoid, [](const Value&, const Value& out, const Value& go) {
    return prims::mul(go, prims::mul(out, prims::sub(1.0, out)));
  });
  unary("prims.abs", prims::abs, [](const Value& a, const Value&, const Value& go) {
    // sign(a) * g, with sign(0) = 0
    return prims::where(prims::gt(a, 0.0), go,
                        prims::where(prims::lt(a, 0.0), prims::neg(go), 0.0));
  });

  // ---- elementwise binary (either operand may be a number) ----
  rule("prims.div", [](VjpContext& g, const OpArgs& a) {
    Value out = prims::div(a[0], a[1]);
    Value go = g.get_grad(out);
    if (g.requires_grad(a[0])) g.put_grad(a[0], prims::div(go, a[1]));
    if (g.requires_grad(a[1])) g.put_grad(a[1], prims::mul(prims::neg(go), prims::div(out, a[1])));
    return out;
  });
  rule("prims.pow", [](VjpContext& g, const OpArgs& a) {
    Value out = prims::pow(a[0], a[1]);
    Value go = g.get_grad(out);
    if (g.requires_grad(a[0])) {  // b * a^(b-1), 0 where b == 0 (as torch)
      if (a[1].is_number()) {
        double b = a.number(1);
        g.put_grad(a[0], b == 0 ? zeros_like(P(a[0]))
                                : prims::mul(go, prims::mul(prims::pow(a[0], b - 1.0), b)));
      } else {
        Value d = prims::mul(a[1], prims::pow(a[0], prims::sub(a[1], 1.0)));
        g.put_grad(a[0], prims::where(prims::eq(a[1], 0.0), 0.0, prims::mul(go, d)));
      }
    }
    if (g.requires_grad(a[1])) {  // out * log(a), 0 where a == 0 and b >= 0 (as torch)
      if (a[0].is_number()) {
        double base = a.number(0);
        if (base == 0) {
          Value d = prims::mul(out, -std::numeric_limits<double>::infinity());
          g.put_grad(a[1], prims::mul(go, prims::where(prims::ge(a[1], 0.0), 0.0, d)));
        } else {
          g.put_grad(a[1], prims::mul(go, prims::mul(out, std::log(base))));
        }
      } else {
        Value zero_base = prims::logical_and(prims::eq(a[0], 0.0), prims::ge(a[1], 0.0));
        Value d = prims::where(zero_base, 0.0, prims::mul(out, prims::log(a[0])));
        g.put_grad(a[1], prims::mul(go, d));
      }
    }
    return out;
  });
  // Ties split the gradient evenly between the operands (as torch.maximum/minimum).
  for (const char* id : {"prims.maximum", "prims.minimum"}) {
    bool is_max = std::string_view(id) == "prims.maximum";
    rule(id, [is_max](VjpContext& g, const OpArgs& a) {
      Value out = is_max ? prims::maximum(a[0], a[1]) : prims::minimum(a[0], a[1]);
      Value go = g.get_grad(out);
      for (int i : {0, 1}) {
        if (!g.requires_grad(a[i])) continue;
        const Value& x = a[i];
        const Value& y = a[1 - i];
        Value wins = is_max ? prims::gt(x, y) : prims::lt(x, y);
        Value tie = prims::where(prims::eq(x, y), prims::mul(go, 0.5), 0.0);
        g.put_grad(x, prims::where(wins, go, tie));
      }
      return out;
    });
  }
  rule("prims.where", [](VjpContext& g, const OpArgs& a) {
    Value out = prims::where(a[0], a[1], a[2]);
    Value go = g.get_grad(out);
    if (g.requires_grad(a[1])) g.put_grad(a[1], prims::where(a[0], go, 0.0));
    if (g.requires_grad(a[2])) g.put_grad(a[2], prims::where(a[0], 0.0, go));
    return out;
  });
  rule("prims.convert_element_type", [](VjpContext& g, const OpArgs& a) {
    Value out = prims::convert_element_type(a[0], a.dtype(1));
    if (g.requires_grad(a[0])) {
      Value go = g.get_grad(out);
      DType in = P(a[0]).dtype;
      g.put_grad(a[0], P(go).dtype == in ? go : prims::convert_element_type(go, in));
    }
    return out;
  });

  // ---- shape ----
  rule("prims.reshape", [](VjpContext& g, const OpArgs& a) {
    Value out = prims::reshape(a[0], a.ints(1));
    if (g.requires_grad(a[0])) g.put_grad(a[0], prims::reshape(g.get_grad(out), P(a[0]).shape));
    return out;
  });
  rule("prims.squeeze", [](VjpContext& g, const OpArgs& a) {
    Value out = prims::squeeze(a[0], a.ints(1));
    if (g.requires_grad(a[0])) g.put_grad(a[0], prims::reshape(g.get_grad(out), P(a[0]).shape));
    return out;
  });
  rule("prims.transpose", [](VjpContext& g, const OpArgs& a) {
    const auto& perm = a.ints(1);
    Value out = prims::transpose(a[0], perm);
    if (g.requires_grad(a[0])) {
      std::vector<int64_t> inv(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
      g.put_grad(a[0], prims::transpose(g.get_grad(out), inv));
    }
    return out;
  });
  rule("prims.slice", [](VjpContext& g, const OpArgs& a) {
    const auto &start = a.ints(1), &end = a.ints(2), &strides = a.ints(3);
    Value out = prims::slice(a[0], start, end, strides);
    if (g.requires_grad(a[0])) {
      // Scatter the slice back with zero padding: lo = start, interior = stride - 1.
      const Shape& in = P(a[0]).shape;
      const Shape& os = P(out).shape;
      std::vector<int64_t> cfg;
      for (size_t d = 0; d < in.size(); ++d) {
        if (os[d] == 0) {
          cfg.insert(cfg.end(), {0, in[d], 0});
          continue;
        }
        int64_t last = start[d] + (os[d] - 1) * strides[d];
        cfg.insert(cfg.end(), {start[d], in[d] - last - 1, strides[d] - 1});
      }
      g.put_grad(a[0], prims::pad(g.get_grad(out), 0.0, cfg));
    }
    return out;
  });
  rule("prims.pad", [](VjpContext& g, const OpArgs& a) {
    const auto& cfg = a.ints(2);
    Value out = prims::pad(a[0], a[1], cfg);
    if (g.requires_grad(a[0])) {
      Value go = g.get_grad(out);
      const Shape& in = P(a[0]).shape;
      // Negative lo/hi cut elements off: pad the cotangent back with zeros first.
      std::vector<int64_t> undo;
      bool any_negative = false;
      for (size_t d = 0; d < in.size(); ++d) {
        int64_t lo = std::max<int64_t>(-cfg[3 * d], 0), hi = std::max<int64_t>(-cfg[3 * d + 1], 0);
        any_negative = any_negative || lo > 0 || hi > 0;
        undo.insert(undo.end(), {lo, hi, 0});
      }
      if (any_negative) go = prims::pad(go, 0.0, undo);
      // Then take every (interior + 1)-th element from max(lo, 0).
      std::vector<int64_t> start, end, strides;
      for (size_t d = 0; d < in.size(); ++d) {
        int64_t lo = std::max<int64_t>(cfg[3 * d], 0), step = cfg[3 * d + 2] + 1;
        start.push_back(lo);
        end.push_back(in[d] == 0 ? lo : lo + (in[d] - 1) * step + 1);
        strides.push_back(step);
      }
      bool identity = P(go).shape == in;
      for (int64_t s : strides) identity = identity && s == 1;
      for (int64_t s : start) identity = identity && s == 0;
      g.put_grad(a[0], identity ? go : prims::slice(go, start, end, strides));
    }
    return out;
  });
  rule("prims.cat", [](VjpContext& g, const OpArgs& a) {
    const auto& ts = a.list(0);
    int64_t dim = a.integer(1);
    Value out = prims::cat(ts, dim);
    const Shape& os = P(out).shape;
    Value go = g.get_grad(out);
    int64_t offset = 0;
    for (const Value& t : ts) {
      int64_t n = P(t).shape[dim];
      if (g.requires_grad(t)) {
        std::vector<int64_t> start(os.size(), 0), end(os.begin(), os.end()), strides(os.size(), 1);
        start[dim] = offset;
        end[dim] = offset + n;
        g.put_grad(t, ts.size() == 1 ? go : prims::slice(go, start, end, strides));
      }
      offset += n;
    }
    return out;
  });

  // ---- reductions ----
  rule("prims.sum", [](VjpContext& g, const OpArgs& a) {
    Value out = prims::sum(a[0], a.ints(1));
    if (g.requires_grad(a[0])) g.put_grad(a[0], restore(g.get_grad(out), P(a[0]).shape, a.ints(1)));
    return out;
  });
  // Ties share the gradient evenly (as torch.amax/amin).
  for (const char* id : {"prims.amax", "prims.amin"}) {
    bool is_max = std::string_view(id) == "prims.amax";
    rule(id, [is_max](VjpContext& g, const OpArgs& a) {
      const auto& dims = a.ints(1);
      Value out = is_max ? prims::amax(a[0], dims) : prims::amin(a[0], dims);
      if (g.requires_grad(a[0])) {
        const Proxy& x = P(a[0]);
        Value mask =
            prims::convert_element_type(prims::eq(a[0], restore(out, x.shape, dims)), x.dtype);
        Value count = dims.empty() ? mask : prims::sum(mask, dims);
        Value go = prims::div(g.get_grad(out), count);
        g.put_grad(a[0], prims::mul(restore(go, x.shape, dims), mask));
      }
      return out;
    });
  }
  rule("prims.var", [](VjpContext& g, const OpArgs& a) {
    const auto& dims = a.ints(1);
    double correction = a.number(2);
    Value out = prims::var(a[0], dims, correction);
    if (g.requires_grad(a[0])) {
      const Proxy& x = P(a[0]);
      int64_t n = 1;
      for (int64_t d : dims) n *= x.shape[d];
      Value sum = dims.empty() ? a[0] : prims::sum(a[0], dims);
      Value centered =
          prims::sub(a[0], restore(prims::div(sum, static_cast<double>(n)), x.shape, dims));
      Value go = prims::mul(restore(g.get_grad(out), x.shape, dims), 2.0 / (n - correction));
      g.put_grad(a[0], prims::mul(go, centered));
    }
    return out;
  });

  // ---- linear algebra and nn ----
  rule("prims.matmul", [](VjpContext& g, const OpArgs& a) {
    Value out = prims::matmul(a[0], a[1]);
    Value go = g.get_grad(out);
    const Proxy &x = P(a[0]), &y = P(a[1]);
    int64_t nx = x.ndim(), ny = y.ndim();
    if (nx == 1 && ny == 1) {  // dot: go is 0-d
      if (g.requires_grad(a[0]))
        g.put_grad(a[0], prims::mul(prims::broadcast_in_dim(go, x.shape, {}), a[1]));
      if (g.requires_grad(a[1]))
        g.put_grad(a[1], prims::mul(prims::broadcast_in_dim(go, y.shape, {}), a[0]));
    } else if (ny == 1) {  // [..., m, k] @ [k] -> [..., m]
      if (g.requires_grad(a[0])) {
        Value gb = prims::broadcast_in_dim(go, x.shape, iota_dims(nx - 1));
        g.put_grad(a[0], prims::mul(gb, prims::broadcast_in_dim(a[1], x.shape, {nx - 1})));
      }
      if (g.requires_grad(a[1])) {
        int64_t rows = x.numel() / x.shape.back();
        Value x2 = nx == 2 ? a[0] : prims::reshape(a[0], {rows, x.shape.back()});
        Value g1 = nx == 2 ? go : prims::reshape(go, {rows});
        g.put_grad(a[1], prims::matmul(g1, x2));
      }
    } else if (nx == 1) {  // [k] @ [..., k, n] -> [..., n]
      if (g.requires_grad(a[0])) {
        if (ny == 2) {
          g.put_grad(a[0], prims::matmul(a[1], go));
        } else {
          int64_t k = y.shape[ny - 2], rows = y.numel() / k;
          Value yt = prims::reshape(mT(a[1]), {rows, k});
          g.put_grad(a[0], prims::matmul(prims::reshape(go, {rows}), yt));
        }
      }
      if (g.requires_grad(a[1])) {
        std::vector<int64_t> gdims = iota_dims(ny - 2);
        gdims.push_back(ny - 1);
        Value gb = prims::broadcast_in_dim(go, y.shape, gdims);
        g.put_grad(a[1], prims::mul(gb, prims::broadcast_in_dim(a[0], y.shape, {ny - 2})));
      }
    } else {  // equal batch dims
      if (g.requires_grad(a[0])) g.put_grad(a[0], prims::matmul(go, mT(a[1])));
      if (g.requires_grad(a[1])) g.put_grad(a[1], prims::matmul(mT(a[0]), go));
    }
    return out;
  });
  rule("prims.linear", [](VjpContext& g, const OpArgs& a) {
    Value out = prims::linear(a[0], a[1], a[2]);
    Value go = g.get_grad(out);
    const Proxy &x = P(a[0]), &w = P(a[1]);
    int64_t in = w.shape[1], outf = w.shape[0], rows = x.numel() / in;
    Value g2 = P(go).ndim() == 2 ? go : prims::reshape(go, {rows, outf});
    if (g.requires_grad(a[0])) {
      Value gx = P(go).ndim() <= 2 ? prims::matmul(go, a[1]) : prims::matmul(g2, a[1]);
      g.put_grad(a[0], P(gx).shape == x.shape ? gx : prims::reshape(gx, x.shape));
    }
    if (g.requires_grad(a[1])) {
      Value x2 = x.ndim() == 2 ? a[0] : prims::reshape(a[0], {rows, in});
      g.put_grad(a[1], prims::matmul(prims::transpose(g2, {1, 0}), x2));
    }
    if (g.requires_grad(a[2]))
      g.put_grad(a[2], P(go).ndim() == 1 ? go : prims::sum(go, iota_dims(P(go).ndim() - 1)));
    return out;
  });
  rule("prims.embedding", [](VjpContext& g, const OpArgs& a) {
    Value out = prims::embedding(a[0], a[1]);
    if (g.requires_grad(a[1])) {
      // Adds the cotangent rows into a zeros weight at the indices.
      const Proxy& w = P(a[1]);
      int64_t n = P(a[0]).numel(), d = w.shape[1];
      Value idx = prims::broadcast_in_dim(prims::reshape(as_i64(a[0]), {n}), {n, d}, {0});
      Value g2 = prims::reshape(g.get_grad(out), {n, d});
      g.put_grad(a[1], prims::scatter_add(zeros_like(w), 0, idx, g2));
    }
    return out;
  });

  // ---- indexing ----
  rule("prims.take_along_axis", [](VjpContext& g, const OpArgs& a) {
    int64_t dim = a.integer(2);
    Value out = prims::take_along_axis(a[0], a[1], dim);
    if (g.requires_grad(a[0]))
      g.put_grad(a[0], prims::scatter_add(zeros_like(P(a[0])), dim, a[1], g.get_grad(out)));
    return out;
  });
  rule("prims.index_select", [](VjpContext& g, const OpArgs& a) {
    int64_t dim = a.integer(1);
    Value out = prims::index_select(a[0], dim, a[2]);
    if (g.requires_grad(a[0])) {
      Value go = g.get_grad(out);
      const Proxy& x = P(a[0]);
      if (x.ndim() == 0) {
        g.put_grad(a[0], go);
      } else {
        const Shape& os = P(out).shape;
        Value idx = prims::reshape(as_i64(a[2]), {os[dim]});
        idx = prims::broadcast_in_dim(idx, os, {dim});
        g.put_grad(a[0], prims::scatter_add(zeros_like(x), dim, idx, go));
      }
    }
    return out;
  });
  rule("prims.scatter_add", [](VjpContext& g, const OpArgs& a) {
    int64_t dim = a.integer(1);
    Value out = prims::scatter_add(a[0], dim, a[2], a[3]);
    Value go = g.get_grad(out);
    g.put_grad(a[0], go);
    if (g.requires_grad(a[3]))
      g.put_grad(a[3], pad_to(prims::take_along_axis(go, a[2], dim), P(a[3]).shape));
    return out;
  });
  rule("prims.scatter", [](VjpContext& g, const OpArgs& a) {
    int64_t dim = a.integer(1);
    Value out = prims::scatter(a[0], dim, a[2], a[3]);
    Value go = g.get_grad(out);
    if (g.requires_grad(a[0])) {  // overwritten positions get no gradient
      const Proxy& idx = P(a[2]);
      Value zeros = prims::full(idx.shape, 0.0, idx.device, P(a[0]).dtype);
      g.put_grad(a[0], prims::scatter(go, dim, a[2], zeros));
    }
    if (g.requires_grad(a[3]))
      g.put_grad(a[3], pad_to(prims::take_along_axis(go, a[2], dim), P(a[3]).shape));
    return out;
  });

  // ---- ltorch composites whose torch gradient differs from their decomposition's at ties ----
  // relu: no gradient at 0 (maximum(a, 0) would give half).
  rule("ltorch.relu", [](VjpContext& g, const OpArgs& a) {
    Value out = a.symbol().body(a);
    if (g.requires_grad(a[0]))
      g.put_grad(a[0], prims::where(prims::gt(out, 0.0), g.get_grad(out), 0.0));
    return out;
  });
  // clamp: the full gradient where min <= a <= max.
  rule("ltorch.clamp", [](VjpContext& g, const OpArgs& a) {
    Value out = a.symbol().body(a);
    if (g.requires_grad(a[0]) && P(out).dtype == P(a[0]).dtype) {
      Value inside;
      if (!a[1].is_none()) inside = prims::ge(a[0], a[1]);
      if (!a[2].is_none()) {
        Value le = prims::le(a[0], a[2]);
        inside = inside.is_none() ? le : prims::logical_and(inside, le);
      }
      g.put_grad(a[0], prims::where(inside, g.get_grad(out), 0.0));
    }
    return out;
  });
  // max(a, dim): the gradient goes to the selected index only.
  rule("ltorch.max", [](VjpContext& g, const OpArgs& a) {
    Value out = a.symbol().body(a);
    if (g.requires_grad(a[0])) {
      const Proxy& x = P(a[0]);
      const auto& vi = out.as_list();
      Value go = g.get_grad(vi[0]);
      if (x.ndim() == 0) {
        g.put_grad(a[0], go);
      } else {
        int64_t dim = a.integer(1);
        dim = dim < 0 ? dim + x.ndim() : dim;
        Shape keep = x.shape;
        keep[dim] = 1;
        Value idx = P(vi[1]).shape == keep ? vi[1] : prims::reshape(vi[1], keep);
        Value gk = P(go).shape == keep ? go : prims::reshape(go, keep);
        g.put_grad(a[0], prims::scatter(zeros_like(x), dim, idx, gk));
      }
    }
    return out;
  });
}

}  // namespace thunder
