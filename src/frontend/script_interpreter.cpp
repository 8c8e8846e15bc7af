// interpret_script (jit.h): runs a TorchScript module's inlined forward graph
// node by node under capture, instead of TorchScript's interpreter. Tensors
// flow through aten ops called at the dispatcher (capture translates each);
// everything else (attributes, constants, numbers, lists, tuples) is a host
// value known at trace time, so `If` picks its branch and `Loop` unrolls, and
// the module's attributes are guarded by value (add_attribute_value). The one
// thing that cannot be compiled is a host value read from tensor data, which
// is refused at the node that reads it, naming the script line.
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/inliner.h>

#include <algorithm>
#include <array>
#include <functional>
#include <string_view>
#include <unordered_map>

#include "thunder/core/error.h"
#include "thunder/frontend/jit.h"

namespace thunder::detail {

namespace {

using torch::jit::Block;
using torch::jit::Node;

// The script's source line(s) of a node, for errors.
std::string where(const Node* n) {
  std::string s = n->sourceRange().str();
  return s.empty() ? std::string(n->kind().toQualString()) : s;
}

// Nodes that turn a tensor's data into a host value (`if x.sum() > 0:`,
// `int(t)`, `t.item()`, `t.tolist()`): what they return would be baked into
// the trace, so a tensor input to one of them is refused.
bool reads_tensor_data(const Node* n) {
  static const std::array<c10::Symbol, 7> kinds = {
      c10::Symbol::fromQualString("aten::Bool"),
      c10::Symbol::fromQualString("aten::Int"),
      c10::Symbol::fromQualString("aten::Float"),
      c10::Symbol::fromQualString("aten::item"),
      c10::Symbol::fromQualString("aten::is_nonzero"),
      c10::Symbol::fromQualString("prim::tolist"),
      c10::Symbol::fromQualString("aten::ScalarImplicit")};
  if (std::find(kinds.begin(), kinds.end(), n->kind()) == kinds.end()) return false;
  for (const auto* in : n->inputs())
    if (in->type()->isSubtypeOf(*c10::TensorType::get())) return true;
  return false;
}

class Interpreter {
 public:
  c10::IValue run(const torch::jit::Graph& g, c10::IValue self, std::vector<c10::IValue> args) {
    const auto inputs = g.inputs();
    THUNDER_CHECK(inputs.size() == args.size() + 1,
                  "thunder::jit of a TorchScript module: forward takes {} argument(s), called "
                  "with {}",
                  inputs.size() - 1, args.size());
    define(inputs[0], std::move(self));
    for (size_t i = 0; i < args.size(); ++i) define(inputs[i + 1], std::move(args[i]));
    run_block(g.block());
    return get(g.outputs()[0]);
  }

 private:
  std::unordered_map<const torch::jit::Value*, c10::IValue> env_;
  // Uses left of values whose uses are all later nodes of their own block
  // (not inside a loop body or branch): dropped after their last use, so the
  // first call keeps no more intermediates alive than eager does.
  std::unordered_map<const torch::jit::Value*, size_t> uses_left_;

  const c10::IValue& get(const torch::jit::Value* v) const {
    auto it = env_.find(v);
    THUNDER_INTERNAL_CHECK(it != env_.end(), "script value %{} read before it was set",
                           v->debugName());
    return it->second;
  }

  void define(const torch::jit::Value* v, c10::IValue x) {
    env_[v] = std::move(x);
    const Block* home = v->node()->owningBlock();
    bool local = !v->uses().empty();
    for (const auto& u : v->uses())
      local = local && u.user->owningBlock() == home && u.user->kind() != c10::prim::Return;
    if (local) uses_left_[v] = v->uses().size();
  }

  void consumed(const Node* n) {
    for (const auto* in : n->inputs()) {
      auto it = uses_left_.find(in);
      if (it != uses_left_.end() && --it->second == 0) {
        env_.erase(in);
        uses_left_.erase(it);
      }
    }
  }

  void run_block(const Block* b) {
    for (const Node* n : b->nodes()) {
      run_node(n);
      consumed(n);
    }
  }

  // A block's results, read before its values are overwritten or dropped.
  std::vector<c10::IValue> results(const Block* b) const {
    std::vector<c10::IValue> out;
    for (const auto* v : b->outputs()) out.push_back(get(v));
    return out;
  }

  void set_outputs(const Node* n, std::vector<c10::IValue> values) {
    THUNDER_INTERNAL_CHECK(values.size() == n->outputs().size(), "{}: {} results for {} outputs",
                           n->kind().toQualString(), values.size(), n->outputs().size());
    for (size_t i = 0; i < values.size(); ++i) define(n->outputs()[i], std::move(values[i]));
  }

  void run_node(const Node* n) {
    const auto kind = n->kind();
    if (kind == c10::prim::Constant) {
      auto v = torch::jit::toIValue(n->output());
      THUNDER_INTERNAL_CHECK(v.has_value(), "script constant without a value");
      return define(n->output(), *v);
    }
    if (kind == c10::prim::GetAttr) {
      const c10::IValue& obj = get(n->input(0));
      return define(n->output(), obj.toObjectRef().getAttr(n->s(c10::attr::name)));
    }
    if (kind == c10::prim::If) return run_if(n);
    if (kind == c10::prim::Loop) return run_loop(n);
    if (kind == c10::prim::SetAttr)
      fail(
          "thunder::jit of a TorchScript module: forward assigns attribute '{}' (prim::SetAttr) "
          "at\n{}a compiled forward cannot change the module's attributes; update them "
          "outside the jitted call, or write a buffer in place",
          n->s(c10::attr::name), where(n));
    if (kind == c10::prim::RaiseException) {
      std::string msg = get(n->input(0)).isString() ? get(n->input(0)).toStringRef() : "";
      fail("thunder::jit of a TorchScript module: forward raised an exception: {}\nat\n{}", msg,
           where(n));
    }
    if (kind == c10::prim::Uninitialized) return define(n->output(), c10::IValue::uninitialized());
    // `if self.bias is not None:` refines Optional[Tensor] to Tensor.
    if (kind == c10::prim::unchecked_cast) return define(n->output(), get(n->input(0)));
    if (run_container_node(n) || run_metadata_node(n)) return;
    if (reads_tensor_data(n))
      fail(
          "thunder::jit of a TorchScript module: {} reads a tensor's data into a host value "
          "at\n{}control flow and numbers that depend on tensor data cannot be compiled "
          "(the value would be baked into the trace); compute it with tensor ops such as "
          "torch.where",
          n->kind().toQualString(), where(n));
    if (!n->maybeOperator())
      fail(
          "thunder::jit of a TorchScript module: the graph interpreter does not run {} "
          "(at\n{})",
          n->kind().toQualString(), where(n));
    torch::jit::Stack stack;
    stack.reserve(n->inputs().size());
    for (const auto* in : n->inputs()) stack.push_back(get(in));
    n->getOperation()(stack);
    set_outputs(n, std::move(stack));
  }

  // Lists, tuples and dicts: TorchScript's interpreter builds them with
  // instructions of its own (no registered operator to call).
  bool run_container_node(const Node* n) {
    const auto kind = n->kind();
    if (kind != c10::prim::ListConstruct && kind != c10::prim::ListUnpack &&
        kind != c10::prim::TupleUnpack && kind != c10::prim::TupleConstruct &&
        kind != c10::prim::DictConstruct)
      return false;
    std::vector<c10::IValue> in;
    for (const auto* v : n->inputs()) in.push_back(get(v));
    if (kind == c10::prim::ListConstruct) {
      c10::impl::GenericList list(n->output()->type()->expectRef<c10::ListType>().getElementType());
      list.reserve(in.size());
      for (auto& v : in) list.push_back(std::move(v));
      define(n->output(), std::move(list));
    } else if (kind == c10::prim::ListUnpack || kind == c10::prim::TupleUnpack) {
      const auto elems = kind == c10::prim::ListUnpack ? in.at(0).toListRef().vec()
                                                       : in.at(0).toTupleRef().elements().vec();
      THUNDER_CHECK(elems.size() == n->outputs().size(),
                    "thunder::jit of a TorchScript module: {} of {} values into {} names at\n{}",
                    kind.toQualString(), elems.size(), n->outputs().size(), where(n));
      set_outputs(n, elems);
    } else if (kind == c10::prim::TupleConstruct) {
      auto type = n->output()->type()->cast<c10::TupleType>();
      define(n->output(), type && type->schema()
                              ? c10::ivalue::Tuple::createNamed(std::move(in), type)
                              : c10::ivalue::Tuple::create(std::move(in)));
    } else {  // prim::DictConstruct
      const auto& type = n->output()->type()->expectRef<c10::DictType>();
      c10::impl::GenericDict dict(type.getKeyType(), type.getValueType());
      for (size_t i = 0; i + 1 < in.size(); i += 2) dict.insert_or_assign(in[i], in[i + 1]);
      define(n->output(), std::move(dict));
    }
    return true;
  }

  // A tensor's sizes, strides, rank and element count: host values that the
  // entry's shape guards fix, read here rather than dispatched (capture
  // translates ops that make tensors; C++ code reads these without a call).
  bool run_metadata_node(const Node* n) {
    static const c10::Symbol size = c10::Symbol::fromQualString("aten::size"),
                             stride = c10::Symbol::fromQualString("aten::stride"),
                             dim = c10::Symbol::fromQualString("aten::dim"),
                             numel = c10::Symbol::fromQualString("aten::numel");
    const auto kind = n->kind();
    if ((kind != size && kind != stride && kind != dim && kind != numel) ||
        !n->input(0)->type()->isSubtypeOf(*c10::TensorType::get()))
      return false;
    const at::Tensor& t = get(n->input(0)).toTensor();
    if (kind == dim) return define(n->output(), t.dim()), true;
    if (kind == numel) return define(n->output(), t.numel()), true;
    if (n->inputs().size() == 1)
      return define(n->output(), kind == size ? t.sizes().vec() : t.strides().vec()), true;
    const int64_t d = get(n->input(1)).toInt();
    return define(n->output(), kind == size ? t.size(d) : t.stride(d)), true;
  }

  // The condition is a host value (a tensor's data was refused where it was
  // read), so the branch is known; attributes it depends on are guarded.
  void run_if(const Node* n) {
    const Block* taken = n->blocks()[get(n->input(0)).toBool() ? 0 : 1];
    run_block(taken);
    set_outputs(n, results(taken));
  }

  // Unrolled: the trip count and the continue condition are host values.
  void run_loop(const Node* n) {
    const int64_t max_trips = get(n->input(0)).toInt();
    bool go_on = get(n->input(1)).toBool();
    std::vector<c10::IValue> carried;
    for (size_t i = 2; i < n->inputs().size(); ++i) carried.push_back(get(n->input(i)));
    const Block* body = n->blocks()[0];
    for (int64_t trip = 0; trip < max_trips && go_on; ++trip) {
      define(body->inputs()[0], trip);
      for (size_t i = 0; i < carried.size(); ++i) define(body->inputs()[i + 1], carried[i]);
      run_block(body);
      std::vector<c10::IValue> out = results(body);
      go_on = out[0].toBool();
      carried.assign(std::make_move_iterator(out.begin() + 1), std::make_move_iterator(out.end()));
    }
    set_outputs(n, std::move(carried));
  }
};

}  // namespace

bool add_attribute_value(const c10::IValue& v, GuardSignature& sig) {
  if (v.isNone()) {
    sig.add(0x4e6f6e65);
  } else if (v.isBool()) {
    sig.add(v.toBool() ? 0x7472756531 : 0x66616c7365);
  } else if (v.isInt()) {
    sig.add(v.toInt());
  } else if (v.isDouble()) {
    const double d = v.toDouble();
    int64_t bits;
    static_assert(sizeof bits == sizeof d);
    __builtin_memcpy(&bits, &d, sizeof bits);
    sig.add(bits);
  } else if (v.isString()) {
    sig.add(static_cast<int64_t>(std::hash<std::string_view>{}(v.toStringRef())));
  } else if (v.isList()) {
    sig.add(static_cast<int64_t>(v.toListRef().size()));
    for (const auto& e : v.toListRef()) add_attribute_value(e, sig);
  } else if (v.isTuple()) {
    sig.add(static_cast<int64_t>(v.toTupleRef().elements().size()));
    for (const auto& e : v.toTupleRef().elements()) add_attribute_value(e, sig);
  } else {
    return false;
  }
  return true;
}

std::shared_ptr<torch::jit::Graph> inlined_graph(const std::shared_ptr<torch::jit::Graph>& g) {
  auto copy = g->copy();
  torch::jit::Inline(*copy);
  return copy;
}

c10::IValue interpret_script(const torch::jit::Graph& graph, c10::IValue self,
                             std::vector<c10::IValue> args) {
  return Interpreter().run(graph, std::move(self), std::move(args));
}

}  // namespace thunder::detail
