// Helpers for writing ATen kernels (private to src/executors).
#pragma once

#include <ATen/ATen.h>

#include "thunder/core/error.h"
#include "thunder/executors/aten.h"

namespace thunder::aten::detail {

// Registers the ATen kernel of a symbol (prim or ltorch) by id.
void register_kernel(std::string_view id, Kernel k);

// Operand i as a tensor; a number becomes a wrapped-number tensor, which
// gives libtorch's Python-number promotion semantics.
at::Tensor tensor_or_wrapped(const KernelCall& k, size_t i);

// The per-family registration functions, called once.
void register_elementwise();
void register_reduction();
void register_shape();
void register_indexing();
void register_nn();
void register_factory();
void register_random();
void register_inplace();
void register_backward();
void register_opaque();
// The lowered state of an aten.call statement (aten_opaque.cpp); none for others.
std::shared_ptr<const void> opaque_state(const BoundSymbol& b);
// ltorch halves of the shape and factory families (written by their owners).
void register_shape_ltorch();
void register_factory_ltorch();

}  // namespace thunder::aten::detail

// `KERNEL(id) { body using k }` registers a captureless kernel lambda.
#define THUNDER_KERNEL(id, ...) \
  ::thunder::aten::detail::register_kernel(id, [](::thunder::KernelCall & k) __VA_ARGS__)
