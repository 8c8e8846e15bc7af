// The distributed prims' metas on proxies (torch-free): the shapes of
// all_gather's and reduce_scatter's futures, and malformed calls refused
// naming the prim and the value.
#include <gtest/gtest.h>

#include "test_symbols.h"
#include "thunder/core/error.h"
#include "thunder/prims/distributed.h"
#include "thunder/prims/prims.h"

namespace thunder {
namespace {

class DistributedPrims : public testing::TracingTest {};

TEST_F(DistributedPrims, GatherAndReduceScatterShapes) {
  ProxyPtr shard = in({3, 5}, DType::f32);
  Value gathered = prims::all_gather(Value(shard), 0, 4);
  EXPECT_EQ(gathered.proxy()->type_str(), "cpu f32[12, 5]");
  Value scattered = prims::reduce_scatter(gathered, "sum", 0, 4);
  EXPECT_EQ(scattered.proxy()->type_str(), "cpu f32[3, 5]");
  EXPECT_TRUE(prims::is_collective(*trace_.bsyms[0].sym));
  EXPECT_TRUE(prims::is_collective(*trace_.bsyms[1].sym));
  EXPECT_FALSE(prims::is_collective(prims::symbol("prims.wait")));
}

TEST_F(DistributedPrims, MalformedCallsAreRefused) {
  ProxyPtr x = in({6, 2}, DType::f32), scalar = in({}, DType::f32);
  expect_error("prims.all_gather: world_size must be an int >= 1, got 0",
               [&] { prims::all_gather(Value(x), 0, 0); });
  expect_error("prims.all_gather: group must be a process group handle (an int >= 0), got -1",
               [&] { prims::all_gather(Value(x), -1, 2); });
  expect_error("prims.all_gather: x1 is 0-dimensional",
               [&] { prims::all_gather(Value(scalar), 0, 2); });
  expect_error("prims.reduce_scatter: op must be 'sum', got 'max'",
               [&] { prims::reduce_scatter(Value(x), "max", 0, 2); });
  expect_error(
      "prims.reduce_scatter: dim 0 of x0 (\"cpu f32[6, 2]\") must be a multiple of "
      "world_size 4",
      [&] { prims::reduce_scatter(Value(x), "sum", 0, 4); });
}

}  // namespace
}  // namespace thunder
