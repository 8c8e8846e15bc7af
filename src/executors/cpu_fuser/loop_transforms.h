// Transformations of the loop IR (loop_ir.h), run by codegen.cpp between
// building a region's nests and printing them:
//
//   fuse_rows         several nests over the same rows -> one row loop whose
//                     reduction results stay in registers
//   hoist_invariants  values that do not depend on a loop's index move before it
//   tile_draws        Philox draws read at a loop's own index are filled a tile
//                     at a time before the element loop
//   parallelize       each nest's OpenMP chunking, from the work it does
//
// docs/fusion.md shows each on an example.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "loop_ir.h"

namespace thunder::cpu_fuser::ir {

// Moves each `Let` out of every loop (innermost first, as far as it goes)
// when it reads neither the loop's index nor anything the loop defines or
// assigns. Expressions are pure, so this changes no value; it runs them
// once per enclosing iteration instead of once per inner iteration.
Block hoist_invariants(const Block& block);

// Merges nests that each are one loop over the same rows (the same index
// variable and range) into one nest: the loop bodies one after another,
// index Lets that repeat dropped, and every later load of a buffer at the
// index a body stored it replaced by the stored value; stores into
// `scratch` buffers then disappear. Refused (nullopt, with the reason in
// `why`) when a stored buffer is read at another index (another row's
// result), or the nests are not loops over the same rows.
std::optional<Nest> fuse_rows(const std::vector<Nest>& nests, const std::set<std::string>& scratch,
                              std::string& why);

// Splits `loop` into tiles of `size` iterations: a loop over tile starts
// `tile_var` with the end of each tile in `end_var` (the last may be
// shorter), around the loop over the tile's iterations.
Loop tile_loop(const Loop& loop, int64_t size, const std::string& tile_var,
               const std::string& end_var);

// In every vector loop, a draw philox_uniform_*(key, counter, base + i, lo,
// hi) at the loop's own index i, with the other arguments fixed in the
// loop, becomes a read of a tile that philox_fill_* fills before the loop
// (one Philox block per counter instead of one per element). A loop with a
// constant range up to `max_whole` iterations is one tile; a longer or
// variable one is first split by tile_loop into tiles of `size`. New names
// are numbered from `names`.
Block tile_draws(const Block& block, int64_t size, int64_t max_whole, int& names);

// Sets the nest's chunking: on the calling thread when its work is below
// `min_work` elements or its range is one iteration, else chunks of about
// `chunk_work` elements; a range known only at run time (a flat loop's n)
// decides at run time, one element per iteration.
void parallelize(Nest& nest, int64_t min_work, int64_t chunk_work);

}  // namespace thunder::cpu_fuser::ir
