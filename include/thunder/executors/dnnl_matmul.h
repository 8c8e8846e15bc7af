// The dnnl executor ("dnnl" in JitOptions::executors): float32 CPU matmul and
// linear as oneDNN matmul primitives with fused epilogues, chosen over ATen
// per shape by measurement (docs/matmul.md). This header holds its switch and its choice table's
// counters; the executor itself is reached by name (executor_by_name).
#pragma once

#include <cstdint>

namespace thunder {
class Executor;
namespace dnnl {

// THUNDER_DNNL, read when a function is compiled: "0" claims nothing (ATen
// runs every matmul), "1" runs oneDNN for every claimed shape without
// measuring, unset measures. Other values throw thunder::Error.
enum class Mode { Measure, Off, Always };
Mode mode();

// The process-wide choice table: shape classes (primitive keys: sizes,
// strides, bias, epilogues) measured so far and how many of them oneDNN won;
// oneDNN primitives built (by all threads, each builds a key's primitive once)
// and how many of them are oneDNN's slow reference implementation (a layout
// its optimised kernels do not take).
struct ChoiceStats {
  int64_t measured = 0;
  int64_t dnnl_chosen = 0;
  int64_t primitives_built = 0;
  int64_t reference_primitives = 0;
};
ChoiceStats choice_stats();
// Forgets every choice and built primitive and zeroes the counters (tests; the
// next call of each shape builds and measures again).
void reset_choices();

// Microseconds of `batch` row-major oneDNN sgemms C[m, n] = A[m, k] @ B[k, n]
// on contiguous buffers of its own (median of 7 runs of `iters` calls): the
// isolated library speed the benchmarks compare the jit's matmuls with.
double isolated_sgemm_us(int64_t batch, int64_t m, int64_t n, int64_t k, int iters);

Executor& dnnl_executor();

// Row-major C [m, n] = alpha op(A) op(B) + beta C through oneDNN's sgemm,
// op being the transpose for 'T' (A is [m, k] as op(A), B [k, n]), for other
// executors' float32 kernels (the attention executor's tiles). Any m, n or k
// may be 0. Throws thunder::Error if oneDNN reports a failure.
void sgemm(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace dnnl
}  // namespace thunder
