// The ATen executor: the kernel table and the two claiming policies.
#include <mutex>

#include "aten_util.h"
#include "thunder/lang/ltorch.h"

namespace thunder::aten {
namespace {

std::vector<Kernel>& table() {
  static std::vector<Kernel> t;
  return t;
}

void ensure_registered() {
  static std::once_flag once;
  std::call_once(once, [] {
    ltorch::ensure_registered();
    detail::register_elementwise();
    detail::register_reduction();
    detail::register_shape();
    detail::register_indexing();
    detail::register_nn();
    detail::register_factory();
    detail::register_random();
    detail::register_inplace();
    detail::register_backward();
    detail::register_opaque();
  });
}

class AtenExecutor : public Executor {
 public:
  explicit AtenExecutor(bool prims_only) : prims_only_(prims_only) {}
  std::string_view name() const override { return prims_only_ ? "aten_prims" : "aten"; }
  bool can_claim(const BoundSymbol& b) const override {
    if (prims_only_ && !b.sym->is_prim) return false;
    return kernel_for(*b.sym) != nullptr;
  }
  Kernel kernel(const BoundSymbol& b) const override { return kernel_for(*b.sym); }
  std::shared_ptr<const void> kernel_state(const BoundSymbol& b) const override {
    return detail::opaque_state(b);
  }

 private:
  bool prims_only_;
};

}  // namespace

Kernel kernel_for(const Symbol& sym) {
  ensure_registered();
  const auto& t = table();
  return sym.index >= 0 && static_cast<size_t>(sym.index) < t.size() ? t[sym.index] : nullptr;
}

void run_eager(const Symbol& sym, const Instr& instr, at::Tensor* tensors, c10::Scalar* numbers) {
  Kernel k = kernel_for(sym);
  THUNDER_CHECK(k != nullptr, "{}: has no ATen kernel", sym.id);
  KernelCall call(instr, tensors, numbers);
  k(call);
}

Executor& aten_executor() {
  static AtenExecutor e(false);
  return e;
}
Executor& aten_prims_executor() {
  static AtenExecutor e(true);
  return e;
}

namespace detail {

void register_kernel(std::string_view id, Kernel k) {
  const Symbol& s = symbol_registry().get(id);
  auto& t = table();
  if (t.size() <= static_cast<size_t>(s.index)) t.resize(s.index + 1, nullptr);
  THUNDER_INTERNAL_CHECK(t[s.index] == nullptr, "aten executor: '{}' has two kernels", id);
  t[s.index] = k;
}

at::Tensor tensor_or_wrapped(const KernelCall& k, size_t i) {
  if (k.is_tensor(i)) return k.tensor(i);
  at::Tensor t = c10::scalar_to_tensor(k.scalar(i));
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

}  // namespace detail
}  // namespace thunder::aten
