// The last step of code generation: a loop-IR kernel printed as readable C++
// (one static function per nest, then `extern "C" void thunder_kernel(void*
// const* p, int64_t n)` that runs them). The text has no preamble: the
// caller puts the helpers it calls (vector_math.h) in front.
#pragma once

#include <string>

#include "loop_ir.h"

namespace thunder::cpu_fuser::ir {

std::string print_cpp(const Kernel& kernel);

// One expression or statement list, for tests and messages.
std::string print_expr(const Expr& e);
std::string print_block(const Block& block, int indent);

}  // namespace thunder::cpu_fuser::ir
