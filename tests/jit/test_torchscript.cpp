// thunder::jit on TorchScript modules made as users make them (define, then
// save and load): the inlined forward graph is interpreted with our own
// interpreter under capture. Branches on attributes, unrolled loops, lists
// and tuples, submodules and training with torch::optim, against the same
// module run by TorchScript; attributes guarded by value; data-dependent
// control flow and attribute writes refused by name.
#include <gtest/gtest.h>
#include <thunder/thunder.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <filesystem>

#include "script_char_gpt.h"
#include "trace_statements.h"

namespace thunder {
namespace {

torch::jit::Module script(const std::string& name, const std::string& source) {
  torch::jit::Module m(name);
  m.register_attribute("training", c10::BoolType::get(), true);
  m.define(source);
  return m;
}

// Saved and loaded back, as a user's model.pt: the module jit sees, and a
// second copy of it that TorchScript runs as the reference.
std::pair<torch::jit::Module, torch::jit::Module> load_twice(const torch::jit::Module& m,
                                                             const std::string& file) {
  const std::string path = (std::filesystem::temp_directory_path() / file).string();
  m.save(path);
  std::pair<torch::jit::Module, torch::jit::Module> loaded{torch::jit::load(path),
                                                           torch::jit::load(path)};
  std::filesystem::remove(path);
  return loaded;
}
torch::jit::Module round_trip(const torch::jit::Module& m, const std::string& file) {
  return load_twice(m, file).first;
}

at::Tensor eager(torch::jit::Module& m, const at::Tensor& x) { return m.forward({x}).toTensor(); }

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no thunder::Error";
}

TEST(TorchScript, IfOnTheTrainingFlagTracesOneBranch) {
  auto m = round_trip(script("Branchy", R"(
def forward(self, x):
    if self.training:
        return torch.tanh(x) * 2.0
    return torch.sigmoid(x) + 1.0
)"),
                      "thunder_script_branchy.pt");
  auto js = jit(m);
  at::Tensor x = torch::randn({3, 4}, torch::kDouble);
  EXPECT_TRUE(at::allclose(js(x), torch::tanh(x) * 2.0, 1e-12, 1e-12));
  std::string trace = last_traces(js).front().str();
  EXPECT_NE(trace.find("ltorch.tanh"), std::string::npos) << trace;
  EXPECT_EQ(trace.find("sigmoid"), std::string::npos) << trace;
  m.eval();
  EXPECT_TRUE(at::allclose(js(x), torch::sigmoid(x) + 1.0, 1e-12, 1e-12));
  trace = last_traces(js).front().str();
  EXPECT_NE(trace.find("ltorch.sigmoid"), std::string::npos) << trace;
  EXPECT_EQ(trace.find("tanh"), std::string::npos) << trace;
  m.train();
  js(x);
  EXPECT_EQ(cache_misses(js), 2);
  EXPECT_EQ(cache_hits(js), 1);
}

// A loop over range(self.depth) is unrolled into the trace; the int, float
// and list attributes it reads are guarded by value, so changing one
// compiles a new entry instead of reusing the old constants.
TEST(TorchScript, ConstantTripLoopIsUnrolledAndAttributesAreGuarded) {
  torch::jit::Module made("Looped");
  made.register_attribute("training", c10::BoolType::get(), true);
  made.register_attribute("depth", c10::IntType::get(), int64_t{3});
  made.register_attribute("scale", c10::FloatType::get(), 0.5);
  made.register_attribute("dims", c10::ListType::ofInts(), c10::List<int64_t>({1}));
  made.register_parameter("w", torch::randn({4}, torch::kDouble).requires_grad_(), false);
  made.define(R"(
def forward(self, x):
    for i in range(self.depth):
        x = torch.tanh(x * self.w) * self.scale + i
    return x.sum(self.dims, keepdim=True) * x
)");
  auto [m, reference] = load_twice(made, "thunder_script_looped.pt");
  auto js = jit(m);
  at::Tensor x = torch::randn({2, 4}, torch::kDouble);
  at::Tensor got = js(x), want = eager(reference, x);
  EXPECT_TRUE(at::allclose(got, want, 1e-12, 1e-12)) << got << want;
  EXPECT_EQ(count(last_traces(js).front().str(), "ltorch.tanh("), 3u) << last_traces(js).front();
  got.sum().backward();
  want.sum().backward();
  at::Tensor gw = m.attr("w").toTensor().grad(), ew = reference.attr("w").toTensor().grad();
  ASSERT_TRUE(gw.defined());
  EXPECT_TRUE(at::allclose(gw, ew, 1e-12, 1e-12)) << gw << ew;

  struct Change {
    const char* name;
    c10::IValue value;
  };
  const std::vector<Change> changes = {
      {"depth", int64_t{2}}, {"scale", 0.25}, {"dims", c10::List<int64_t>({0, 1})}};
  int64_t misses = 1;
  for (const auto& c : changes) {
    m.setattr(c.name, c.value);
    reference.setattr(c.name, c.value);
    torch::NoGradGuard no_grad;
    EXPECT_TRUE(at::allclose(js(x), eager(reference, x), 1e-12, 1e-12)) << c.name;
    EXPECT_EQ(cache_misses(js), ++misses) << c.name;
  }
  EXPECT_EQ(count(last_traces(js).front().str(), "ltorch.tanh("), 2u);
  EXPECT_NE(last_prologue_trace(js).str().find("prologue.check_module_identities()"),
            std::string::npos)
      << last_prologue_trace(js);
}

// An Optional[Tensor] attribute tested with `is not None` (TorchScript
// refines it with prim::unchecked_cast): None and a tensor are separate
// entries, each with its own branch traced.
TEST(TorchScript, OptionalTensorAttributeTakesItsBranch) {
  torch::jit::Module m("MaybeBias");
  m.register_attribute("training", c10::BoolType::get(), true);
  m.register_attribute("bias", c10::OptionalType::create(c10::TensorType::get()), c10::IValue());
  m.define(R"(
def forward(self, x):
    bias = self.bias
    if bias is not None:
        return torch.relu(x + bias)
    return torch.relu(x)
)");
  auto js = jit(m);
  at::Tensor x = torch::randn({2, 3});
  EXPECT_TRUE(at::allclose(js(x), torch::relu(x)));
  at::Tensor b = torch::full({3}, 0.5);
  m.setattr("bias", b);
  EXPECT_TRUE(at::allclose(js(x), torch::relu(x + b)));
  EXPECT_EQ(cache_misses(js), 2);
  js(x);
  EXPECT_EQ(cache_hits(js), 1);
  {
    at::NoGradGuard no_grad;
    b.fill_(-1.0);  // the same tensor, updated: read at call time
  }
  EXPECT_TRUE(at::allclose(js(x), torch::relu(x + b)));
  EXPECT_EQ(cache_misses(js), 2);
}

// `if x.sum() > 0` depends on the data: refused where TorchScript converts
// the tensor to a bool, naming that node and the script line; the callable
// stays usable for a module whose branch does not depend on data.
TEST(TorchScript, DataDependentControlFlowIsRefusedByName) {
  auto m = round_trip(script("Datadep", R"(
def forward(self, x):
    if x.sum() > 0:
        return x * 2.0
    return x - 1.0
)"),
                      "thunder_script_datadep.pt");
  auto js = jit(m);
  at::Tensor x = torch::ones({3});
  const std::string what = error_of([&] { js(x); });
  EXPECT_NE(what.find("aten::Bool"), std::string::npos) << what;
  EXPECT_NE(what.find("tensor's data"), std::string::npos) << what;
  EXPECT_NE(what.find("x.sum() > 0"), std::string::npos) << what;  // the script line
  EXPECT_TRUE(at::equal(x, torch::ones({3})));
  EXPECT_NE(error_of([&] { js(x); }).find("aten::Bool"), std::string::npos);
}

// A forward that assigns an attribute (a call counter) would do it once, at
// capture: refused before it runs, the attribute left as it was.
TEST(TorchScript, AssigningAnAttributeIsRefused) {
  torch::jit::Module m("Counting");
  m.register_attribute("training", c10::BoolType::get(), true);
  m.register_attribute("calls", c10::IntType::get(), int64_t{0});
  m.define(R"(
def forward(self, x):
    self.calls += 1
    return x + 1.0
)");
  auto js = jit(m);
  const std::string what = error_of([&] { js(torch::zeros({2})); });
  EXPECT_NE(what.find("prim::SetAttr"), std::string::npos) << what;
  EXPECT_NE(what.find("'calls'"), std::string::npos) << what;
  EXPECT_EQ(m.attr("calls").toInt(), 0);
}

torch::jit::Module linear(int64_t in, int64_t out) {
  torch::jit::Module m("Lin");
  m.register_attribute("training", c10::BoolType::get(), true);
  m.register_parameter(
      "weight", (torch::randn({out, in}, torch::kDouble) / std::sqrt(in)).requires_grad_(), false);
  m.register_parameter("bias", (torch::randn({out}, torch::kDouble) * 0.1).requires_grad_(), false);
  m.define(R"(
def forward(self, x):
    return torch.matmul(x, self.weight.t()) + self.bias
)");
  return m;
}

// Submodules called as self.fc1.forward(x) (inlined), lists and tuples
// (chunk, cat, size), dropout switched by the training flag: three SGD steps
// in float64 equal TorchScript's own, on every parameter.
TEST(TorchScript, SubmodulesTrainWithSgdLikeTorchScript) {
  torch::manual_seed(7);
  torch::jit::Module made("Mlp");
  made.register_attribute("training", c10::BoolType::get(), true);
  made.register_attribute("p", c10::FloatType::get(), 0.0);
  made.register_module("fc1", linear(6, 8));
  made.register_module("fc2", linear(8, 3));
  made.define(R"(
def forward(self, x):
    h = torch.relu(self.fc1.forward(x))
    a, b = torch.chunk(h, 2, 1)
    h = torch.cat([b * 0.5, a], 1)
    h = torch.dropout(h, self.p, self.training)
    n = x.size(0)
    return self.fc2.forward(h).reshape(n, -1)
)");
  auto [m, reference] = load_twice(made, "thunder_script_mlp.pt");
  auto params = [](torch::jit::Module& mod) {
    std::vector<at::Tensor> out;
    for (const auto& p : mod.parameters()) out.push_back(p);
    return out;
  };
  ASSERT_EQ(params(m).size(), 4u);
  torch::optim::SGD opt(params(m), torch::optim::SGDOptions(0.1));
  torch::optim::SGD ref_opt(params(reference), torch::optim::SGDOptions(0.1));
  auto js = jit(m);
  for (int step = 0; step < 3; ++step) {
    at::Tensor x = torch::randn({5, 6}, torch::kDouble);
    opt.zero_grad();
    ref_opt.zero_grad();
    at::Tensor loss = js(x).pow(2).mean(), ref_loss = eager(reference, x).pow(2).mean();
    EXPECT_TRUE(at::allclose(loss, ref_loss, 1e-12, 1e-12)) << step;
    loss.backward();
    ref_loss.backward();
    opt.step();
    ref_opt.step();
  }
  auto named = [](torch::jit::Module& mod) {
    std::vector<std::pair<std::string, at::Tensor>> out;
    for (const auto& p : mod.named_parameters()) out.emplace_back(p.name, p.value);
    return out;
  };
  const auto got = named(m), want = named(reference);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].first, want[i].first);
    EXPECT_TRUE(at::allclose(got[i].second, want[i].second, 1e-12, 1e-12)) << got[i].first;
  }
  EXPECT_EQ(cache_misses(js), 1);
  EXPECT_EQ(cache_hits(js), 2);
  const std::string trace = last_traces(js).front().str();
  EXPECT_NE(trace.find("t_fc1_weight"), std::string::npos) << trace;
  EXPECT_NE(trace.find("ltorch.cat"), std::string::npos) << trace;
}

// examine walks the graph with jit's interpreter: the aten ops the script
// calls (not TorchScript's profiling nodes), each translated.
TEST(TorchScript, ExamineReportsTheScriptsOps) {
  auto m = round_trip(script("Examined", R"(
def forward(self, x):
    y = torch.tanh(x)
    for i in range(2):
        y = y * x
    return torch.softmax(y, -1)
)"),
                      "thunder_script_examined.pt");
  ExamineReport r = examine(m, torch::randn({2, 3}));
  EXPECT_TRUE(r.all_supported()) << r;
  for (const char* op : {"aten::tanh", "aten::mul.Tensor", "aten::softmax.int"})
    EXPECT_NE(r.str().find(op), std::string::npos) << op << "\n" << r;
  EXPECT_EQ(r.str().find("prim::"), std::string::npos) << r;
}

// The demo's char-GPT as a TorchScript module (examples/script_char_gpt.h):
// three AdamW steps in float64 give the torch::nn model's eager losses and
// gradients, on every parameter, with one compile.
TEST(TorchScript, CharGptTrainsLikeTheTorchNnModel) {
  torch::manual_seed(4);
  models::TorchCharGPT eager(11, 8, 16, 2, 2);
  eager->to(torch::kDouble);
  torch::jit::Module scripted = models::script_char_gpt(eager);
  std::vector<at::Tensor> pj;
  for (const auto& p : scripted.parameters()) pj.push_back(p);
  auto pe = eager->parameters();
  ASSERT_EQ(pj.size(), pe.size());
  auto js = jit(scripted);
  torch::optim::AdamW opt_e(pe, torch::optim::AdamWOptions(3e-3));
  torch::optim::AdamW opt_j(pj, torch::optim::AdamWOptions(3e-3));
  for (int step = 0; step < 3; ++step) {
    at::Tensor idx = torch::randint(11, {3, 8}, torch::kLong);
    at::Tensor targets = torch::randint(11, {3, 8}, torch::kLong);
    opt_e.zero_grad();
    opt_j.zero_grad();
    at::Tensor le = eager(idx, targets), lj = js(idx, targets);
    EXPECT_TRUE(at::allclose(lj, le, 1e-12, 1e-12)) << step << ": " << lj << " vs " << le;
    le.backward();
    lj.backward();
    for (size_t i = 0; i < pe.size(); ++i) {
      ASSERT_TRUE(pj[i].grad().defined()) << "parameter " << i;
      EXPECT_TRUE(at::allclose(pj[i].grad(), pe[i].grad(), 1e-10, 1e-10)) << "parameter " << i;
    }
    opt_e.step();
    opt_j.step();
  }
  EXPECT_EQ(cache_misses(js), 1);
  EXPECT_EQ(cache_hits(js), 2);
  const std::string first = last_traces(js).front().str();
  for (const char* name : {"t_wte_weight", "t_h1_fc_out_bias", "t_lm_head_weight"})
    EXPECT_NE(first.find(name), std::string::npos) << name;
  // Each layer's hand-written attention (its mask `ones.triu(1) > 0.5`) ran
  // as one fused attention.
  const std::vector<Trace> stages = last_traces(js);
  const Trace& recognized = find_stage(stages, "Recognize attention");
  EXPECT_EQ(test_util::count_statements(recognized, "ltorch.scaled_dot_product_attention"), 2)
      << recognized;
}

}  // namespace
}  // namespace thunder
