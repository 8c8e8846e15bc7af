#include "thunder/transforms/bucket_all_reduces.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "thunder/core/tracing.h"
#include "thunder/prims/distributed.h"
#include "thunder/prims/prims.h"

namespace thunder {

namespace {

struct Member {
  size_t reduce = 0;  // index of its all_reduce or reduce_scatter statement
  size_t wait = 0;    // index of the wait that reads it
  Value grad;         // what is reduced (the gradient already scaled by 1/world)
  int64_t group = 0;
  int64_t world = 0;  // a reduce_scatter's world size; 0 for an all_reduce
  ProxyPtr result;    // the wait's output, which the unpacking makes
};

bool same_kind(const Member& a, const Member& b) {
  const Proxy &x = *a.grad.proxy(), &y = *b.grad.proxy();
  return a.group == b.group && a.world == b.world && x.dtype == y.dtype && x.device == y.device;
}

// How many statements (and the trace's output) read each value.
std::unordered_map<const Proxy*, int> use_counts(const Trace& t) {
  std::unordered_map<const Proxy*, int> n;
  for (const BoundSymbol& b : t.bsyms)
    for (const ProxyPtr& p : b.flat_args()) ++n[p.get()];
  std::vector<ProxyPtr> outs;
  t.output.collect_proxies(outs);
  for (const ProxyPtr& p : outs) ++n[p.get()];
  return n;
}

}  // namespace

Trace bucket_all_reduces(const Trace& trace, int64_t bucket_bytes) {
  if (bucket_bytes <= 0) return trace;
  const Symbol& all_reduce = prims::symbol("prims.all_reduce");
  const Symbol& reduce_scatter = prims::symbol("prims.reduce_scatter");
  const Symbol& wait = prims::symbol("prims.wait");
  const auto& bs = trace.bsyms;
  auto uses = use_counts(trace);

  // Each all_reduce or reduce_scatter read by exactly one wait (and nothing
  // else) is a candidate.
  std::vector<Member> members;
  for (size_t i = 0; i < bs.size(); ++i) {
    if (bs[i].sym != &all_reduce && bs[i].sym != &reduce_scatter) continue;
    const ProxyPtr& f = bs[i].output.proxy();
    if (uses[f.get()] != 1) continue;
    Member m;
    m.reduce = i;
    m.group = bs[i].args[2].as_int();
    if (bs[i].sym == &reduce_scatter) m.world = bs[i].args[3].as_int();
    bool found = false;
    for (size_t j = i + 1; j < bs.size() && !found; ++j)
      if (bs[j].sym == &wait && bs[j].args[0].is_proxy() && bs[j].args[0].proxy() == f) {
        m.wait = j;
        m.result = bs[j].output.proxy();
        found = true;
      }
    if (!found) continue;
    m.grad = bs[i].args[0];
    members.push_back(std::move(m));
  }

  // Greedy buckets in order of appearance.
  std::vector<std::vector<size_t>> buckets;  // indices into members
  int64_t filled = 0;
  for (size_t k = 0; k < members.size(); ++k) {
    const Proxy& g = *members[k].grad.proxy();
    const int64_t bytes = g.numel() * item_size(g.dtype);
    const bool fits = !buckets.empty() && filled + bytes <= bucket_bytes &&
                      same_kind(members[buckets.back().front()], members[k]);
    if (!fits) {
      buckets.emplace_back();
      filled = 0;
    }
    buckets.back().push_back(k);
    filled += bytes;
  }
  std::erase_if(buckets, [](const std::vector<size_t>& b) { return b.size() < 2; });
  if (buckets.empty()) return trace;

  // Statements that disappear, and where each bucket's pack and unpack go.
  std::unordered_set<size_t> dropped;
  std::unordered_map<size_t, size_t> pack_at;  // statement index -> bucket
  for (size_t b = 0; b < buckets.size(); ++b) {
    size_t last = 0;
    for (size_t k : buckets[b]) {
      const Member& m = members[k];
      dropped.insert(m.reduce);
      dropped.insert(m.wait);
      last = std::max(last, m.reduce);
    }
    pack_at[last] = b;
  }

  Trace out = trace.empty_like();
  TracingScope scope(out);
  TraceCtx& ctx = scope.ctx();
  struct Unpack {
    std::vector<BoundSymbol> stmts;  // wait, then slices and reshapes
    std::unordered_set<const Proxy*> results;
  };
  std::vector<Unpack> pending;
  auto flush_read_by = [&](const BoundSymbol& b) {
    for (auto it = pending.begin(); it != pending.end();) {
      bool reads = false;
      for (const ProxyPtr& p : b.flat_args()) reads = reads || it->results.count(p.get());
      if (!reads) {
        ++it;
        continue;
      }
      for (BoundSymbol& s : it->stmts) out.bsyms.push_back(std::move(s));
      it = pending.erase(it);
    }
  };
  for (size_t i = 0; i < bs.size(); ++i) {
    if (!dropped.count(i)) {
      flush_read_by(bs[i]);
      out.bsyms.push_back(bs[i]);
    }
    auto at = pack_at.find(i);
    if (at == pack_at.end()) continue;
    const std::vector<size_t>& bucket = buckets[at->second];
    const Member& first = members[bucket.front()];
    // Pack: flatten, concatenate; reduce; wait. Each gradient keeps its own
    // 1/world scale (the grad rule's div, as without buckets: the same bits),
    // which cpu_fuser fuses with the cat into one pass that writes the pack.
    // A reduce_scatter's pack is [world, n]: row r holds every member's r-th
    // dim-0 block, so rank r's result row is its blocks, in member order.
    const int64_t world = first.world;
    std::vector<BoundSymbol> pack;
    ctx.push_scope(&pack, nullptr);
    std::vector<Value> flat;
    for (size_t k : bucket) {
      const Proxy& g = *members[k].grad.proxy();
      if (world > 0)
        flat.push_back(prims::reshape(members[k].grad, {world, g.numel() / world}));
      else
        flat.push_back(g.ndim() == 1 ? members[k].grad
                                     : prims::reshape(members[k].grad, {g.numel()}));
    }
    Value packed = prims::cat(flat, world > 0 ? 1 : 0);
    Value future = world > 0 ? prims::reduce_scatter(packed, "sum", first.group, world)
                             : prims::all_reduce(packed, "sum", first.group);
    ctx.pop_scope();
    // The pack keeps the members' statement tags (BACKWARD), so that fusion
    // puts it with their scales.
    for (BoundSymbol& s : pack) {
      s.tags |= bs[first.reduce].tags;
      out.bsyms.push_back(std::move(s));
    }
    Unpack u;
    ctx.push_scope(&u.stmts, nullptr);
    Value reduced = prims::wait(future);
    if (world > 0) reduced = prims::reshape(reduced, {reduced.proxy()->numel()});
    int64_t offset = 0;
    for (size_t k : bucket) {
      const Member& m = members[k];
      const Proxy& r = *m.result;
      Value piece = prims::slice(reduced, {offset}, {offset + r.numel()}, {1});
      offset += r.numel();
      if (r.ndim() != 1) piece = prims::reshape(piece, r.shape);
      // The last statement makes the member's own result proxy.
      u.stmts.back().output = Value(m.result);
      u.results.insert(m.result.get());
    }
    ctx.pop_scope();
    for (BoundSymbol& s : u.stmts) s.tags |= bs[first.wait].tags;
    pending.push_back(std::move(u));
  }
  for (Unpack& u : pending)
    for (BoundSymbol& s : u.stmts) out.bsyms.push_back(std::move(s));
  return out;
}

}  // namespace thunder
