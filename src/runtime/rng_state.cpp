#include "thunder/runtime/rng_state.h"

#include <ATen/CPUGeneratorImpl.h>

#include <mutex>

#include "thunder/core/error.h"

namespace thunder {

PhiloxState get_and_update_rng_state(Device device, int64_t counters) {
  THUNDER_CHECK(device.type == Device::Type::CPU,
                "prims.get_and_update_rng_state: no RNG state for device {} in this build",
                device.str());
  at::Generator gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  return {at::check_generator<at::CPUGeneratorImpl>(gen)->random64(), 0};
}

}  // namespace thunder
