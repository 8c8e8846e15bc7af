// The differential fuzzer: random programs (program.h) run eagerly on
// libtorch and under thunder::jit with a rotating set of options; outputs,
// the effects on inputs and the gradients must agree, on the first call and
// on the cached second call. Seeded and reproducible:
//   thunder_fuzz --seeds 0:60       a fixed range (make test)
//   thunder_fuzz --seconds 600      open-ended from a time-based start (make fuzz)
//   thunder_fuzz --seeds 123:124 -v one program, printed
// A failure prints the seed, the options, the program as C++ and its traces.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "program.h"
#include "thunder/executors/cpu_fuser.h"

namespace fuzz {
namespace {

struct Config {
  std::vector<std::string> executors;
  std::string fusion_type;
  bool rematerialize;
  std::string cache;

  std::string str() const {
    return fmt::format("executors={{{}}} fusion_type={} rematerialize={} cache={}",
                       fmt::join(executors, ","), fusion_type, rematerialize, cache);
  }
};

// All 24 combinations, visited in turn as seeds advance.
Config config(uint64_t k) {
  static const std::vector<std::vector<std::string>> executor_sets = {
      {"cpu_fuser", "aten"}, {"aten"}, {"aten_prims"}};
  Config c;
  c.executors = executor_sets[k % 3];
  c.fusion_type = (k / 3) % 2 ? "consecutive" : "dataflow";
  c.rematerialize = (k / 6) % 2 == 0;
  c.cache = (k / 12) % 2 ? "none" : "shapes";
  return c;
}

std::vector<at::Tensor> fresh(const std::vector<at::Tensor>& base) {
  std::vector<at::Tensor> out;
  for (const at::Tensor& t : base) {
    at::Tensor c = t.detach().clone();
    out.push_back(t.requires_grad() ? c.requires_grad_() : c);
  }
  return out;
}

// A program that computes anything in float32 is compared at float32's
// tolerance, whatever the dtype of its outputs.
bool computes_in_f32(const Program& p) {
  for (const Input& in : p.inputs)
    if (in.dtype == at::kFloat) return true;
  for (const Op& op : p.ops)
    if (op.kind == Kind::ToDtype && !op.flag) return true;
  return false;
}

// Empty when equal (within the tolerance), else what differs.
std::string compare(const at::Tensor& got, const at::Tensor& want, const std::string& what,
                    bool f32) {
  if (got.defined() != want.defined())
    return fmt::format("{}: defined {} vs eager {}", what, got.defined(), want.defined());
  if (!want.defined()) return "";
  if (got.sizes() != want.sizes())
    return fmt::format("{}: shape {} vs eager {}", what, fmt::join(got.sizes(), ","),
                       fmt::join(want.sizes(), ","));
  if (got.scalar_type() != want.scalar_type())
    return fmt::format("{}: dtype {} vs eager {}", what, c10::toString(got.scalar_type()),
                       c10::toString(want.scalar_type()));
  if (!want.is_floating_point())
    return at::equal(got, want) ? "" : fmt::format("{}: values differ", what);
  const bool f64 = !f32 && want.scalar_type() == at::kDouble;
  const double rtol = f64 ? 1e-9 : 2e-4, atol = f64 ? 1e-11 : 2e-5;
  at::Tensor g = got.detach().to(at::kDouble), w = want.detach().to(at::kDouble);
  if (at::allclose(g, w, rtol, atol, /*equal_nan=*/true)) return "";
  return fmt::format("{}: max abs diff {}", what, (g - w).abs().nan_to_num().max().item<double>());
}

template <typename J>
std::string traces_of(const J& jfn) {
  std::string s;
  auto fwd = thunder::last_traces(jfn);
  auto bwd = thunder::last_backward_traces(jfn);
  if (!fwd.empty()) s += fwd.back().str();
  if (!bwd.empty()) s += "\n" + bwd.back().str();
  return s;
}

// The loss both sides differentiate: a fixed random weighting of each output.
at::Tensor loss_of(const std::vector<at::Tensor>& outs, const std::vector<at::Tensor>& weights) {
  at::Tensor loss;
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].requires_grad()) continue;
    at::Tensor term = (outs[i] * weights[i]).sum().to(at::kDouble);
    loss = loss.defined() ? loss + term : term;
  }
  return loss;
}

// Runs one program under one configuration; empty when jit agrees with eager.
std::string check(const Program& p, const Config& c) {
  const std::vector<at::Tensor> base = make_inputs(p);
  const bool f32 = computes_in_f32(p);
  std::vector<at::Tensor> eager_in = fresh(base);
  std::vector<at::Tensor> eager_out = run(p, eager_in);
  std::vector<at::Tensor> weights;
  for (const at::Tensor& o : eager_out)
    weights.push_back(o.is_floating_point() ? at::randn_like(o.detach()) : at::Tensor());
  if (at::Tensor loss = loss_of(eager_out, weights); loss.defined()) loss.backward();

  thunder::JitOptions o{.executors = c.executors,
                        .fusion_type = c.fusion_type,
                        .rematerialize = c.rematerialize,
                        .cache = c.cache};
  auto jfn = thunder::jit([&p](const thunder::TensorList& xs) { return run(p, xs); }, o);
  for (int call = 0; call < 2; ++call) {
    std::vector<at::Tensor> in = fresh(base);
    std::vector<at::Tensor> out;
    try {
      for (const thunder::Tensor& t : jfn(in)) out.push_back(t.aten());
    } catch (const std::exception& e) {
      return fmt::format("call {}: jit threw: {}", call, e.what());
    }
    std::string why;
    if (out.size() != eager_out.size()) return fmt::format("call {}: output count", call);
    for (size_t i = 0; i < out.size() && why.empty(); ++i)
      why = compare(out[i], eager_out[i], fmt::format("call {}: output {}", call, i), f32);
    for (size_t i = 0; i < out.size() && why.empty(); ++i)
      if (out[i].requires_grad() != eager_out[i].requires_grad())
        why = fmt::format("call {}: output {} requires_grad {} vs eager {}", call, i,
                          out[i].requires_grad(), eager_out[i].requires_grad());
    for (size_t i = 0; i < in.size() && why.empty(); ++i)
      why = compare(in[i], eager_in[i], fmt::format("call {}: input v{} after the call", call, i),
                    f32);
    if (why.empty()) {
      if (at::Tensor loss = loss_of(out, weights); loss.defined()) {
        try {
          loss.backward();
        } catch (const std::exception& e) {
          return fmt::format("call {}: backward threw: {}\n{}", call, e.what(), traces_of(jfn));
        }
      }
      for (size_t i = 0; i < in.size() && why.empty(); ++i)
        if (base[i].requires_grad())
          why = compare(in[i].grad(), eager_in[i].grad(),
                        fmt::format("call {}: grad of v{}", call, i), f32);
    }
    if (!why.empty()) return why + "\n" + traces_of(jfn);
  }
  return "";
}

// Runs the cpu_fuser configurations of seeds [from, to) once inside one
// KernelBatch, so their kernels build together before the checks (which run
// everything again and report any failure).
void build_kernels(uint64_t from, uint64_t to) {
  thunder::KernelBatch batch;
  for (uint64_t seed = from; seed < to; ++seed) {
    const Program p = generate(seed);
    for (uint64_t k = 0; k < 2; ++k) {
      const Config c = config(seed * 2 + k);
      if (c.executors[0] != "cpu_fuser") continue;
      try {
        auto jfn = thunder::jit([&p](const thunder::TensorList& xs) { return run(p, xs); },
                                {.executors = c.executors,
                                 .fusion_type = c.fusion_type,
                                 .rematerialize = c.rematerialize,
                                 .cache = c.cache});
        (void)jfn(fresh(make_inputs(p)));
      } catch (const std::exception&) {
      }
    }
  }
  batch.build();
}

}  // namespace
}  // namespace fuzz

int main(int argc, char** argv) {
  uint64_t first = 0, last = 60;
  double seconds = -1;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--seeds") && i + 1 < argc) {
      std::sscanf(argv[++i], "%lu:%lu", &first, &last);
    } else if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
      first = static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
      last = UINT64_MAX;
    } else if (!std::strcmp(argv[i], "-v")) {
      verbose = true;
    } else {
      std::fprintf(stderr, "usage: thunder_fuzz [--seeds A:B | --seconds N] [-v]\n");
      return 2;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  int64_t programs = 0, runs = 0, failures = 0;
  constexpr uint64_t kChunk = 25;
  for (uint64_t from = first; from < last; from += std::min(kChunk, last - from)) {
    if (seconds >= 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > seconds)
      break;
    const uint64_t to = from + std::min(kChunk, last - from);
    fuzz::build_kernels(from, to);
    for (uint64_t seed = from; seed < to; ++seed) {
      fuzz::Program p = fuzz::generate(seed);
      if (verbose) std::printf("%s", fuzz::to_cpp(p).c_str());
      ++programs;
      for (uint64_t k = 0; k < 2; ++k) {
        fuzz::Config c = fuzz::config(seed * 2 + k);
        ++runs;
        std::string why = fuzz::check(p, c);
        if (why.empty()) continue;
        ++failures;
        std::printf("FAIL seed %lu with %s\n%s\n%s\n", static_cast<unsigned long>(seed),
                    c.str().c_str(), fuzz::to_cpp(p).c_str(), why.c_str());
      }
    }
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("fuzz: %ld programs, %ld runs (program x options), %ld failures, %.1f s\n",
              static_cast<long>(programs), static_cast<long>(runs), static_cast<long>(failures), s);
  return failures == 0 ? 0 : 1;
}
