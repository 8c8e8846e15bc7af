#include "thunder/runtime/program.h"

#include <algorithm>
#include <unordered_map>

#include "thunder/core/del_symbol.h"
#include "thunder/core/error.h"
#include "thunder/core/trace.h"
#include "thunder/runtime/blas_threads.h"

namespace thunder {

namespace {

struct SlotMap {
  std::unordered_map<const Proxy*, int32_t> tensor, number;
  int32_t n_tensor = 0, n_number = 0;
  int32_t define(const ProxyPtr& p) {
    auto& m = p->is_number() ? number : tensor;
    auto [it, fresh] = m.emplace(p.get(), 0);
    if (fresh) it->second = p->is_number() ? n_number++ : n_tensor++;
    return it->second;
  }
  int32_t get(const Symbol& sym, const ProxyPtr& p) const {
    const auto& m = p->is_number() ? number : tensor;
    auto it = m.find(p.get());
    THUNDER_INTERNAL_CHECK(it != m.end(), "{}: reads {} before it is defined", sym.id, p->name);
    return it->second;
  }
};

Operand operand(const Symbol& sym, const Value& v, const SlotMap& slots) {
  if (v.is_proxy()) {
    Operand o;
    o.kind = v.proxy()->is_number() ? Operand::Kind::Number : Operand::Kind::Tensor;
    o.slot = slots.get(sym, v.proxy());
    o.constant = v;
    return o;
  }
  if (v.is_list() && !v.as_list().empty() && v.as_list()[0].is_proxy()) {
    Operand o;
    o.kind = Operand::Kind::TensorList;
    for (const Value& e : v.as_list())
      o.slots.push_back(e.is_none() ? -1 : slots.get(sym, e.proxy()));
    return o;
  }
  return const_operand(v);
}

void collect_outputs(const Value& v, const SlotMap& slots, std::vector<int32_t>& out) {
  if (v.is_list()) {
    for (const Value& e : v.as_list()) collect_outputs(e, slots, out);
  } else if (v.is_tensor()) {
    out.push_back(slots.tensor.at(v.proxy().get()));
  } else {
    THUNDER_CHECK(v.is_none(), "thunder::jit: the function returned {}, which is not a tensor",
                  v.str());
    out.push_back(-1);
  }
}

}  // namespace

bool runs_matrix_product(const BoundSymbol& b) {
  if (b.has_op_tag(OpTag::MATMUL_OP)) return true;
  return std::any_of(b.subsymbols.begin(), b.subsymbols.end(), runs_matrix_product);
}

Program Program::lower(const Trace& trace, const std::vector<Input>& inputs,
                       const std::vector<Executor*>& executors) {
  Program prog;
  prog.symbols_ = trace.owned_symbols;
  SlotMap slots;
  THUNDER_INTERNAL_CHECK(inputs.size() == trace.inputs.size(),
                         "lower: {} input sources for {} inputs", inputs.size(),
                         trace.inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    prog.inputs_.push_back(
        {inputs[i], slots.define(trace.inputs[i]), trace.inputs[i]->is_number()});
  for (const BoundSymbol& b : trace.bsyms) {
    if (b.sym == &del_symbol()) {
      THUNDER_INTERNAL_CHECK(!prog.instrs_.empty(),
                             "lower: a del statement before any instruction");
      for (const ProxyPtr& p : b.flat_args())
        if (p->is_tensor()) prog.instrs_.back().frees.push_back(slots.get(*b.sym, p));
      continue;
    }
    THUNDER_INTERNAL_CHECK(b.executor >= 0 && static_cast<size_t>(b.executor) < executors.size(),
                           "lower: {} was not claimed by an executor", b.sym->id);
    Instr in;
    in.sym = b.sym;
    in.fn = executors[b.executor]->kernel(b);
    THUNDER_INTERNAL_CHECK(in.fn != nullptr, "lower: executor {} has no kernel for {}",
                           executors[b.executor]->name(), b.sym->id);
    in.state = executors[b.executor]->kernel_state(b);
    for (const Value& a : b.args) in.ins.push_back(operand(*b.sym, a, slots));
    for (const ProxyPtr& p : b.flat_outputs()) {
      in.outs.push_back(slots.define(p));
      in.out_is_number.push_back(p->is_number());
    }
    prog.instrs_.push_back(std::move(in));
    prog.multiplies_ = prog.multiplies_ || runs_matrix_product(b);
  }
  collect_outputs(trace.output, slots, prog.output_slots_);
  prog.n_tensors_ = slots.n_tensor;
  prog.n_numbers_ = slots.n_number;
  return prog;
}

namespace {

// The slot arrays of one running program. Each thread keeps a stack of them,
// one per nesting level (a backward can run inside another program's kernel
// on the same thread), grown on first use and reused after: no locks, and no
// allocation once warm.
struct Frame {
  std::vector<at::Tensor> tensors;
  std::vector<c10::Scalar> numbers;
};

class FrameLease {
 public:
  FrameLease(int32_t n_tensors, int32_t n_numbers) : n_tensors_(n_tensors) {
    if (stack_.size() == depth_) stack_.push_back(std::make_unique<Frame>());
    frame_ = stack_[depth_++].get();
    if (frame_->tensors.size() < static_cast<size_t>(n_tensors)) frame_->tensors.resize(n_tensors);
    if (frame_->numbers.size() < static_cast<size_t>(n_numbers)) frame_->numbers.resize(n_numbers);
  }
  // Releases every tensor, even when a kernel threw, so no call leaks tensors.
  ~FrameLease() {
    for (int32_t i = 0; i < n_tensors_; ++i) frame_->tensors[i].reset();
    --depth_;
  }
  FrameLease(const FrameLease&) = delete;
  FrameLease& operator=(const FrameLease&) = delete;
  at::Tensor* tensors() { return frame_->tensors.data(); }
  c10::Scalar* numbers() { return frame_->numbers.data(); }

 private:
  static thread_local std::vector<std::unique_ptr<Frame>> stack_;
  static thread_local size_t depth_;
  Frame* frame_;
  int32_t n_tensors_;
};

thread_local std::vector<std::unique_ptr<Frame>> FrameLease::stack_;
thread_local size_t FrameLease::depth_ = 0;

}  // namespace

void Program::run(const FlatArg* args, const std::vector<at::Tensor>& captured,
                  std::vector<at::Tensor>& outs) const {
  BlasThreadsScope one_pool(multiplies_);
  FrameLease frame(n_tensors_, n_numbers_);
  at::Tensor* t = frame.tensors();
  c10::Scalar* n = frame.numbers();
  for (const InputSlot& s : inputs_) {
    if (s.is_number) {
      n[s.slot] = args[s.input.index].scalar();
    } else {
      t[s.slot] = s.input.source == Input::Source::Captured ? captured[s.input.index]
                                                            : args[s.input.index].tensor;
    }
  }
  const Instr* current = nullptr;
  try {
    for (const Instr& in : instrs_) {
      current = &in;
      KernelCall call(in, t, n);
      in.fn(call);
      for (int32_t f : in.frees) t[f].reset();
    }
  } catch (const c10::Error& e) {
    // A kernel's own failure (e.g. a dtype ATen has no CPU kernel for), named by its op.
    fail("{}: {}", current->sym->id, e.what_without_backtrace());
  }
  outs.resize(output_slots_.size());
  for (size_t i = 0; i < output_slots_.size(); ++i)
    outs[i] = output_slots_[i] < 0 ? at::Tensor() : t[output_slots_[i]];
}

}  // namespace thunder
