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

int64_t world_size_arg(const char* op, const OpArgs& a, size_t i) {
  THUNDER_CHECK(a[i].kind() == Value::Kind::Int && a.integer(i) >= 1,
                "{}: world_size must be an int >= 1, got {}", op, a[i].str());
  return a.integer(i);
}

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
  // Not pinned either: a recomputed all_gather needs its wait.
  define("prims.wait", {"a"}, 0, [](const OpArgs& a) -> Value { return like(a.tensor(0)); });
  define("prims.reduce_scatter", {"a", "op", "group", "world_size"}, comm,
         [](const OpArgs& a) -> Value {
           const Proxy& t = a.tensor(0);
           THUNDER_CHECK(a[1].kind() == Value::Kind::String && a.string(1) == "sum",
                         "prims.reduce_scatter: op must be 'sum', got {}", a[1].str());
           check_group("prims.reduce_scatter", a, 2);
           const int64_t world = world_size_arg("prims.reduce_scatter", a, 3);
           THUNDER_CHECK(!t.shape.empty() && t.shape[0] % world == 0,
                         "prims.reduce_scatter: dim 0 of {} (\"{}\") must be a multiple of "
                         "world_size {}",
                         t.name, t.type_str(), world);
           Shape shard = t.shape;
           shard[0] /= world;
           return new_tensor(shard, t.dtype, t.device);
         });
  // Not pinned: ZeRO-3 gathers again in the backward (see the header).
  define("prims.all_gather", {"a", "group", "world_size"}, 0, [](const OpArgs& a) -> Value {
    const Proxy& t = a.tensor(0);
    check_group("prims.all_gather", a, 1);
    const int64_t world = world_size_arg("prims.all_gather", a, 2);
    THUNDER_CHECK(!t.shape.empty(), "prims.all_gather: {} is 0-dimensional", t.name);
    Shape full = t.shape;
    full[0] *= world;
    return new_tensor(full, t.dtype, t.device);
  });
  define("prims.broadcast", {"a", "root", "group"}, comm, [](const OpArgs& a) -> Value {
    THUNDER_CHECK(a[1].kind() == Value::Kind::Int && a.integer(1) >= 0,
                  "prims.broadcast: root must be a rank (an int >= 0), got {}", a[1].str());
    check_group("prims.broadcast", a, 2);
    return like(a.tensor(0));
  });
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
  static const Symbol* reduce_scatter = &symbol("prims.reduce_scatter");
  static const Symbol* gather = &symbol("prims.all_gather");
  static const Symbol* broadcast = &symbol("prims.broadcast");
  return &sym == all_reduce || &sym == reduce_scatter || &sym == gather || &sym == broadcast;
}
Value reduce_scatter(const Value& a, const std::string& op, int64_t group, int64_t world_size) {
  THUNDER_PRIM_CALL("prims.reduce_scatter", a, Value(op), Value(group), Value(world_size));
}
Value all_gather(const Value& a, int64_t group, int64_t world_size) {
  THUNDER_PRIM_CALL("prims.all_gather", a, Value(group), Value(world_size));
}

Value broadcast(const Value& a, int64_t root, int64_t group) {
  THUNDER_PRIM_CALL("prims.broadcast", a, Value(root), Value(group));
}
Value wait(const Value& future) { THUNDER_PRIM_CALL("prims.wait", future); }
Value synchronize(const Value& a, int64_t group, int64_t world_size) {
  THUNDER_PRIM_CALL("prims.synchronize", a, Value(group), Value(world_size));
}

}  // namespace thunder::prims
