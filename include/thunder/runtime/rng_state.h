// The RNG state behind prims.get_and_update_rng_state: the Philox key and
// first counter of each draw a jitted program makes. The state is libtorch's
// default generator of the device, so torch::manual_seed(s) makes jitted draws
// reproducible, and jitted and eager draws advance one shared stream.
//
// The CPU generator (a Mersenne Twister) carries no Philox counter, so each
// draw takes a fresh 64-bit key from it, under its lock, and starts at counter
// 0. Distinct keys select independent Philox streams, so draws never overlap,
// and nothing is cached on thunder's side: re-seeding (even with the same
// seed) or restoring the generator's state replays the same keys, exactly as
// it replays an eager random op. (A generator that carries a Philox offset,
// like CUDA's, would hand out its (seed, offset) and advance the offset by
// `counters`; this build runs on the CPU only.)
#pragma once

#include <cstdint>

#include "thunder/core/device.h"

namespace thunder {

struct PhiloxState {
  uint64_t seed;
  uint64_t offset;
};

// The state for a draw that consumes `counters` counters on `device`, advancing
// the device's generator. Throws thunder::Error for a device without one.
PhiloxState get_and_update_rng_state(Device device, int64_t counters);

}  // namespace thunder
