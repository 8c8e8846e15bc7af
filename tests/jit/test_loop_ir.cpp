// cpu_fuser's loop IR on hand-built kernels: hoisting, row fusion (and its
// refusal), tiling with a remainder, Philox tiles, chunking, the printer's
// text, and one printed kernel compiled and run.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "executors/cpu_fuser/compiler.h"
#include "executors/cpu_fuser/loop_ir.h"
#include "executors/cpu_fuser/loop_transforms.h"
#include "executors/cpu_fuser/print_cpp.h"
#include "executors/cpu_fuser/vector_math.h"

namespace thunder::cpu_fuser::ir {
namespace {

Expr add(Expr a, Expr b) { return binary(BinOp::Add, std::move(a), std::move(b)); }
Expr mul(Expr a, Expr b) { return binary(BinOp::Mul, std::move(a), std::move(b)); }
Expr sub(Expr a, Expr b) { return binary(BinOp::Sub, std::move(a), std::move(b)); }

Loop loop(std::string v, Expr lo, Expr hi, Block body, bool vector = false) {
  return {.var = std::move(v),
          .lo = std::move(lo),
          .hi = std::move(hi),
          .vector = vector,
          .body = std::move(body)};
}

// for j: a = x[i0 * 8 + j] depends on j; b = exp(y[i0]) on i0 only; c =
// z[0] on nothing: b moves before the j loop, c before the o loop too.
TEST(LoopIr, HoistingMovesInvariantLetsAndKeepsDependentOnes) {
  const Expr i0 = var("i0"), j = var("j");
  Block inner = {
      let(Type::F32, "a", load("x", Type::F32, add(mul(i0, int_lit(8)), j))),
      let(Type::F32, "b", call("vm_expf", {load("y", Type::F32, i0)})),
      let(Type::F32, "c", load("z", Type::F32, int_lit(0))),
      let(Type::F32, "d", mul(var("a"), add(var("b"), var("c")))),
      store("out", Type::F32, add(mul(i0, int_lit(8)), j), var("d")),
  };
  Block nest = {for_(loop(
      "o", var("lo"), var("hi"),
      {let(Type::I64, "i0", var("o")), for_(loop("j", int_lit(0), int_lit(8), inner, true))}))};
  EXPECT_EQ(print_block(hoist_invariants(nest), 0),
            "const float c = z[0];\n"
            "for (int64_t o = lo; o < hi; ++o) {\n"
            "  const int64_t i0 = o;\n"
            "  const float b = vm_expf(y[i0]);\n"
            "  #pragma omp simd\n"
            "  for (int64_t j = 0; j < 8; ++j) {\n"
            "    const float a = x[i0 * 8 + j];\n"
            "    const float d = a * (b + c);\n"
            "    out[i0 * 8 + j] = d;\n"
            "  }\n"
            "}\n");
}

// A Let that reads an accumulator the loop updates stays in the loop.
TEST(LoopIr, HoistingKeepsLetsThatReadWhatTheLoopAssigns) {
  Block body = {let(Type::F64, "seen", var("acc")), assign("acc", "+=", var("seen"))};
  Block b = {decl(Type::F64, "acc", int_lit(1)), for_(loop("r", int_lit(0), int_lit(4), body))};
  EXPECT_EQ(print_block(hoist_invariants(b), 0), print_block(b, 0));
}

// One row's reduction: red = sum over r of x[i0 * 5 + r] (+ `extra`), stored to `buffer`.
Nest reduction_nest(const std::string& red, const std::string& buffer, const Expr& extra) {
  const Expr i0 = var("i0");
  Expr x = load("x", Type::F32, add(mul(i0, int_lit(5)), var("r")));
  if (extra) x = sub(x, extra);
  Block accumulate = {decl(Type::F64, "acc", int_lit(0)),
                      for_(Loop{.var = "r",
                                .lo = int_lit(0),
                                .hi = int_lit(5),
                                .vector = true,
                                .reductions = {{"+", "acc"}},
                                .body = {assign("acc", "+=", x)}}),
                      assign(red, "=", cast(Type::F32, var("acc")))};
  Block row = {let(Type::I64, "i0", var("o")), decl(Type::F32, red), scope(accumulate),
               store(buffer, Type::F32, i0, var(red))};
  return {.body = {for_(loop("o", var("lo"), var("hi"), row))}, .range = int_lit(4), .work = 20};
}

// The output: out[i0 * 5 + j] = x[...] / t0[row] + t1[at].
Nest output_nest(const Expr& t1_index) {
  const Expr i0 = var("i0"), at = add(mul(i0, int_lit(5)), var("j"));
  Block element = {let(Type::F32, "v",
                       add(binary(BinOp::Div, load("x", Type::F32, at), load("t0", Type::F32, i0)),
                           load("t1", Type::F32, t1_index))),
                   store("out", Type::F32, at, var("v"))};
  Block row = {let(Type::I64, "i0", var("o")),
               for_(loop("j", int_lit(0), int_lit(5), element, true))};
  return {.body = {for_(loop("o", var("lo"), var("hi"), row))}, .range = int_lit(4), .work = 20};
}

TEST(LoopIr, RowFusionMergesReductionsAndOutputsIntoOneRowLoop) {
  std::vector<Nest> nests = {reduction_nest("red0", "t0", nullptr),
                             reduction_nest("red1", "t1", load("t0", Type::F32, var("i0"))),
                             output_nest(var("i0"))};
  std::string why;
  std::optional<Nest> fused = fuse_rows(nests, {"t0", "t1"}, why);
  ASSERT_TRUE(fused) << why;
  EXPECT_EQ(fused->work, 60);
  EXPECT_EQ(print_block(fused->body, 0),
            "for (int64_t o = lo; o < hi; ++o) {\n"
            "  const int64_t i0 = o;\n"
            "  float red0;\n"
            "  {\n"
            "    double acc = 0;\n"
            "    #pragma omp simd reduction(+:acc)\n"
            "    for (int64_t r = 0; r < 5; ++r) {\n"
            "      acc += x[i0 * 5 + r];\n"
            "    }\n"
            "    red0 = (float)acc;\n"
            "  }\n"
            "  float red1;\n"
            "  {\n"
            "    double acc = 0;\n"
            "    #pragma omp simd reduction(+:acc)\n"
            "    for (int64_t r = 0; r < 5; ++r) {\n"
            "      acc += x[i0 * 5 + r] - red0;\n"
            "    }\n"
            "    red1 = (float)acc;\n"
            "  }\n"
            "  #pragma omp simd\n"
            "  for (int64_t j = 0; j < 5; ++j) {\n"
            "    const float v = x[i0 * 5 + j] / red0 + red1;\n"
            "    out[i0 * 5 + j] = v;\n"
            "  }\n"
            "}\n");
}

TEST(LoopIr, RowFusionIsRefusedWhenAResultIsReadAtAnotherRow) {
  std::vector<Nest> nests = {reduction_nest("red0", "t0", nullptr),
                             reduction_nest("red1", "t1", nullptr),
                             output_nest(var("j"))};  // t1 read along the columns
  std::string why;
  EXPECT_FALSE(fuse_rows(nests, {"t0", "t1"}, why));
  EXPECT_EQ(why, "t1 is read at another row");
}

TEST(LoopIr, TilingSplitsAFlatLoopWithARemainder) {
  Loop flat = loop(
      "i", var("lo"), var("hi"),
      {store("out", Type::F32, var("i"), mul(load("x", Type::F32, var("i")), lit("2.0f")))}, true);
  EXPECT_EQ(print_block({for_(tile_loop(flat, 4, "t", "te"))}, 0),
            "for (int64_t t = lo; t < hi; t += 4) {\n"
            "  const int64_t te = t + 4 < hi ? t + 4 : hi;\n"
            "  #pragma omp simd\n"
            "  for (int64_t i = t; i < te; ++i) {\n"
            "    out[i] = x[i] * 2.0f;\n"
            "  }\n"
            "}\n");
}

// A draw at the loop's own index fills a tile before the element loop; a
// draw at another index (through a transpose, say) stays per element.
TEST(LoopIr, DrawsAtTheLoopIndexAreFilledATileAtATime) {
  auto draw = [](Expr at) {
    return call("philox_uniform_f<0>", {var("key"), var("ctr"), at, lit("0.0f"), lit("1.0f")});
  };
  const Expr row = mul(var("i0"), int_lit(6));
  Block element = {let(Type::F32, "u", draw(add(row, var("j")))),
                   let(Type::F32, "w", draw(mul(var("j"), int_lit(6)))),
                   store("out", Type::F32, add(row, var("j")), add(var("u"), var("w")))};
  Block b = {for_(loop("j", int_lit(0), int_lit(6), element, true))};
  int names = 0;
  EXPECT_EQ(print_block(tile_draws(b, 1024, 4096, names), 0),
            "float u0[6];\n"
            "philox_fill_f<0>(u0, key, ctr, i0 * 6 + 0, i0 * 6 + 6, 0.0f, 1.0f);\n"
            "#pragma omp simd\n"
            "for (int64_t j = 0; j < 6; ++j) {\n"
            "  const float u = u0[j];\n"
            "  const float w = philox_uniform_f<0>(key, ctr, j * 6, 0.0f, 1.0f);\n"
            "  out[i0 * 6 + j] = u + w;\n"
            "}\n");
}

TEST(LoopIr, ParallelizeChunksByWork) {
  Nest small{.range = int_lit(8), .work = 800};
  parallelize(small, 32768, 16384);
  EXPECT_EQ(small.chunk, 0);
  Nest rows{.range = int_lit(1000), .work = 1000 * 1000};
  parallelize(rows, 32768, 16384);
  EXPECT_EQ(rows.chunk, 16);  // 16 rows of 1000 elements per chunk
  Nest flat{.range = var("n")};
  parallelize(flat, 32768, 16384);
  EXPECT_EQ(flat.chunk, 16384);
  EXPECT_EQ(flat.min_parallel, 32768);
}

// out[i] = x[i] * s for i < n, tiled by 4 so the last tile is partial.
Kernel scale_kernel() {
  Loop flat = loop("i", var("lo"), var("hi"),
                   {store("out", Type::F32, var("i"),
                          cast(Type::F32, mul(load("x", Type::F32, var("i")), var("s"))))},
                   true);
  Nest nest{.body = {for_(tile_loop(flat, 4, "t", "te"))}, .range = var("n")};
  parallelize(nest, 32768, 16384);
  return {.params = {{.name = "x", .type = Type::F32, .slot = 0},
                     {.name = "s", .type = Type::F64, .slot = 1, .buffer = false},
                     {.name = "out", .type = Type::F32, .slot = 2, .writable = true}},
          .nests = {nest}};
}

TEST(LoopIr, PrintsAKernel) {
  EXPECT_EQ(print_cpp(scale_kernel()),
            "static void nest0(void* const* p, int64_t lo, int64_t hi) {\n"
            "  const float* __restrict x = (const float*)p[0];\n"
            "  const double s = *(const double*)p[1];\n"
            "  float* __restrict out = (float*)p[2];\n"
            "  for (int64_t t = lo; t < hi; t += 4) {\n"
            "    const int64_t te = t + 4 < hi ? t + 4 : hi;\n"
            "    #pragma omp simd\n"
            "    for (int64_t i = t; i < te; ++i) {\n"
            "      out[i] = (float)(x[i] * s);\n"
            "    }\n"
            "  }\n"
            "}\n"
            "\n"
            "extern \"C\" void thunder_kernel(void* const* p, int64_t n) {\n"
            "  if (n < 32768) {\n"
            "    nest0(p, 0, n);\n"
            "  } else {\n"
            "    const int64_t range = n, chunks = (range + 16384 - 1) / 16384;\n"
            "#pragma omp parallel for schedule(static)\n"
            "    for (int64_t c = 0; c < chunks; ++c)\n"
            "      nest0(p, c * 16384, c * 16384 + 16384 < range ? c * 16384 + 16384 : range);\n"
            "  }\n"
            "}\n");
}

TEST(LoopIr, PrintedKernelCompilesAndRuns) {
  if (!codegen_enabled()) GTEST_SKIP() << "no compiler";
  const std::string src = std::string(kernel_preamble()) + "\n" + print_cpp(scale_kernel());
  std::vector<KernelFn> fns = load_kernels({src});
  ASSERT_EQ(fns.size(), 1u);
  ASSERT_NE(fns[0], nullptr);
  float x[10], out[10] = {};
  for (int i = 0; i < 10; ++i) x[i] = static_cast<float>(i);
  double s = 1.5;
  void* const p[] = {x, &s, out};
  fns[0](p, 10);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(out[i], 1.5f * static_cast<float>(i)) << i;
}

}  // namespace
}  // namespace thunder::cpu_fuser::ir
