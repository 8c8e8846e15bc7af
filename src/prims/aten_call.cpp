// aten.call (thunder/prims/aten_call.h): the meta reads the results' dtypes
// and shapes from the statement itself, since no shape rule is known for an
// operator that has no translation.
#include "thunder/prims/aten_call.h"

#include "prim_util.h"

namespace thunder::prims {

namespace {

constexpr const char* kId = "aten.call";

std::pair<DType, Shape> result_type(const Value& r) {
  const bool ok = r.is_list() && r.as_list().size() == 2 &&
                  r.as_list()[0].kind() == Value::Kind::DType &&
                  r.as_list()[1].kind() == Value::Kind::IntList;
  THUNDER_CHECK(ok, "{}: each result must be [dtype, shape], got {}", kId, r.str());
  return {r.as_list()[0].as_dtype(), r.as_list()[1].as_int_list()};
}

Value meta(const OpArgs& a) {
  THUNDER_CHECK(a.size() >= 2 && a[0].kind() == Value::Kind::String &&
                    a[0].as_string().find("::") != std::string::npos,
                "{}: expects an operator name ('aten::erfinv'), the results and the operator's "
                "arguments, got {}",
                kId, a.size() == 0 ? std::string("no arguments") : a[0].str());
  THUNDER_CHECK(a[1].is_list() && !a[1].as_list().empty(), "{}: {} has no results, got {}", kId,
                a[0].str(), a[1].str());
  Device device = Device::cpu();
  std::vector<ProxyPtr> ins;
  for (size_t i = 2; i < a.size(); ++i) a[i].collect_proxies(ins);
  for (const ProxyPtr& p : ins)
    if (p->is_tensor()) {
      device = p->device;
      break;
    }
  std::vector<Value> outs;
  for (const Value& r : a[1].as_list()) {
    auto [dtype, shape] = result_type(r);
    detail::check_shape(kId, shape);
    outs.emplace_back(detail::new_tensor(std::move(shape), dtype, device));
  }
  return outs.size() == 1 ? outs[0] : Value(std::move(outs));
}

}  // namespace

namespace detail {

void register_aten_call() { define(kId, {}, 0, meta); }

}  // namespace detail

const Symbol& aten_call_symbol() {
  static const Symbol& s = symbol(kId);
  return s;
}

bool is_aten_call(const BoundSymbol& b) { return b.sym == &aten_call_symbol(); }

const std::string& aten_call_op(const BoundSymbol& b) { return b.args.at(0).as_string(); }

Value aten_call(const std::string& op, const std::vector<std::pair<DType, Shape>>& results,
                std::vector<Value> args) {
  std::vector<Value> rs;
  for (const auto& [dtype, shape] : results)
    rs.emplace_back(std::vector<Value>{Value(dtype), Value(shape)});
  args.insert(args.begin(), {Value(op), Value(std::move(rs))});
  return detail::call(aten_call_symbol(), std::move(args));
}

}  // namespace thunder::prims
