// The kernel of aten.call (thunder/prims/aten_call.h): an operator that has
// no translation, run through the dispatcher's boxed interface. Lowering
// looks the operator up by name once per statement and converts the literal
// arguments to IValues; a call only fills the stack with its tensors, calls
// the operator and checks its results against the trace.
#include <ATen/core/dispatch/Dispatcher.h>

#include <atomic>
#include <optional>

#include "aten_util.h"
#include "thunder/prims/aten_call.h"

namespace thunder::aten {

namespace {

std::atomic<int64_t> lookups{0};

struct OpaqueArg {
  // Tensor: a tensor slot; Wrapped: a number slot read as a wrapped-number
  // tensor; Number: a number slot; List: a Tensor[] of slots; Const: `value`.
  enum class Kind : uint8_t { Tensor, Wrapped, Number, List, Const };
  Kind kind = Kind::Const;
  c10::TypeKind type = c10::TypeKind::AnyType;  // Number: the schema's type
  c10::IValue value;
};

struct OpaqueCall {
  explicit OpaqueCall(c10::OperatorHandle h) : op(std::move(h)) {}
  c10::OperatorHandle op;
  std::string name;
  std::vector<OpaqueArg> args;  // one per schema argument, operands 2, 3, ...
  std::vector<Shape> shapes;
  std::vector<at::ScalarType> dtypes;
};

at::Tensor wrapped_number(const c10::Scalar& s) {
  at::Tensor t = c10::scalar_to_tensor(s);
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

c10::TypePtr unwrap_optional(const c10::TypePtr& t) {
  if (auto o = t->cast<c10::OptionalType>()) return o->getElementType();
  return t;
}

// A literal as the IValue of a schema argument of type `type`.
c10::IValue literal(const std::string& op, const c10::Argument& a, const Value& v) {
  auto bad = [&]() -> c10::IValue {
    fail("aten.call: {} takes {} for argument '{}', the trace has {}", op, a.real_type()->str(),
         a.name(), v.str());
  };
  if (v.is_none())
    return a.real_type()->kind() == c10::TypeKind::OptionalType ? c10::IValue() : bad();
  const c10::TypePtr type = unwrap_optional(a.real_type());
  switch (type->kind()) {
    case c10::TypeKind::TensorType:
      return v.is_number() ? c10::IValue(wrapped_number(const_operand(v).scalar)) : bad();
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType:
    case c10::TypeKind::LayoutType:
    case c10::TypeKind::MemoryFormatType:
      return v.kind() == Value::Kind::Int ? c10::IValue(v.as_int()) : bad();
    case c10::TypeKind::FloatType:
      return v.kind() == Value::Kind::Double || v.kind() == Value::Kind::Int
                 ? c10::IValue(v.to_double())
                 : bad();
    case c10::TypeKind::BoolType:
      return v.kind() == Value::Kind::Bool ? c10::IValue(v.as_bool()) : bad();
    case c10::TypeKind::NumberType:
      return v.is_number() ? c10::IValue(const_operand(v).scalar) : bad();
    case c10::TypeKind::StringType:
      return v.kind() == Value::Kind::String ? c10::IValue(v.as_string()) : bad();
    case c10::TypeKind::ScalarTypeType:
      return v.kind() == Value::Kind::DType ? c10::IValue(to_aten(v.as_dtype())) : bad();
    case c10::TypeKind::DeviceObjType:
      return v.kind() == Value::Kind::Device ? c10::IValue(to_aten(v.as_device())) : bad();
    case c10::TypeKind::ListType: {
      const c10::TypeKind e = type->castRaw<c10::ListType>()->getElementType()->kind();
      const bool ints = e == c10::TypeKind::IntType || e == c10::TypeKind::SymIntType;
      if (ints && v.kind() == Value::Kind::IntList) return c10::IValue(v.as_int_list());
      if (!v.is_list()) return bad();
      if (ints && v.as_list().empty()) return c10::IValue(std::vector<int64_t>{});
      if (e == c10::TypeKind::TensorType && v.as_list().empty())
        return c10::IValue(c10::List<at::Tensor>());
      if (e == c10::TypeKind::FloatType) {
        c10::List<double> l;
        for (const Value& x : v.as_list())
          l.push_back(x.is_number() ? x.to_double() : bad().toDouble());
        return c10::IValue(l);
      }
      if (e == c10::TypeKind::BoolType) {
        c10::List<bool> l;
        for (const Value& x : v.as_list())
          l.push_back(x.kind() == Value::Kind::Bool ? x.as_bool() : bad().toBool());
        return c10::IValue(l);
      }
      return bad();
    }
    default:
      return bad();
  }
}

OpaqueArg argument(const std::string& op, const c10::Argument& a, const Value& v) {
  OpaqueArg out;
  const c10::TypePtr type = unwrap_optional(a.real_type());
  const bool tensor = type->kind() == c10::TypeKind::TensorType;
  if (v.is_tensor()) {
    THUNDER_CHECK(tensor, "aten.call: {} takes {} for argument '{}', the trace has tensor {}", op,
                  a.real_type()->str(), a.name(), v.str());
    out.kind = OpaqueArg::Kind::Tensor;
  } else if (v.is_number_proxy()) {
    out.kind = tensor ? OpaqueArg::Kind::Wrapped : OpaqueArg::Kind::Number;
    out.type = type->kind();
  } else if (v.is_list() && !v.as_list().empty() && v.as_list()[0].is_proxy()) {
    const bool list =
        type->kind() == c10::TypeKind::ListType &&
        type->castRaw<c10::ListType>()->getElementType()->kind() == c10::TypeKind::TensorType;
    THUNDER_CHECK(list, "aten.call: {} takes {} for argument '{}', the trace has {}", op,
                  a.real_type()->str(), a.name(), v.str());
    for (const Value& e : v.as_list())
      THUNDER_CHECK(e.is_tensor(), "aten.call: {}: argument '{}' must hold tensors only, got {}",
                    op, a.name(), v.str());
    out.kind = OpaqueArg::Kind::List;
  } else {
    out.value = literal(op, a, v);
  }
  return out;
}

std::shared_ptr<const OpaqueCall> resolve(const BoundSymbol& b) {
  const std::string& op = prims::aten_call_op(b);
  const size_t dot = op.find('.', op.find("::"));
  c10::OperatorName name(op.substr(0, dot), dot == std::string::npos ? "" : op.substr(dot + 1));
  ++lookups;
  auto handle = c10::Dispatcher::singleton().findSchema(name);
  THUNDER_CHECK(handle.has_value(), "aten.call: no operator {} in the dispatcher", op);
  auto call = std::make_shared<OpaqueCall>(*handle);
  call->name = op;
  const c10::FunctionSchema& schema = handle->schema();
  const size_t n_args = b.args.size() - 2;
  THUNDER_CHECK(n_args == schema.arguments().size(),
                "aten.call: {} takes {} arguments ({}), the statement has {}", op,
                schema.arguments().size(), c10::toString(schema), n_args);
  for (size_t i = 0; i < n_args; ++i)
    call->args.push_back(argument(op, schema.arguments()[i], b.args[i + 2]));
  const std::vector<Value>& results = b.args[1].as_list();
  THUNDER_CHECK(results.size() == schema.returns().size(),
                "aten.call: {} returns {} values, the statement has {}", op,
                schema.returns().size(), results.size());
  for (size_t j = 0; j < results.size(); ++j) {
    THUNDER_CHECK(schema.returns()[j].type()->kind() == c10::TypeKind::TensorType,
                  "aten.call: {} returns {} as result {}; only tensors can be results", op,
                  schema.returns()[j].type()->str(), j);
    call->dtypes.push_back(to_aten(results[j].as_list()[0].as_dtype()));
    call->shapes.push_back(results[j].as_list()[1].as_int_list());
  }
  return call;
}

[[noreturn]] void wrong_result(const OpaqueCall& c, size_t j, const at::Tensor& t) {
  fail(
      "{}: result {} is {}{} where the trace expects {}{} (an opaque call's result must keep "
      "the dtype and shape it had when captured)",
      c.name, j, c10::toString(t.scalar_type()), shape_str(t.sizes().vec()),
      c10::toString(c.dtypes[j]), shape_str(c.shapes[j]));
}

void run_opaque(KernelCall& k) {
  const auto* c = static_cast<const OpaqueCall*>(k.state());
  THUNDER_CHECK(c != nullptr, "aten.call: runs only in a lowered program");
  torch::jit::Stack stack;
  stack.reserve(std::max(c->args.size(), c->shapes.size()));
  for (size_t i = 0; i < c->args.size(); ++i) {
    const OpaqueArg& a = c->args[i];
    const size_t o = i + 2;
    switch (a.kind) {
      case OpaqueArg::Kind::Tensor:
        stack.emplace_back(k.tensor(o));
        break;
      case OpaqueArg::Kind::Wrapped:
        stack.emplace_back(wrapped_number(k.scalar(o)));
        break;
      case OpaqueArg::Kind::Number: {
        const c10::Scalar& s = k.scalar(o);
        if (a.type == c10::TypeKind::IntType || a.type == c10::TypeKind::SymIntType)
          stack.emplace_back(s.toLong());
        else if (a.type == c10::TypeKind::FloatType)
          stack.emplace_back(s.toDouble());
        else if (a.type == c10::TypeKind::BoolType)
          stack.emplace_back(s.toBool());
        else
          stack.emplace_back(s);
        break;
      }
      case OpaqueArg::Kind::List:
        stack.emplace_back(k.tensors(o));
        break;
      case OpaqueArg::Kind::Const:
        stack.push_back(a.value);
        break;
    }
  }
  try {
    c->op.callBoxed(&stack);
  } catch (const c10::Error& e) {
    fail("{}: {}", c->name, e.what_without_backtrace());
  }
  for (size_t j = 0; j < c->shapes.size(); ++j) {
    at::Tensor t = std::move(stack[j]).toTensor();
    if (t.scalar_type() != c->dtypes[j] || t.sizes() != c10::IntArrayRef(c->shapes[j])) [[unlikely]]
      wrong_result(*c, j, t);
    k.set_output(j, std::move(t));
  }
}

}  // namespace

int64_t operator_lookups() { return lookups.load(); }

namespace detail {

void register_opaque() { register_kernel("aten.call", &run_opaque); }

std::shared_ptr<const void> opaque_state(const BoundSymbol& b) {
  if (!prims::is_aten_call(b)) return nullptr;
  return resolve(b);
}

}  // namespace detail
}  // namespace thunder::aten
