// Distributed prims (thunder/prims/distributed.h). Metas only: what a
// collective does is the executor's business (src/executors/c10d).
#include "thunder/prims/distributed.h"

#include "prim_util.h"

namespace thunder::prims {
namespace detail {
namespace {

void check_group(const char* op, const OpArgs& a, size_t i) {
  THUNDER_CHECK(a[i].kind() == Value::Kind::Int && a.integer(i) >= 0,
                "{}: group must be a process group handle (an int >= 0), got {}", op, a[i].str());
}

ProxyPtr like(const Proxy& p) { return new_tensor(p.shape, p.dtype, p.device); }

}  // namespace

void register_distributed() {
  // Collectives are never recomputed in a backward: every rank must issue
  // exactly the collectives the trace shows, in its order.
  const uint32_t comm = tag_bits({OpTag::DONT_RECOMPUTE_IN_BACKWARD});
  define("prims.all_reduce", {"a", "op", "group"}, comm, [](const OpArgs& a) -> Value {
    const Proxy& t = a.tensor(0);
    THUNDER_CHECK(a[1].kind() == Value::Kind::String && a.string(1) == "sum",
                  "prims.all_reduce: op must be 'sum', got {}", a[1].str());
    check_group("prims.all_reduce", a, 2);
    return like(t);
  });
  define("prims.wait", {"a"}, comm, [](const OpArgs& a) -> Value { return like(a.tensor(0)); });
  define("prims.synchronize", {"a", "group", "world_size"}, 0, [](const OpArgs& a) -> Value {
    const Proxy& t = a.tensor(0);
    check_group("prims.synchronize", a, 1);
    THUNDER_CHECK(a[2].kind() == Value::Kind::Int && a.integer(2) >= 1,
                  "prims.synchronize: world_size must be an int >= 1, got {}", a[2].str());
    return like(t);
  });
}

}  // namespace detail

Value all_reduce(const Value& a, const std::string& op, int64_t group) {
  THUNDER_PRIM_CALL("prims.all_reduce", a, Value(op), Value(group));
}
bool is_collective(const Symbol& sym) {
  static const Symbol* all_reduce = &symbol("prims.all_reduce");
  return &sym == all_reduce;
}

Value wait(const Value& future) { THUNDER_PRIM_CALL("prims.wait", future); }
Value synchronize(const Value& a, int64_t group, int64_t world_size) {
  THUNDER_PRIM_CALL("prims.synchronize", a, Value(group), Value(world_size));
}

}  // namespace thunder::prims
