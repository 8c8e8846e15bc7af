// The ATen kernel of prims.copy_: it writes into dst and outputs dst itself.
#include "ops/opinfo.h"
#include "thunder/executors/aten.h"
#include "thunder/executors/kernel.h"
#include "thunder/prims/prims.h"

namespace thunder::testing {
namespace {

TEST(InplacePrims, CopyKernelWritesIntoDst) {
  const Symbol& sym = prims::symbol("prims.copy_");
  Kernel kernel = aten::kernel_for(sym);
  ASSERT_NE(kernel, nullptr);
  at::Tensor src = make_tensor({2, 3});
  at::Tensor dst = at::zeros({2, 3});
  at::Tensor view = dst.view({6});  // an alias sees the write too
  Instr instr;
  instr.sym = &sym;
  for (int32_t slot : {0, 1}) {
    Operand o;
    o.kind = Operand::Kind::Tensor;
    o.slot = slot;
    instr.ins.push_back(o);
  }
  std::vector<at::Tensor> slots{src, dst}, outs;
  KernelCall call(instr, slots.data(), nullptr);
  call.collect_outputs(&outs);
  kernel(call);
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_TRUE(outs[0].is_same(dst));
  EXPECT_TRUE(at::equal(dst, src));
  EXPECT_TRUE(at::equal(view, src.reshape({6})));
}

}  // namespace
}  // namespace thunder::testing
