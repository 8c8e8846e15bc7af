// Opaque ATen calls: an op that has no row in the capture table becomes one
// aten.call statement (thunder/prims/aten_call.h) instead of an error, so
// inference code with unusual ops still compiles. The session
// (capture.cpp) decides where no gradient flows; this file decides which
// schemas an opaque call can stand for and writes the statement.
#include <ATen/core/dispatch/Dispatcher.h>

#include <array>
#include <sstream>
#include <string_view>

#include "capture_session.h"
#include "thunder/executors/kernel.h"
#include "thunder/prims/aten_call.h"

namespace thunder::detail {

namespace {

c10::TypePtr unwrap_optional(const c10::TypePtr& t) {
  if (auto o = t->cast<c10::OptionalType>()) return o->getElementType();
  return t;
}

// The argument types aten.call can hold (real types: ScalarType, not int).
bool holdable(const c10::TypePtr& type) {
  const c10::TypePtr t = unwrap_optional(type);
  switch (t->kind()) {
    case c10::TypeKind::TensorType:
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType:
    case c10::TypeKind::FloatType:
    case c10::TypeKind::BoolType:
    case c10::TypeKind::NumberType:
    case c10::TypeKind::StringType:
    case c10::TypeKind::ScalarTypeType:
    case c10::TypeKind::LayoutType:
    case c10::TypeKind::MemoryFormatType:
    case c10::TypeKind::DeviceObjType:
      return true;
    case c10::TypeKind::ListType: {
      const c10::TypeKind e = t->castRaw<c10::ListType>()->getElementType()->kind();
      return e == c10::TypeKind::TensorType || e == c10::TypeKind::IntType ||
             e == c10::TypeKind::SymIntType || e == c10::TypeKind::FloatType ||
             e == c10::TypeKind::BoolType;
    }
    default:
      return false;
  }
}

// jit replays random ops statelessly (replace_uniform); an opaque call would
// draw from libtorch's generator on every call, unlike a traced random op.
bool is_random(const c10::OperatorHandle& op) {
  if (op.hasTag(at::Tag::nondeterministic_seeded)) return true;
  static constexpr std::array<std::string_view, 12> words = {
      "rand",    "bernoulli",   "normal",    "uniform", "dropout", "multinomial",
      "poisson", "exponential", "geometric", "cauchy",  "rrelu",   "random"};
  const std::string& name = op.schema().name();
  for (std::string_view w : words)
    if (name.find(w) != std::string::npos) return true;
  for (const c10::Argument& a : op.schema().arguments())
    if (unwrap_optional(a.real_type())->kind() == c10::TypeKind::GeneratorType) return true;
  return false;
}

Value argument(const AtenCall& c, size_t i) {
  const c10::IValue& v = c.arg(i);
  if (v.isNone()) return Value();
  const c10::Argument& a = c.schema().arguments()[i];
  const c10::TypePtr t = unwrap_optional(a.real_type());
  switch (t->kind()) {
    case c10::TypeKind::TensorType:
      return c.tensor(i);
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType:
    case c10::TypeKind::LayoutType:
    case c10::TypeKind::MemoryFormatType:
      return Value(v.toInt());
    case c10::TypeKind::FloatType:
      return Value(v.toDouble());
    case c10::TypeKind::BoolType:
      return Value(v.toBool());
    case c10::TypeKind::NumberType:
      return c.scalar(i);
    case c10::TypeKind::StringType:
      return Value(c.string_arg(i));
    case c10::TypeKind::ScalarTypeType:
      return Value(*c.dtype_arg(i));
    case c10::TypeKind::DeviceObjType:
      return Value(from_aten(v.toDevice()));
    case c10::TypeKind::ListType: {
      const c10::TypeKind e = t->castRaw<c10::ListType>()->getElementType()->kind();
      if (e == c10::TypeKind::TensorType) {
        std::vector<Value> items = c.tensors(i);
        for (const Value& x : items)
          if (!x.is_tensor())
            c.fail("argument '{}' holds {}, not only tensors", a.name(), Value(items).str());
        return Value(std::move(items));
      }
      if (e == c10::TypeKind::IntType || e == c10::TypeKind::SymIntType)
        return Value(c.int_list(i));
      std::vector<Value> items;
      for (const c10::IValue& x : v.toListRef()) {
        if (e == c10::TypeKind::BoolType)
          items.emplace_back(x.toBool());
        else
          items.emplace_back(x.toDouble());
      }
      return Value(std::move(items));
    }
    default:
      c.fail("argument '{}' is a {}, which a trace cannot hold", a.name(), a.real_type()->str());
  }
}

}  // namespace

std::string opaque_refusal(const c10::OperatorHandle& op) {
  const c10::FunctionSchema& s = op.schema();
  if (is_random(op))
    return "draws random numbers, which jit replays statelessly and an opaque call cannot";
  if (s.returns().empty()) return "returns nothing (it is called for its effect)";
  for (size_t k = 0; k < s.returns().size(); ++k) {
    const c10::Argument& r = s.returns()[k];
    const c10::TypePtr t = r.real_type();
    if (r.alias_info()) {  // a view (an in-place op is judged by its functional form)
      std::ostringstream ret;
      ret << r;
      return fmt::format(
          "returns a view of its input (result {} is '{}' in its schema), which an opaque call "
          "cannot express",
          k, ret.str());
    }
    if (t->kind() == c10::TypeKind::ListType)
      return fmt::format("returns a list ({}), and an opaque call returns tensors only", t->str());
    if (t->kind() != c10::TypeKind::TensorType)
      return fmt::format("returns a {} (result {}), and an opaque call returns tensors only",
                         t->str(), k);
  }
  for (const c10::Argument& a : s.arguments())
    if (!holdable(a.real_type()))
      return fmt::format("its argument '{}' is a {}, which a trace cannot hold", a.name(),
                         a.real_type()->str());
  return "";
}

Value opaque_call(const AtenCall& c) {
  const c10::FunctionSchema& s = c.schema();
  const std::string op = writes_an_argument(s) ? functional_name(s) : c.name();
  std::vector<Value> args;
  std::optional<at::Device> device;
  for (size_t i = 0; i < c.num_args(); ++i) {
    args.push_back(argument(c, i));
    if (!device && args.back().is_tensor()) device = c.aten(i).device();
    if (!device && args.back().is_list() && !args.back().as_list().empty())
      device = c.arg(i).toTensorVector().front().device();
  }
  const at::Device where = device.value_or(at::Device(at::kCPU));
  std::vector<std::pair<DType, Shape>> results;
  for (size_t k = 0; k < s.returns().size(); ++k) {
    const at::Tensor& r = c.result(k);
    if (!r.defined()) c.fail("result {} is an undefined tensor, which a trace cannot hold", k);
    if (r.device() != where)
      c.fail(
          "result {} is on {}, not on {} (where an opaque call's results are: the device of "
          "its first tensor argument, or cpu)",
          k, r.device().str(), where.str());
    results.emplace_back(from_aten(r.scalar_type()), r.sizes().vec());
  }
  return prims::aten_call(op, results, std::move(args));
}

}  // namespace thunder::detail
