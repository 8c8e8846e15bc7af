#include "dnnl_epilogues.h"

#include <fmt/format.h>

#include <optional>
#include <unordered_map>

#include "thunder/lang/ltorch.h"

namespace thunder::dnnl {
namespace {

// By registered symbol, not by id string: looked up once.
struct Symbols {
  const Symbol *prims_matmul, *ltorch_matmul, *prims_linear, *ltorch_linear;
  const Symbol *ltorch_gelu, *ltorch_relu, *prims_maximum;
  const Symbol *ltorch_mul, *prims_mul, *ltorch_add, *prims_add;
};

const Symbols& symbols() {
  static const Symbols s = [] {
    ltorch::ensure_registered();
    const SymbolRegistry& r = symbol_registry();
    return Symbols{&r.get("prims.matmul"),  &r.get("ltorch.matmul"), &r.get("prims.linear"),
                   &r.get("ltorch.linear"), &r.get("ltorch.gelu"),   &r.get("ltorch.relu"),
                   &r.get("prims.maximum"), &r.get("ltorch.mul"),    &r.get("prims.mul"),
                   &r.get("ltorch.add"),    &r.get("prims.add")};
  }();
  return s;
}

bool is_literal_number(const Value& v) {
  return v.kind() == Value::Kind::Int || v.kind() == Value::Kind::Double;
}

double literal(const Value& v) {
  return v.kind() == Value::Kind::Int ? static_cast<double>(v.as_int()) : v.as_double();
}

bool is_value(const Value& v, const Proxy* p) { return v.is_proxy() && v.proxy().get() == p; }

// The other argument of a binary statement one of whose first two arguments
// is `cur`; nullptr when neither is.
const Value* other_operand(const BoundSymbol& e, const Proxy* cur) {
  if (e.args.size() < 2) return nullptr;
  if (is_value(e.args[0], cur)) return &e.args[1];
  if (is_value(e.args[1], cur)) return &e.args[0];
  return nullptr;
}

// The epilogue step statement `e` applies to `cur` (its only reader), if
// oneDNN can apply it as a post-op: the result must keep cur's shape and
// float32, and an added tensor must have that shape too (no broadcasting).
// `residual` receives an Add's other tensor.
std::optional<Epilogue> epilogue_of(const BoundSymbol& e, const Proxy* cur, Value* residual) {
  const Symbols& s = symbols();
  if (!e.output.is_proxy() || !e.output.proxy()->is_tensor()) return std::nullopt;
  const Proxy& out = *e.output.proxy();
  if (out.dtype != DType::f32 || out.shape != cur->shape) return std::nullopt;
  if (e.sym == s.ltorch_gelu && is_value(e.args[0], cur) &&
      e.args[1].kind() == Value::Kind::String) {
    const std::string& approximate = e.args[1].as_string();
    if (approximate == "none") return Epilogue{Epilogue::Kind::GeluErf};
    if (approximate == "tanh") return Epilogue{Epilogue::Kind::GeluTanh};
    return std::nullopt;
  }
  if (e.sym == s.ltorch_relu && is_value(e.args[0], cur)) return Epilogue{Epilogue::Kind::Relu};
  const Value* other = other_operand(e, cur);
  if (other == nullptr) return std::nullopt;
  // relu as autodiff flattens it: maximum(h, 0.0).
  if (e.sym == s.prims_maximum && is_literal_number(*other) && literal(*other) == 0.0)
    return Epilogue{Epilogue::Kind::Relu};
  if ((e.sym == s.ltorch_mul || e.sym == s.prims_mul) && is_literal_number(*other))
    return Epilogue{Epilogue::Kind::Scale, literal(*other)};
  const bool add =
      e.sym == s.prims_add ||
      (e.sym == s.ltorch_add && (e.args.size() < 3 || e.args[2].is_none() ||
                                 (is_literal_number(e.args[2]) && literal(e.args[2]) == 1.0)));
  if (add && other->is_tensor() && !is_value(*other, cur)) {
    const Proxy& r = *other->proxy();
    if (r.dtype == DType::f32 && r.shape == cur->shape && r.device == cur->device) {
      *residual = *other;
      return Epilogue{Epilogue::Kind::Add};
    }
  }
  return std::nullopt;
}

}  // namespace

const ProductSpec* plain_product(const BoundSymbol& b) {
  static const ProductSpec matmul{false, {}}, linear{true, {}};
  const Symbols& s = symbols();
  if (b.sym == s.prims_matmul || b.sym == s.ltorch_matmul) return &matmul;
  if (b.sym == s.prims_linear || b.sym == s.ltorch_linear) return &linear;
  return nullptr;
}

const ProductSpec& product_spec(const BoundSymbol& claimed) {
  if (const ProductSpec* p = plain_product(claimed)) return *p;
  // The executor claims only the four product symbols; anything else it runs
  // was made by fuse_matmul_epilogues.
  return static_cast<const FusedMatmulSymbol*>(claimed.sym)->spec;
}

Trace fuse_matmul_epilogues(const Trace& trace, int self) {
  const std::vector<BoundSymbol>& bsyms = trace.bsyms;
  // Who reads each value: the reading statement, or -1 when several do (or
  // the trace returns it).
  std::unordered_map<const Proxy*, long> reader;
  auto note_read = [&](const Proxy* p, long i) {
    auto [it, fresh] = reader.emplace(p, i);
    if (!fresh) it->second = -1;
  };
  for (size_t i = 0; i < bsyms.size(); ++i)
    for (const ProxyPtr& p : bsyms[i].flat_args()) note_read(p.get(), static_cast<long>(i));
  std::vector<ProxyPtr> returned;
  trace.output.collect_proxies(returned);
  for (const ProxyPtr& p : returned) note_read(p.get(), -1);

  // Each product's chain of epilogue statements; the fused statement takes
  // the place of the chain's last one (every value it reads exists by then,
  // and nothing else reads the values inside the chain).
  std::vector<std::optional<BoundSymbol>> fused_at(bsyms.size());
  std::vector<bool> absorbed(bsyms.size(), false);
  Trace out = trace.empty_like();
  int count = 0;
  for (size_t i = 0; i < bsyms.size(); ++i) {
    const BoundSymbol& head = bsyms[i];
    const ProductSpec* plain = plain_product(head);
    if (head.executor != self || plain == nullptr || !head.output.is_proxy() || absorbed[i])
      continue;
    auto sym = std::make_shared<FusedMatmulSymbol>();
    sym->spec.linear = plain->linear;
    BoundSymbol fused;
    fused.args = head.args;
    fused.subsymbols = {head};
    std::vector<size_t> chain = {i};
    const Proxy* cur = head.output.proxy().get();
    while (sym->spec.epilogues.size() < kMaxEpilogues) {
      auto it = reader.find(cur);
      // An epilogue statement goes to the first product that reaches it
      // (add(matmul, matmul) fuses into the first).
      if (it == reader.end() || it->second < 0 || absorbed[it->second]) break;
      const BoundSymbol& e = bsyms[it->second];
      if (e.has_tag(StmtTag::BACKWARD) != head.has_tag(StmtTag::BACKWARD)) break;
      Value residual;
      std::optional<Epilogue> step = epilogue_of(e, cur, &residual);
      if (!step) break;
      if (step->kind == Epilogue::Kind::Add) {
        step->operand = static_cast<int>(fused.args.size());
        fused.args.push_back(residual);
      }
      sym->spec.epilogues.push_back(*step);
      fused.subsymbols.push_back(e);
      chain.push_back(static_cast<size_t>(it->second));
      cur = e.output.proxy().get();
    }
    if (chain.size() == 1) continue;
    sym->id = fmt::format("dnnlMatmul{}", count++);
    sym->tags = static_cast<uint32_t>(OpTag::MATMUL_OP);
    for (const Value& a : fused.args) sym->params.push_back(a.is_proxy() ? a.proxy()->name : "_");
    fused.sym = sym.get();
    fused.output = bsyms[chain.back()].output;
    fused.tags = head.tags;
    fused.executor = self;
    for (size_t k : chain) absorbed[k] = true;
    fused_at[chain.back()] = std::move(fused);
    out.owned_symbols.push_back(std::move(sym));
  }
  for (size_t i = 0; i < bsyms.size(); ++i) {
    if (fused_at[i])
      out.bsyms.push_back(std::move(*fused_at[i]));
    else if (!absorbed[i])
      out.bsyms.push_back(bsyms[i]);
  }
  return out;
}

}  // namespace thunder::dnnl
