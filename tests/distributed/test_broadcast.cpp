// td::broadcast: rank root's value on every rank, as prims.broadcast and its
// wait inside a jitted program, or blocking on a concrete tensor.
#include <gtest/gtest.h>
#include <thunder/distributed.h>
#include <thunder/thunder.h>

#include <iostream>
#include <string>

#include "launch.h"
#include "oracle_mlp.h"

namespace td = thunder::distributed;
using thunder_test::launch;
using thunder_test::read_text;
using thunder_test::write_text;

namespace {

// Returns the first failed check's number, 0 when all hold.
THUNDER_WORKER(broadcast) {
  td::ProcessGroup pg = td::init_process_group();
  const double mine = static_cast<double>(pg.rank() + 1);
  auto fn = [&](const thunder::Tensor& x) { return td::broadcast(x * 2.0, 1, pg) + x; };
  auto jfn = thunder::jit(fn, {.arg_names = {"x"}});
  const at::Tensor x = at::full({3}, mine, at::kDouble);
  // Rank 1's 2x (4.0), plus this rank's own x.
  if (!at::equal(jfn(x).aten(), at::full({3}, 4.0 + mine, at::kDouble))) return 1;
  if (pg.rank() == 0) write_text(dir + "/trace.txt", thunder::last_traces(jfn).back().str());
  // Eagerly: a copy holding root's value; the input is unchanged.
  const at::Tensor got = td::broadcast(thunder::Tensor(x), 0, pg).aten();
  if (!at::equal(got, at::full({3}, 1.0, at::kDouble)) ||
      !at::equal(x, at::full({3}, mine, at::kDouble)))
    return 2;
  // A root outside the group: thunder::Error on every rank, nothing sent.
  try {
    auto bad = thunder::jit([&](const thunder::Tensor& t) { return td::broadcast(t, 2, pg); });
    bad(x);
    return 3;
  } catch (const thunder::Error& e) {
    if (std::string(e.what()).find("distributed.broadcast: root 2 is not a rank of 2") ==
        std::string::npos) {
      std::cerr << e.what() << "\n";
      return 4;
    }
  }
  // Not differentiable: an error naming the prim, at compile time.
  try {
    jfn(x.clone().requires_grad_());
    return 5;
  } catch (const thunder::Error& e) {
    if (std::string(e.what()).find("prims.broadcast: has no grad rule") == std::string::npos) {
      std::cerr << e.what() << "\n";
      return 6;
    }
  }
  // The group still works: the first entry again, a cache hit.
  if (!at::equal(jfn(x).aten(), at::full({3}, 4.0 + mine, at::kDouble))) return 7;
  return 0;
}

}  // namespace

TEST(Broadcast, EveryRankGetsTheRootsValue) {
  auto r = launch("broadcast", 2);
  thunder_test::expect_ok(r);
  const std::string trace = read_text(r.dir + "/trace.txt");
  const size_t at = trace.find("= prims.broadcast(");
  ASSERT_NE(at, std::string::npos) << trace;
  const std::string line = trace.substr(at, trace.find('\n', at) - at);
  EXPECT_NE(line.find(", 1, 0)"), std::string::npos) << line;  // root 1, group 0
  EXPECT_NE(trace.find("= prims.wait("), std::string::npos) << trace;
}
