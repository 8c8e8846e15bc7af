// Prints the traces of small programs for FileCheck golden tests
// (tests/golden/*.check, run by ctest through FileCheck-14).
#include <ATen/ATen.h>
#include <thunder/distributed.h>
#include <thunder/executors/cpu_fuser.h>
#include <thunder/thunder.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

#include "thunder/core/parse_trace.h"

using thunder::Tensor;

// Every trace printed here must also read back (print(parse(print(t))) ==
// print(t)); stages with fusion regions cannot be parsed and are skipped.
template <typename J>
void check_round_trip(const J& jfn) {
  std::vector<thunder::Trace> all = thunder::last_traces(jfn);
  for (const auto& t : thunder::last_backward_traces(jfn)) all.push_back(t);
  all.push_back(thunder::last_prologue_trace(jfn));
  for (const auto& t : all) {
    bool region = false;
    for (const auto& b : t.bsyms) region = region || b.sym->index < 0;
    if (region) continue;
    std::string again;
    try {
      again = thunder::parse_trace(t.str()).str();
    } catch (const thunder::Error& e) {
      again = std::string("parse error: ") + e.what();
    }
    if (again != t.str()) {
      std::cerr << "round trip failed for\n" << t << "read back as\n" << again;
      std::exit(1);
    }
  }
}
namespace F = thunder::nn::functional;

struct Block : thunder::nn::Module {
  thunder::nn::Linear fc{8, 16};
  thunder::nn::LayerNorm norm{16};
  Block() {
    register_module("fc", fc);
    register_module("norm", norm);
  }
  Tensor forward(const Tensor& x) { return norm(F::gelu(fc(x), "tanh")); }
};

// A two-layer MLP with a 3-row output layer (padded shards on 2 ranks).
struct Mlp : thunder::nn::Module {
  Tensor w1, b1, w2, b2;
  Mlp() {
    auto o = at::TensorOptions().dtype(at::kDouble);
    w1 = register_parameter("w1", at::randn({10, 6}, o));
    b1 = register_parameter("b1", at::randn({10}, o));
    w2 = register_parameter("w2", at::randn({3, 10}, o));
    b2 = register_parameter("b2", at::randn({3}, o));
  }
  Tensor forward(const Tensor& x) const {
    namespace F = thunder::nn::functional;
    return F::linear(thunder::tanh(F::linear(x, w1, b1)), w2, b2).sum();
  }
};

// Run under thunder-run --nproc 2: rank 0 prints the final forward and
// backward traces of the MLP under ddp or fsdp (ZeRO-3), gradients bucketed.
int print_distributed(bool sharded) {
  namespace td = thunder::distributed;
  td::ProcessGroup pg = td::init_process_group();
  auto model = std::make_shared<Mlp>();
  auto x = at::randn({4, 6}, at::kDouble);
  auto print = [&](auto jm) {
    jm(x).backward();
    if (pg.rank() == 0)
      std::cout << thunder::last_traces(jm).back() << "\n"
                << thunder::last_backward_traces(jm).back();
  };
  // Buckets so that the second layer's two gradients share one, issued
  // before the first layer's gradients are computed (fsdp's are padded).
  const double bucket_mb = (sharded ? 400.0 : 300.0) / (1 << 20);
  if (sharded)
    print(thunder::jit(
        td::fsdp(model, pg, {.strategy = td::ShardingStrategy::ZERO3, .bucket_size_mb = bucket_mb}),
        {.arg_names = {"x"}}));
  else
    print(thunder::jit(td::ddp(model, pg, {.bucket_size_mb = bucket_mb}), {.arg_names = {"x"}}));
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  at::manual_seed(0);
  if (std::strcmp(argv[1], "module") == 0) {
    Block block;
    auto jblock = thunder::jit(block, {.executors = {"aten"}, .arg_names = {"x"}});
    jblock(at::randn({4, 8}));
    check_round_trip(jblock);
    for (const auto& t : thunder::last_traces(jblock)) std::cout << t << "\n";
    std::cout << thunder::last_prologue_trace(jblock);
    return 0;
  }
  if (std::strcmp(argv[1], "decomposed") == 0) {
    auto fn = [](const Tensor& x, const Tensor& mask) {
      return F::softmax(thunder::where(mask, x, -1e9), -1);
    };
    auto jfn = thunder::jit(fn, {.executors = {"aten_prims"}, .arg_names = {"x", "mask"}});
    jfn(at::randn({2, 3}), at::rand({3}) > 0.5);
    check_round_trip(jfn);
    std::cout << thunder::last_traces(jfn).back();
    return 0;
  }
  if (std::strcmp(argv[1], "rematerialize") == 0) {
    // The forward/backward pair before and after rematerialization, then the
    // backward after CSE (the grad rules' sin and cos merged with the recomputed ones).
    auto fn = [](const Tensor& x) { return (x.sin() * x.cos() + x.exp()).sum(); };
    auto jfn = thunder::jit(fn, {.arg_names = {"x"}});
    jfn(at::randn({4}).requires_grad_());
    check_round_trip(jfn);
    auto fwd = thunder::last_traces(jfn);
    auto bwd = thunder::last_backward_traces(jfn);
    using thunder::find_stage;
    std::cout << find_stage(fwd, "Split forward and backward") << "\n"
              << find_stage(bwd, "Split forward and backward") << "\n"
              << find_stage(fwd, "Rematerialization") << "\n"
              << find_stage(bwd, "Rematerialization") << "\n"
              << find_stage(bwd, "Common Subexpression Elimination");
    return 0;
  }
  if (std::strcmp(argv[1], "dropout") == 0) {
    // The three dropout policies of docs/rematerialization.md: the final
    // forward and backward of each.
    auto fn = [](const Tensor& x) { return F::dropout(x, 0.9, true); };
    auto show = [&](const char* title, thunder::JitOptions o) {
      o.executors = {"aten"};  // the prims one per line (docs/fusion.md shows them fused)
      o.arg_names = {"x"};
      auto jfn = thunder::jit(fn, o);
      jfn(at::randn({4, 8}).requires_grad_());  // 32 mask bytes: more than seed + offset
      std::cout << "### " << title << "\n"
                << thunder::last_traces(jfn).back() << "\n"
                << thunder::last_backward_traces(jfn).back() << "\n";
    };
    show("default: the mask is recomputed from seed and offset", {});
    show("disable_replace_uniform: the bool mask is saved", {.disable_replace_uniform = true});
    {  // the policy for this one program only: the old tags are back at the brace
      auto tagged =
          thunder::scoped_add_tags("ltorch.dropout", {thunder::OpTag::DONT_RECOMPUTE_IN_BACKWARD});
      show("DONT_RECOMPUTE_IN_BACKWARD on ltorch.dropout: the bool mask is saved", {});
    }
    return 0;
  }
  if (std::strcmp(argv[1], "rng") == 0) {
    auto fn = [](const Tensor& x) { return F::dropout(x, 0.5, true) * 2.0; };
    auto jfn = thunder::jit(fn, {.arg_names = {"x"}});
    jfn(at::randn({2, 3}).requires_grad_());
    check_round_trip(jfn);
    for (const auto& t : thunder::last_traces(jfn))
      if (thunder::stage_name(t) == "Replace uniform") std::cout << t << "\n";
    std::cout << thunder::last_traces(jfn).back() << "\n";
    std::cout << thunder::last_backward_traces(jfn).back();
    return 0;
  }
  if (std::strcmp(argv[1], "inplace") == 0) {
    // An in-place op on an input, a write through a view, a read through another view.
    auto fn = [](Tensor x, Tensor y) {
      Tensor xt = x.transpose(0, 1);
      x.mul_(2.0);
      x.narrow(0, 0, 1).add_(y);
      return xt * y.transpose(0, 1);
    };
    auto jfn = thunder::jit(fn, {.arg_names = {"x", "y"}});
    jfn(at::randn({2, 3}), at::randn({1, 3}));
    check_round_trip(jfn);
    for (const auto& t : thunder::last_traces(jfn)) std::cout << t << "\n";
    return 0;
  }
  if (std::strcmp(argv[1], "captured") == 0) {
    // Plain libtorch code captured at the dispatcher: addmm(b, x, w.t()), as
    // the C++ frontend's Linear emits it, reads back as one ltorch.linear.
    auto fn = [](const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
      return at::gelu(at::addmm(b, x, w.t()), "tanh");
    };
    auto jfn = thunder::jit(fn, {.executors = {"aten"}, .arg_names = {"x", "w", "b"}});
    jfn(at::randn({4, 8}), at::randn({16, 8}), at::randn({16}));
    check_round_trip(jfn);
    std::cout << thunder::last_traces(jfn).front() << "\n" << thunder::last_traces(jfn).back();
    return 0;
  }
  if (std::strcmp(argv[1], "aliased") == 0) {
    // The same buffer passed twice: the write stays in place behind a barrier.
    auto fn = [](Tensor a, Tensor b) {
      a.mul_(2.0);
      return b + 1.0;
    };
    auto jfn = thunder::jit(fn, {.executors = {"aten"}, .arg_names = {"a", "b"}});
    at::Tensor x = at::randn({3});
    jfn(x, x);
    check_round_trip(jfn);
    std::cout << thunder::last_traces(jfn).back() << "\n" << thunder::last_prologue_trace(jfn);
    return 0;
  }
  if (std::strcmp(argv[1], "row_fused_kernel") == 0) {
    // The generated C++ of a row-fused region (softmax over the rows of a
    // [4, 5] input), from its first loop nest on (the preamble is the same
    // for every kernel).
    auto fn = [](const Tensor& x) { return F::softmax(x, -1); };
    auto jfn = thunder::jit(fn, {.executors = {"cpu_fuser", "aten"}, .arg_names = {"x"}});
    jfn(at::randn({4, 5}));
    const thunder::Trace last = thunder::last_traces(jfn).back();
    std::cout << last << "\n";
    for (const auto& b : last.bsyms) {
      if (!b.sym->is_region) continue;
      const std::string src = thunder::fusion_source(b);
      std::cout << src.substr(src.find("static void nest0"));
    }
    return 0;
  }
  if (std::strcmp(argv[1], "ddp_collectives") == 0) return print_distributed(false);
  if (std::strcmp(argv[1], "fsdp_collectives") == 0) return print_distributed(true);
  return 2;
}
