// Every stage of real programs reads back: print(parse(print(t))) == print(t)
// for each trace in last_traces, last_backward_traces and the prologue, and
// the parsed values carry the metadata passes read (requires_grad, tags,
// BACKWARD). Stages with fusion regions (cppFusionN, not in the symbol
// registry) are skipped and counted; the skip must not be everything.
//
// THUNDER_DUMP_TRACES=dir writes every stage to dir/<program>.<k>.trace: the
// source of the inputs of tests/passes/*.trace.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <thunder/thunder.h>

#include <cstdlib>
#include <fstream>
#include <map>

#include "models.h"
#include "router_program.h"
#include "thunder/core/parse_trace.h"

namespace thunder {
namespace {

namespace F = nn::functional;

struct Counts {
  int parsed = 0;
  int skipped = 0;
};

bool has_region(const Trace& t) {
  for (const BoundSymbol& b : t.bsyms)
    if (b.sym->is_region) return true;
  return false;
}

// Values of forward statements: a backward value's requires_grad is an
// artifact of recording rules on placeholders that nothing reads (no double
// backward), and the parser does not reproduce it.
void collect(const std::vector<BoundSymbol>& bsyms, std::map<std::string, ProxyPtr>& out) {
  for (const BoundSymbol& b : bsyms) {
    if (b.has_tag(StmtTag::BACKWARD)) continue;
    for (const ProxyPtr& p : b.flat_outputs()) out.emplace(p->name, p);
    collect(b.subsymbols, out);
  }
}

void check_trace(const Trace& t, const std::string& where, Counts& c) {
  if (has_region(t)) {
    ++c.skipped;
    return;
  }
  SCOPED_TRACE(where + "\n" + t.str());
  Trace p;
  try {
    p = parse_trace(t.str());
  } catch (const Error& e) {
    ADD_FAILURE() << "parse error: " << e.what();
    return;
  }
  ++c.parsed;
  EXPECT_EQ(p.str(), t.str());
  // Metadata the text does not spell out comes back as tracing made it.
  std::map<std::string, ProxyPtr> want, got;
  for (const ProxyPtr& i : t.inputs) want.emplace(i->name, i);
  for (const ProxyPtr& i : p.inputs) got.emplace(i->name, i);
  if (t.fn_name != "backward") collect(t.bsyms, want);
  collect(p.bsyms, got);
  for (const auto& [name, w] : want) {
    auto it = got.find(name);
    ASSERT_NE(it, got.end()) << name;
    EXPECT_EQ(it->second->requires_grad, w->requires_grad) << name;
    EXPECT_EQ(it->second->tags, w->tags) << name;
  }
  ASSERT_EQ(p.bsyms.size(), t.bsyms.size());
  for (size_t k = 0; k < t.bsyms.size(); ++k) {
    if (t.bsyms[k].sym->id == "del" || t.fn_name == "backward") continue;
    EXPECT_EQ(p.bsyms[k].tags, t.bsyms[k].tags) << bsym_str(t.bsyms[k]);
  }
}

template <typename J>
void check_all(const std::string& program, const J& jfn, Counts& c) {
  std::vector<Trace> stages = last_traces(jfn);
  std::vector<Trace> bwd = last_backward_traces(jfn);
  stages.insert(stages.end(), bwd.begin(), bwd.end());
  stages.push_back(last_prologue_trace(jfn));
  const char* dump = std::getenv("THUNDER_DUMP_TRACES");
  for (size_t k = 0; k < stages.size(); ++k) {
    std::string where = program + " stage " + std::to_string(k) + ": " + stages[k].provenance;
    if (dump)
      std::ofstream(std::string(dump) + "/" + program + "." + std::to_string(k) + ".trace")
          << stages[k];
    check_trace(stages[k], where, c);
  }
}

// The programs, each under both executor lists (the aten-only one has no regions).
void run_programs(const std::vector<std::string>& executors, const std::string& tag, Counts& c) {
  JitOptions o{.executors = executors};
  at::manual_seed(0);
  {
    models::MLP mlp(8, 16, 0.1);
    auto j = jit(mlp, o);
    j(at::randn({4, 8})).sum().backward();
    check_all("mlp" + tag, j, c);
  }
  {
    models::GPTBlock block(11, 8, 2);
    auto j = jit(block, o);
    j(at::randint(0, 11, {2, 5}), at::randint(0, 11, {2, 5})).backward();
    check_all("gpt_block" + tag, j, c);
  }
  auto grad_program = [&](const std::string& name, auto fn, JitOptions opts,
                          std::vector<at::Tensor> args) {
    opts.executors = executors;
    auto j = jit(fn, opts);
    Tensor out = j(Tensor(args[0]), Tensor(args[1]));
    if (out.requires_grad()) out.sum().backward();
    check_all(name + tag, j, c);
  };
  at::Tensor x = at::randn({4, 8}).requires_grad_(), w = at::randn({8, 8}).requires_grad_();
  auto dropout = [](Tensor a, Tensor b) { return F::dropout(a, 0.9, true) * b.sum(); };
  grad_program("dropout", dropout, {}, {x, w});
  grad_program("dropout_stateful", dropout, {.disable_replace_uniform = true}, {x, w});
  grad_program("no_grad",
               [](Tensor a, Tensor b) {
                 Tensor k;
                 {
                   NoGradGuard g;
                   k = b.exp() * 2.0;
                 }
                 return (a.matmul(k)).tanh() + k.mean();
               },
               {}, {x, w});
  grad_program("ops",
               [](Tensor a, Tensor b) {
                 Tensor s = F::softmax(a.matmul(b), -1) + F::layer_norm(a, {8});
                 Tensor parts = thunder::cat(s.chunk(2, 1), 0);
                 Tensor g = F::gelu(parts, "tanh").transpose(0, 1).reshape({4, 8});
                 return (g * a).amax({1}, false).sum() + s.var({0}, true).sum() +
                        thunder::where(a > 0.0, a, -1e-05).pow(2.0).sum();
               },
               {}, {x, w});
  grad_program(
      "checkpoint",
      [](Tensor a, Tensor b) {
        return checkpoint([](Tensor p, Tensor q) { return p.matmul(q).sin(); }, a, b).cos();
      },
      {}, {x, w});
  grad_program("router", test::router, {}, {at::randn({6, 8}), at::randn({4, 8}).requires_grad_()});
  grad_program("inplace_no_grad",
               [](Tensor a, Tensor b) {
                 Tensor t = a * 1.0;
                 t.add_(b.narrow(0, 0, 4));
                 return t;
               },
               {}, {at::randn({4, 8}), at::randn({8, 8})});
}

TEST(ParseTraceRoundTrip, EveryStageOfModelsAndPrograms) {
  Counts c;
  run_programs({"aten"}, "", c);
  run_programs({"cpu_fuser", "aten"}, "_fused", c);
  std::cout << "parsed " << c.parsed << " stages, skipped " << c.skipped
            << " with fusion regions\n";
  EXPECT_GT(c.parsed, 40);
  EXPECT_GT(c.skipped, 0);
  EXPECT_GT(c.parsed, c.skipped);
}

}  // namespace
}  // namespace thunder
