// Shared helpers for defining prims (private to src/prims).
#pragma once

#include <string>
#include <vector>

#include "thunder/core/error.h"
#include "thunder/core/tracing.h"
#include "thunder/prims/prims.h"

namespace thunder::prims::detail {

// Registers a prim with a meta function.
void define(std::string id, std::vector<std::string> params, uint32_t tags, MetaFn meta);

// A fresh output tensor proxy in the active trace.
ProxyPtr new_tensor(Shape shape, DType dtype, Device device);
// The same, named with its own prefix ("seed0") instead of "t".
ProxyPtr new_named_tensor(const std::string& prefix, Shape shape, DType dtype, Device device);

// Calls a prim by id (the wrappers' one-liner).
Value call(const Symbol& sym, std::vector<Value> args);

// Throws naming `op` if a size is negative.
void check_shape(const char* op, const Shape& shape);

// Normalises a dim against a rank (negative counts from the end); throws naming `op`.
int64_t canonical_dim(const std::string& op, int64_t dim, int64_t rank);

// The per-family registration functions, called once by ensure_registered().
void register_elementwise();
void register_shape();
void register_reduction();
void register_linalg();
void register_indexing();
void register_factory();
void register_random();
void register_inplace();
void register_distributed();
void register_aten_call();

}  // namespace thunder::prims::detail

// Defines a wrapper's body: looks the prim up once, then calls it.
#define THUNDER_PRIM_CALL(id, ...)                                     \
  static const ::thunder::Symbol& sym_ = ::thunder::prims::symbol(id); \
  return ::thunder::prims::detail::call(sym_, {__VA_ARGS__})
