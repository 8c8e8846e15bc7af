// The kernel calling convention shared by eager execution and compiled
// programs. A kernel is a plain function pointer that reads its operands
// through KernelCall (tensor and number slots, or constants converted once at
// lowering time) and writes its outputs into slots: no strings, maps or
// allocations of its own on the hot path.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "thunder/core/bound_symbol.h"

namespace thunder {

at::ScalarType to_aten(DType d);
DType from_aten(at::ScalarType t);  // throws thunder::Error for unsupported types
at::Device to_aten(Device d);
Device from_aten(const at::Device& d);

// One operand of an instruction.
struct Operand {
  enum class Kind : uint8_t { Tensor, Number, Const, TensorList };
  Kind kind = Kind::Const;
  int32_t slot = -1;           // Tensor / Number slot
  std::vector<int32_t> slots;  // TensorList
  Value constant;              // Const: the literal as traced
  c10::Scalar scalar;          // Const numbers, converted once
};

class KernelCall;
using Kernel = void (*)(KernelCall&);

struct Instr {
  Kernel fn = nullptr;
  const Symbol* sym = nullptr;  // for error messages only
  std::vector<Operand> ins;
  std::vector<int32_t> outs;  // output slots, flat
  std::vector<bool> out_is_number;
  std::vector<int32_t> frees;  // tensor slots released after this instruction
  // What the executor resolved once at lowering (Executor::kernel_state), so
  // the kernel does no lookups per call; usually none.
  std::shared_ptr<const void> state;
};

// Builds an operand for a literal or a proxy already assigned to a slot.
Operand const_operand(const Value& v);

class KernelCall {
 public:
  KernelCall(const Instr& in, at::Tensor* tensors, c10::Scalar* numbers)
      : in_(in), t_(tensors), n_(numbers) {}

  size_t size() const { return in_.ins.size(); }
  bool is_tensor(size_t i) const { return in_.ins[i].kind == Operand::Kind::Tensor; }
  bool is_none(size_t i) const {
    return in_.ins[i].kind == Operand::Kind::Const && in_.ins[i].constant.is_none();
  }
  const at::Tensor& tensor(size_t i) const {
    if (in_.ins[i].kind != Operand::Kind::Tensor) [[unlikely]]
      not_a_tensor(i);
    return t_[in_.ins[i].slot];
  }
  // A tensor, or an undefined tensor for None.
  at::Tensor optional_tensor(size_t i) const { return is_none(i) ? at::Tensor() : tensor(i); }
  // A number operand (literal or runtime slot).
  const c10::Scalar& scalar(size_t i) const {
    const Operand& o = in_.ins[i];
    return o.kind == Operand::Kind::Number ? n_[o.slot] : o.scalar;
  }
  int64_t integer(size_t i) const { return in_.ins[i].constant.as_int(); }
  double number(size_t i) const { return scalar(i).toDouble(); }
  bool boolean(size_t i) const { return in_.ins[i].constant.as_bool(); }
  c10::IntArrayRef ints(size_t i) const { return in_.ins[i].constant.as_int_list(); }
  at::ScalarType dtype(size_t i) const { return to_aten(in_.ins[i].constant.as_dtype()); }
  at::Device device(size_t i) const { return to_aten(in_.ins[i].constant.as_device()); }
  const std::string& string(size_t i) const { return in_.ins[i].constant.as_string(); }
  const Value& constant(size_t i) const { return in_.ins[i].constant; }
  std::vector<at::Tensor> tensors(size_t i) const;

  void set_output(size_t k, at::Tensor t) {
    if (eager_outs_) {
      if (eager_outs_->size() <= k) eager_outs_->resize(k + 1);
      (*eager_outs_)[k] = std::move(t);
    } else {
      t_[in_.outs[k]] = std::move(t);
    }
  }
  // Eager mode: outputs are appended to `outs` instead of written to slots.
  void collect_outputs(std::vector<at::Tensor>* outs) { eager_outs_ = outs; }
  void set_number_output(size_t k, c10::Scalar s) { n_[in_.outs[k]] = s; }
  const Symbol& symbol() const { return *in_.sym; }
  const void* state() const { return in_.state.get(); }

 private:
  [[noreturn]] void not_a_tensor(size_t i) const;
  const Instr& in_;
  at::Tensor* t_;
  c10::Scalar* n_;
  std::vector<at::Tensor>* eager_outs_ = nullptr;
};

}  // namespace thunder
