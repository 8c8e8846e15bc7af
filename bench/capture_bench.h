// The `capture` section of thunder_bench (capture_bench.cpp).
#pragma once

namespace thunder::bench {

// Plain libtorch code under thunder::jit: a captured function's cache-hit
// cost next to the thunder-written one, and the plain-libtorch char-GPT's
// first call (capture) next to one eager forward.
void capture_costs();

}  // namespace thunder::bench
