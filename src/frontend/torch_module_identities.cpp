// add_torch_module_identities (jit.h): a torch::nn module's registered
// tensors and submodules, read on every call without allocating.
//
// torch::nn::Module's accessors (named_parameters, children, ...) build new
// containers on each call, and the dicts behind them are not public (in
// libtorch 1.13 parameters_ is protected, buffers_ and children_ private).
// An explicit template instantiation may name a private member (C++
// [temp.spec]/6), which lets this one file take member pointers to the three
// dicts; their types are checked against the header we compile with.
#include <torch/nn/module.h>

#include "thunder/frontend/jit.h"

namespace thunder::detail {

namespace {

using TensorDict = torch::OrderedDict<std::string, at::Tensor>;
using ModuleDict = torch::OrderedDict<std::string, std::shared_ptr<torch::nn::Module>>;

// Tag::type is the member pointer type; member(Tag) returns the pointer.
template <typename Tag, typename Tag::type Member>
struct Expose {
  friend typename Tag::type member(Tag) { return Member; }
};

struct Parameters {
  using type = TensorDict torch::nn::Module::*;
  friend type member(Parameters);
};
struct Buffers {
  using type = TensorDict torch::nn::Module::*;
  friend type member(Buffers);
};
struct Children {
  using type = ModuleDict torch::nn::Module::*;
  friend type member(Children);
};

template struct Expose<Parameters, &torch::nn::Module::parameters_>;
template struct Expose<Buffers, &torch::nn::Module::buffers_>;
template struct Expose<Children, &torch::nn::Module::children_>;

void add_tensors(const TensorDict& d, GuardSignature& sig) {
  sig.add(static_cast<int64_t>(d.size()));
  for (const auto& item : d)
    sig.add(reinterpret_cast<intptr_t>(item.value().unsafeGetTensorImpl()));
}

}  // namespace

void add_torch_module_identities(const torch::nn::Module& m, GuardSignature& sig) {
  sig.add(m.is_training());
  add_tensors(m.*member(Parameters{}), sig);
  add_tensors(m.*member(Buffers{}), sig);
  const ModuleDict& children = m.*member(Children{});
  sig.add(static_cast<int64_t>(children.size()));
  for (const auto& item : children) {
    sig.add(reinterpret_cast<intptr_t>(item.value().get()));
    add_torch_module_identities(*item.value(), sig);
  }
}

}  // namespace thunder::detail
