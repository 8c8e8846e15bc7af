// The dispatch key plain-libtorch capture runs on, and its boxed fallback.
// This is the one file that names the key. It must be a functionality key
// above autograd whose fallback libtorch_cpu leaves free (1.13 takes Python*,
// Functionalize, Named, Conjugate, Negative, ZeroTensor, ADInplaceOrView,
// Tracer, Autocast*, FuncTorch*, Batched and VmapMode); PrivateUse1 belongs to
// out-of-tree backends. Being above autograd and every composite, the fallback
// sees the ops as user code calls them (aten::linear, not its addmm).
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/library.h>

#include <exception>
#include <mutex>
#include <utility>

#include "capture_session.h"

namespace thunder::detail {

namespace {

constexpr c10::DispatchKey kCaptureKey = c10::DispatchKey::TESTING_ONLY_GenericMode;

void capture_fallback(const c10::OperatorHandle& op, c10::DispatchKeySet ks,
                      torch::jit::Stack* stack) {
  // Before anything allocates or dispatches: the op's own kernels, and
  // whatever the translation does, must not come back here.
  c10::impl::ExcludeDispatchKeyGuard off(kCaptureKey);
  try {
    on_captured_op(op, ks.remove(kCaptureKey), stack);
  } catch (const Error&) {
    capture_error() = std::current_exception();  // see take_capture_error
    throw;
  }
}

void register_fallback() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Lives as long as the process: the registration ends with the Library.
    static auto* lib =
        new torch::Library(torch::Library::IMPL, "_", kCaptureKey, __FILE__, __LINE__);
    lib->fallback(torch::CppFunction::makeFromBoxedFunction<&capture_fallback>());
  });
}

}  // namespace

std::exception_ptr& capture_error() {
  thread_local std::exception_ptr e;
  return e;
}

std::exception_ptr take_capture_error() { return std::exchange(capture_error(), nullptr); }

CaptureKeyOn::CaptureKeyOn() : guard_((register_fallback(), kCaptureKey)) {}
CaptureKeyOn::~CaptureKeyOn() = default;

CaptureKeyOff::CaptureKeyOff() : guard_(kCaptureKey) {}
CaptureKeyOff::~CaptureKeyOff() = default;

}  // namespace thunder::detail
