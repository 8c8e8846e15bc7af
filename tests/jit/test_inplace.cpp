// In-place ops under jit against eager libtorch: values, effects on the
// caller's tensors (arguments, parameters, aliased arguments) and gradients.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/thunder.h>

#include "router_program.h"

namespace thunder {
namespace {

namespace F = nn::functional;
using test::router;

void expect_same(const at::Tensor& a, const at::Tensor& b, const std::string& what) {
  ASSERT_EQ(a.sizes(), b.sizes()) << what;
  ASSERT_EQ(a.scalar_type(), b.scalar_type()) << what;
  EXPECT_TRUE(at::allclose(a, b, 1e-6, 1e-6)) << what << "\njit:\n" << a << "\neager:\n" << b;
}

// Runs fn eagerly and jitted (twice: compile, then cache hit) on fresh copies
// of `inputs`; the results and the inputs afterwards must match eager's.
template <typename Fn>
void expect_like_eager(Fn fn, const std::vector<at::Tensor>& inputs, JitOptions options = {}) {
  auto copies = [&] {
    std::vector<at::Tensor> c;
    for (const at::Tensor& t : inputs) c.push_back(t.clone());
    return c;
  };
  std::vector<at::Tensor> e = copies();
  at::Tensor expected = fn(Tensor(e[0]), Tensor(e[1])).aten();
  auto jfn = jit(fn, options);
  for (int call = 0; call < 2; ++call) {
    std::vector<at::Tensor> j = copies();
    at::Tensor got = jfn(j[0], j[1]).aten();
    expect_same(got, expected, "result, call " + std::to_string(call));
    for (size_t i = 0; i < j.size(); ++i)
      expect_same(j[i], e[i], "input " + std::to_string(i) + ", call " + std::to_string(call));
  }
  EXPECT_EQ(cache_hits(jfn), 1);
}

bool has_symbol(const Trace& t, const std::string& id) {
  for (const BoundSymbol& b : t.bound_symbols())
    if (b.sym->id == id) return true;
  return false;
}

TEST(InPlace, EachOpOnContiguousInputs) {
  at::Tensor x = at::randn({3, 4}), y = at::randn({3, 4});
  expect_like_eager(
      [](Tensor a, Tensor b) {
        a.add_(b, 2.0);
        return a * 2.0;
      },
      {x, y});
  expect_like_eager(
      [](Tensor a, Tensor b) {
        a.add_(1.5);
        return b + a;
      },
      {x, y});
  expect_like_eager(
      [](Tensor a, Tensor b) {
        a.mul_(b);
        return a;
      },
      {x, y});
  expect_like_eager(
      [](Tensor a, Tensor b) {
        a.mul_(3.0);
        return b - a;
      },
      {x, y});
  expect_like_eager(
      [](Tensor a, Tensor b) {
        a.copy_(b * 2.0);
        return a + 1.0;
      },
      {x, y});
  expect_like_eager(
      [](Tensor a, Tensor b) {
        a.fill_(7.0);
        return a + b;
      },
      {x, y});
  expect_like_eager(
      [](Tensor a, Tensor b) {
        a.zero_();
        return a + b;
      },
      {x, y});
  expect_like_eager(
      [](Tensor a, Tensor b) {
        a.masked_fill_(b > 0.0, -1.0);
        return a;
      },
      {x, y});
  at::Tensor idx = at::randint(0, 4, {3, 4});
  expect_like_eager(
      [](Tensor a, Tensor i) {
        a.scatter_add_(1, i, a * 2.0);
        return a.sum();
      },
      {x, idx});
}

TEST(InPlace, BroadcastAndCastFollowLibtorch) {
  at::Tensor x = at::randn({2, 3}), row = at::randn({3});
  expect_like_eager(
      [](Tensor a, Tensor r) {
        a.add_(r);
        return a;
      },
      {x, row});
  expect_like_eager(
      [](Tensor a, Tensor r) {
        a.copy_(r);
        return a;
      },
      {x, row});
  at::Tensor ints = at::arange(6, at::kLong).reshape({2, 3});
  expect_like_eager(
      [](Tensor a, Tensor f) {
        a.copy_(f);
        return a;
      },
      {ints, x});  // truncates
  expect_like_eager(
      [](Tensor a, Tensor f) {
        f.mul_(a);
        return f;
      },
      {ints, x});  // int -> float
}

TEST(InPlace, UniformDrawsLikeEager) {
  at::Tensor x = at::zeros({5, 3});
  auto fn = [](Tensor a, Tensor b) {
    a.uniform_(-2.0, 3.0);
    return a + b;
  };
  at::Tensor e = x.clone();
  at::manual_seed(7);
  at::Tensor expected = fn(Tensor(e), Tensor(x)).aten();
  // libtorch's generator (disable_replace_uniform): the very values eager draws.
  auto jfn = jit(fn, {.disable_replace_uniform = true});
  at::Tensor j = x.clone();
  at::manual_seed(7);
  expect_same(jfn(j, x).aten(), expected, "result");
  expect_same(j, e, "input");
  // Stateless Philox draws (the default): written back, in range, reproducible.
  auto jphilox = jit(fn);
  at::Tensor p1 = x.clone(), p2 = x.clone();
  at::manual_seed(7);
  at::Tensor r1 = jphilox(p1, x).aten();
  at::manual_seed(7);
  jphilox(p2, x);
  EXPECT_TRUE(at::equal(p1, p2));
  EXPECT_TRUE(at::equal(r1, p1 + x));
  EXPECT_TRUE((p1 >= -2.0).all().item<bool>() && (p1 < 3.0).all().item<bool>());
  EXPECT_FALSE(at::equal(p1, x));
}

TEST(InPlace, ThroughViews) {
  at::Tensor x = at::randn({4, 3}), y = at::randn({2, 3});
  // Writes through views land in the base; other views see them.
  expect_like_eager(
      [](Tensor a, Tensor b) {
        a.narrow(0, 1, 2).add_(b);
        return a * 1.0;
      },
      {x, y});
  expect_like_eager(
      [](Tensor a, Tensor b) {
        Tensor row = a.select(0, 2);
        Tensor col = a.select(1, 0);
        row.mul_(b.select(0, 0));
        return col + 0.0;  // read through another view after the write
      },
      {x, y});
  expect_like_eager(
      [](Tensor a, Tensor b) {
        Tensor t = a.transpose(0, 1);  // [3, 4]
        t.narrow(1, 0, 2).copy_(b.transpose(0, 1));
        return t + 0.0;
      },
      {x, y});
  expect_like_eager(
      [](Tensor a, Tensor b) {
        Tensor flat = a.view({12});
        Tensor e = a.unsqueeze(0).expand({2, 4, 3});  // a read-only view, read after the write
        flat.narrow(0, 3, 6).zero_();
        return e.sum(0) + b.sum();
      },
      {x, y});
  expect_like_eager(
      [](Tensor a, Tensor b) {
        a.reshape({2, 6}).select(1, -1).fill_(5.0);
        a.permute({1, 0}).narrow(0, 1, 1).masked_fill_(
            b.narrow(0, 0, 1).narrow(1, 0, 1).transpose(0, 1) > 0.0, 2.0);
        return a;
      },
      {x, y});
}

TEST(InPlace, ThroughSplitAndChunkPieces) {
  at::Tensor x = at::randn({4, 3}), y = at::randn({4, 3});
  expect_like_eager(
      [](Tensor a, Tensor b) {
        TensorList halves = a.chunk(2, 0);
        TensorList cols = a.split(std::vector<int64_t>{1, 2}, 1);
        halves[1].mul_(b.narrow(0, 2, 2));
        return cols[1] + 0.0;  // a piece read after a write through another piece
      },
      {x, y});
}

TEST(InPlace, CapturedBufferUpdate) {
  at::Tensor running_e = at::zeros({3}), running_j = at::zeros({3});
  auto make = [](at::Tensor& running) {
    return [&running](Tensor x) {
      Tensor r(running);
      r.mul_(0.9).add_(x.mean({0}) * 0.1);
      return x - r;
    };
  };
  auto eager = make(running_e);
  auto jfn = jit(make(running_j));
  for (int call = 0; call < 3; ++call) {
    at::Tensor x = at::randn({5, 3});
    expect_same(jfn(x).aten(), eager(x).aten(), "result");
    expect_same(running_j, running_e, "captured buffer");
  }
  EXPECT_EQ(cache_misses(jfn), 1);
}

TEST(InPlace, ChainsAndUsesOfTheInput) {
  at::Tensor x = at::randn({3, 4}), y = at::randn({3, 4});
  expect_like_eager(
      [](Tensor a, Tensor b) {
        Tensor before = a * 1.0;
        a.add_(1.0).mul_(b).add_(b, -0.5);
        a.masked_fill_(a > 0.5, 0.0);
        return before + a;  // the old value and the new one
      },
      {x, y});
  // The function returns the input it wrote.
  expect_like_eager([](Tensor a, Tensor b) { return a.mul_(2.0); }, {x, y});
  // Writes into both inputs; one input's new value is the other's old value.
  expect_like_eager(
      [](Tensor a, Tensor b) {
        a.copy_(b);
        b.add_(1.0);
        return a - b;
      },
      {x, y});
  expect_like_eager(
      [](Tensor a, Tensor b) {
        Tensor old_a = a * 1.0;
        a.copy_(b);
        b.copy_(old_a);  // swap
        return a + 0.0;
      },
      {x, y});
}

TEST(InPlace, InputsAliasedAtRunTime) {
  auto fn = [](Tensor a, Tensor b) {
    a.mul_(2.0);
    b.add_(1.0);
    return a + b;
  };
  auto jfn = jit(fn, {.arg_names = {"a", "b"}});
  // The same tensor passed twice.
  at::Tensor e = at::randn({2, 3}), j = e.clone();
  at::Tensor expected = fn(Tensor(e), Tensor(e)).aten();
  expect_same(jfn(j, j).aten(), expected, "same tensor twice");
  expect_same(j, e, "the shared input");
  EXPECT_TRUE(has_symbol(last_traces(jfn).back(), "prims.update_aliases"));
  EXPECT_NE(last_prologue_trace(jfn).str().find("check_aliases"), std::string::npos);
  // Two overlapping views of one buffer.
  at::Tensor base_e = at::randn({4, 3}), base_j = base_e.clone();
  expected = fn(Tensor(base_e.narrow(0, 0, 2)), Tensor(base_e.narrow(0, 1, 2))).aten();
  expect_same(jfn(base_j.narrow(0, 0, 2), base_j.narrow(0, 1, 2)).aten(), expected, "views");
  expect_same(base_j, base_e, "the shared buffer");
  // Distinct tensors with the same metadata: a different cache entry, no barriers.
  at::Tensor p = at::randn({2, 3}), q = at::randn({2, 3}), p2 = p.clone(), q2 = q.clone();
  expected = fn(Tensor(p2), Tensor(q2)).aten();
  int64_t misses = cache_misses(jfn);
  expect_same(jfn(p, q).aten(), expected, "distinct");
  expect_same(p, p2, "a");
  expect_same(q, q2, "b");
  EXPECT_EQ(cache_misses(jfn), misses + 1);
  EXPECT_FALSE(has_symbol(last_traces(jfn).back(), "prims.update_aliases"));
  EXPECT_FALSE(has_symbol(last_traces(jfn).back(), "prims.copy_"));
  // Aliased again: a cache hit on the aliased entry.
  at::Tensor k = at::randn({2, 3}), k2 = k.clone();
  expected = fn(Tensor(k2), Tensor(k2)).aten();
  int64_t hits = cache_hits(jfn);
  expect_same(jfn(k, k).aten(), expected, "same tensor twice again");
  expect_same(k, k2, "the shared input again");
  EXPECT_EQ(cache_hits(jfn), hits + 1);
}

// Each op with both arguments taken from one buffer (`views` makes them).
template <typename Fn, typename Views>
void expect_like_eager_aliased(Fn fn, const at::Tensor& buffer, Views views) {
  at::Tensor e = buffer.clone(), j = buffer.clone();
  auto [ea, eb] = views(e);
  at::Tensor expected = fn(Tensor(ea), Tensor(eb)).aten();
  auto [ja, jb] = views(j);
  auto jfn = jit(fn);
  expect_same(jfn(ja, jb).aten(), expected, "result");
  expect_same(j, e, "buffer");
}

TEST(InPlace, EachOpOnAliasedInputs) {
  at::Tensor buf = at::randn({4, 3});
  auto same = [](const at::Tensor& t) { return std::make_pair(t, t); };
  auto overlapping = [](const at::Tensor& t) {
    return std::make_pair(t.narrow(0, 0, 3), t.narrow(0, 1, 3));
  };
  auto check = [&](auto fn) {
    expect_like_eager_aliased(fn, buf, same);
    expect_like_eager_aliased(fn, buf, overlapping);
  };
  // Operands other than the destination are fresh values: libtorch refuses
  // partially overlapping ones.
  check([](Tensor a, Tensor b) {
    a.add_(1.0);
    return b * 1.0;
  });
  check([](Tensor a, Tensor b) {
    a.add_(b.sin(), 0.5);
    return a + b;
  });
  check([](Tensor a, Tensor b) {
    a.mul_(b.sin());
    return b * 1.0;
  });
  check([](Tensor a, Tensor b) {
    a.copy_(b * 3.0);
    return b * 1.0;
  });
  check([](Tensor a, Tensor b) {
    a.fill_(2.0);
    return b * 1.0;
  });
  check([](Tensor a, Tensor b) {
    a.select(0, 1).zero_();
    return b * 1.0;
  });
  check([](Tensor a, Tensor b) {
    a.masked_fill_(b > 0.0, 9.0);
    return b * 1.0;
  });
  check([](Tensor a, Tensor b) {
    a.scatter_add_(1, (b > 0.0).to(at::kLong), b.sin());
    return b * 1.0;
  });
}

TEST(InPlace, ReadOnlyAliasedInputs) {
  at::Tensor x = at::randn({3});
  auto jfn = jit([](Tensor a, Tensor b) { return a * b; });
  expect_same(jfn(x, x).aten(), x * x, "x * x");
}

TEST(InPlace, FunctionalizedTraceIsPure) {
  auto jfn = jit(
      [](Tensor a, Tensor b) {
        a.add_(b);
        return a * 2.0;
      },
      {.arg_names = {"a", "b"}});
  at::Tensor a = at::ones({3}), b = at::ones({3});
  jfn(a, b);
  std::vector<Trace> traces = last_traces(jfn);
  EXPECT_TRUE(has_symbol(traces.front(), "prims.copy_"));
  EXPECT_FALSE(has_symbol(find_stage(traces, "Functionalization"), "prims.copy_"));
  EXPECT_FALSE(has_symbol(traces.back(), "prims.copy_"));
  EXPECT_TRUE(at::equal(a, at::full({3}, 2.0)));
}

TEST(InPlace, SkipFunctionalizationKeepsInPlaceForm) {
  auto fn = [](Tensor a, Tensor b) {
    a.narrow(0, 0, 2).mul_(b.narrow(0, 0, 2));
    return a + 1.0;
  };
  at::Tensor x = at::randn({3}), y = at::randn({3});
  expect_like_eager(fn, {x, y}, {.skip_inplace_functionalization = true});
  auto jfn = jit(fn, {.skip_inplace_functionalization = true});
  jfn(x.clone(), y);
  EXPECT_TRUE(has_symbol(last_traces(jfn).back(), "prims.copy_"));
  EXPECT_FALSE(has_stage(last_traces(jfn), "Functionalization"));
}

TEST(InPlace, GradientsThroughInPlaceOnIntermediates) {
  auto fn = [](Tensor x, Tensor w) {
    Tensor h = x * w;
    h.narrow(0, 0, 1).mul_(2.0);  // through a view of a value that requires grad
    h.add_(w.sin());
    h.masked_fill_(x > 1.0, 0.0);
    return (h * h).sum();
  };
  at::Tensor x = at::randn({3, 4}), w = at::randn({3, 4}).requires_grad_();
  at::Tensor w_eager = w.detach().clone().requires_grad_();
  at::Tensor expected = fn(Tensor(x), Tensor(w_eager)).aten();
  expected.backward();
  auto jfn = jit(fn);
  at::Tensor got = jfn(x, w).aten();
  expect_same(got, expected, "result");
  got.backward();
  expect_same(w.grad(), w_eager.grad(), "w.grad");
}

// The caller's tensor holds its new value once the call returns: the backward
// must read what the forward read (rematerialization recomputes h + 1 from h,
// which the runtime then saves as a copy).
TEST(InPlace, GradientThroughAnArgumentWrittenInPlace) {
  auto fn = [](Tensor h, Tensor w) {
    h.add_(1.0);
    return F::linear(h, w).sum();
  };
  at::Tensor hidden = at::randn({6, 4}, at::kDouble);
  at::Tensor w = at::randn({3, 4}, at::kDouble).requires_grad_();
  at::Tensor h_eager = hidden.clone(), w_eager = w.detach().clone().requires_grad_();
  fn(Tensor(h_eager), Tensor(w_eager)).aten().backward();
  auto jfn = jit(fn);
  for (int call = 0; call < 2; ++call) {
    at::Tensor h = hidden.clone();
    w.mutable_grad() = at::Tensor();
    jfn(h, w).aten().backward();
    expect_same(h, h_eager, "h after add_, call " + std::to_string(call));
    expect_same(w.grad(), w_eager.grad(), "w.grad, call " + std::to_string(call));
  }
  EXPECT_EQ(cache_hits(jfn), 1);
}

// ---- optimizer-style updates ----

TEST(InPlace, SgdStepUnderNoGrad) {
  auto step = [](Tensor w, Tensor g) {
    NoGradGuard no_grad;
    w.add_(g, -0.1);
    return w * 1.0;
  };
  at::Tensor w = at::randn({4, 3}).requires_grad_(), g = at::randn({4, 3});
  at::Tensor w_eager = w.detach().clone().requires_grad_();
  at::Tensor expected = step(Tensor(w_eager), Tensor(g)).aten();
  auto jstep = jit(step);
  at::Tensor got = jstep(w, g).aten();  // grad mode on outside: the guard is inside
  expect_same(got, expected, "result");
  // Nothing has autograd history: like eager, no backward (none is compiled).
  EXPECT_FALSE(expected.requires_grad());
  EXPECT_FALSE(got.requires_grad());
  EXPECT_TRUE(last_backward_traces(jstep).empty());
  expect_same(w.detach(), w_eager.detach(), "parameter");
  EXPECT_TRUE(w.requires_grad());
  EXPECT_TRUE(w.is_leaf());
  {
    NoGradGuard no_grad;  // and the whole call under no_grad
    jstep(w, g);
    step(Tensor(w_eager), Tensor(g));
  }
  expect_same(w.detach(), w_eager.detach(), "parameter after the second step");
}

TEST(InPlace, ModuleParameterUpdate) {
  struct Scaler : nn::Module {
    nn::Linear fc{3, 2};
    Scaler() { register_module("fc", fc); }
    Tensor forward(const Tensor& x) {
      Tensor y = fc(x);
      NoGradGuard no_grad;
      Tensor(fc.named_parameters()[0].second).mul_(0.5);  // decay the weight in place
      return y;
    }
  };
  auto eager = std::make_shared<Scaler>();
  auto jitted = std::make_shared<Scaler>();
  {
    NoGradGuard no_grad;
    for (size_t i = 0; i < eager->parameters().size(); ++i)
      jitted->parameters()[i].copy_(eager->parameters()[i]);
  }
  auto jmodel = jit(jitted);
  at::Tensor x = at::randn({4, 3});
  for (int call = 0; call < 2; ++call) {
    at::Tensor expected = eager->forward(x).aten();
    expect_same(jmodel(x).aten(), expected, "output");
    for (size_t i = 0; i < eager->parameters().size(); ++i)
      expect_same(jitted->parameters()[i].detach(), eager->parameters()[i].detach(), "parameter");
  }
}

// ---- the MoE-router program ----

void check_router(const std::string& fusion_type) {
  SCOPED_TRACE(fusion_type);
  at::manual_seed(3);
  at::Tensor hidden = at::randn({6, 8}), w = at::randn({4, 8}).requires_grad_();
  at::Tensor h_eager = hidden.clone(), w_eager = w.detach().clone().requires_grad_();
  at::Tensor expected = router(h_eager, w_eager).aten();
  expected.sum().backward();
  auto jrouter = jit(router, {.fusion_type = fusion_type, .arg_names = {"hidden", "w_gate"}});
  for (int call = 0; call < 2; ++call) {
    at::Tensor h = hidden.clone();
    w.mutable_grad() = at::Tensor();
    at::Tensor out = jrouter(h, w).aten();
    expect_same(out, expected, "output");
    expect_same(h, h_eager, "hidden after mul_");
    out.sum().backward();
    expect_same(w.grad(), w_eager.grad(), "w_gate.grad");
  }
  EXPECT_EQ(cache_hits(jrouter), 1);
  // The joint trace's rewrite of the backward's scatter_add_ stays backward.
  bool checked = false;
  {
    std::vector<Trace> traces = last_traces(jrouter);
    const Trace& t = find_stage(traces, "Functionalization of the joint trace");
    for (const BoundSymbol& b : t.bound_symbols()) {
      EXPECT_NE(b.sym->id, "prims.copy_");
      if (b.sym->id == "ltorch.scatter_add") {
        EXPECT_TRUE(b.has_tag(StmtTag::BACKWARD)) << bsym_str(b);
        checked = true;
      }
    }
  }
  EXPECT_TRUE(checked);
  EXPECT_TRUE(has_symbol(last_backward_traces(jrouter).front(), "ltorch.scatter_add"));
}

TEST(InPlace, RouterConsecutive) { check_router("consecutive"); }
TEST(InPlace, RouterDataflow) { check_router("dataflow"); }

}  // namespace
}  // namespace thunder
