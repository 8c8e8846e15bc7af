// Memory traffic of fusion regions in the final forward and backward traces
// of the models in examples/models.h: bytes that regions read (inputs) and
// write (outputs), and computations done twice under different names (what
// CSE misses). `fusion_traffic --print` also prints the traces.
#include <ATen/ATen.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "models.h"

namespace {

int64_t bytes(const thunder::ProxyPtr& p) {
  return p->is_tensor() ? p->numel() * thunder::item_size(p->dtype) : 8;
}

void collect(const thunder::BoundSymbol& b, bool in_region,
             std::vector<const thunder::BoundSymbol*>& out) {
  bool region = b.sym->is_region;
  if (region) {
    for (const auto& s : b.subsymbols) collect(s, true, out);
    return;
  }
  out.push_back(&b);
}

void report(const char* what, const thunder::Trace& t, bool print) {
  if (print) std::printf("%s\n", t.str().c_str());
  int64_t regions = 0, in_bytes = 0, out_bytes = 0;
  std::vector<const thunder::BoundSymbol*> stmts;
  for (const auto& b : t.bsyms) {
    if (b.sym->is_region) {
      ++regions;
      for (const auto& p : b.flat_args()) in_bytes += bytes(p);
      for (const auto& p : b.flat_outputs()) out_bytes += bytes(p);
    }
    collect(b, false, stmts);
  }
  // Same symbol and arguments, different outputs: a duplicate computation.
  std::map<std::string, std::set<std::string>> outs_by_key;
  for (const auto* b : stmts) {
    if (b->sym->has_tag(thunder::OpTag::RANDOM_OP) || b->has_op_tag(thunder::OpTag::DONT_DCE) ||
        b->flat_outputs().empty())
      continue;
    std::string key = b->sym->id;
    for (const auto& a : b->args) key += "," + a.str();
    outs_by_key[key].insert(b->flat_outputs()[0]->name);
  }
  int64_t dups = 0;
  for (const auto& [k, names] : outs_by_key) dups += static_cast<int64_t>(names.size()) - 1;
  std::printf(
      "%-14s regions %3lld  region reads %9.1f KB  region writes %9.1f KB  duplicates %lld\n", what,
      static_cast<long long>(regions), in_bytes / 1024.0, out_bytes / 1024.0,
      static_cast<long long>(dups));
}

template <typename J, typename... Args>
void run(const char* name, J& jfn, bool print, Args&&... args) {
  auto out = jfn(std::forward<Args>(args)...);
  out.sum().aten().backward();
  std::vector<thunder::Trace> fwd = thunder::last_traces(jfn);
  std::vector<thunder::Trace> bwd = thunder::last_backward_traces(jfn);
  std::printf("== %s\n", name);
  report("forward", fwd.back(), print);
  report("backward", bwd.back(), print);
}

}  // namespace

int main(int argc, char** argv) {
  bool print = argc > 1 && std::strcmp(argv[1], "--print") == 0;
  at::manual_seed(0);
  thunder::models::MLP mlp(1024, 4096);
  at::Tensor x = at::randn({512, 1024});
  auto jmlp = thunder::jit(mlp);
  run("MLP(1024, 4096), x: [512, 1024]", jmlp, print, x);
  thunder::models::GPTBlock gpt(/*vocab=*/512, /*C=*/256, /*heads=*/8);
  at::Tensor idx = at::randint(0, 512, {8, 128}), tgt = at::randint(0, 512, {8, 128});
  auto jgpt = thunder::jit(gpt);
  run("GPTBlock(512, 256, 8), idx: [8, 128]", jgpt, print, idx, tgt);
  return 0;
}
