#include "thunder/executors/kernel.h"

#include "thunder/core/error.h"

namespace thunder {

at::ScalarType to_aten(DType d) {
  static constexpr at::ScalarType map[] = {at::kBool,  at::kByte,  at::kChar, at::kShort,
                                           at::kInt,   at::kLong,  at::kHalf, at::kBFloat16,
                                           at::kFloat, at::kDouble};
  return map[static_cast<int>(d)];
}

DType from_aten(at::ScalarType t) {
  switch (t) {
    case at::kBool:
      return DType::b8;
    case at::kByte:
      return DType::u8;
    case at::kChar:
      return DType::i8;
    case at::kShort:
      return DType::i16;
    case at::kInt:
      return DType::i32;
    case at::kLong:
      return DType::i64;
    case at::kHalf:
      return DType::f16;
    case at::kBFloat16:
      return DType::bf16;
    case at::kFloat:
      return DType::f32;
    case at::kDouble:
      return DType::f64;
    default:
      fail("thunder: unsupported tensor dtype {}", c10::toString(t));
  }
}

at::Device to_aten(Device d) {
  return d.type == Device::Type::CPU ? at::Device(at::kCPU)
                                     : at::Device(at::kCUDA, static_cast<int8_t>(d.index));
}

Device from_aten(const at::Device& d) {
  if (d.is_cpu()) return Device::cpu();
  THUNDER_CHECK(d.is_cuda(), "thunder: unsupported device {}", d.str());
  return Device::cuda(d.has_index() ? d.index() : 0);
}

Operand const_operand(const Value& v) {
  Operand o;
  o.kind = Operand::Kind::Const;
  o.constant = v;
  switch (v.kind()) {
    case Value::Kind::Bool:
      o.scalar = c10::Scalar(v.as_bool());
      break;
    case Value::Kind::Int:
      o.scalar = c10::Scalar(v.as_int());
      break;
    case Value::Kind::Double:
      o.scalar = c10::Scalar(v.as_double());
      break;
    default:
      break;
  }
  return o;
}

void KernelCall::not_a_tensor(size_t i) const {
  const std::string name = i < in_.sym->params.size() ? in_.sym->params[i] : std::to_string(i);
  fail("{}: argument {} must be a tensor, got {}", in_.sym->id, name, in_.ins[i].constant.str());
}

std::vector<at::Tensor> KernelCall::tensors(size_t i) const {
  const Operand& o = in_.ins[i];
  std::vector<at::Tensor> out;
  out.reserve(o.slots.size());
  for (int32_t s : o.slots) out.push_back(s < 0 ? at::Tensor() : t_[s]);
  return out;
}

}  // namespace thunder
