// The executor registry: names to executors.
#include "thunder/core/error.h"
#include "thunder/executors/executor.h"

namespace thunder {
namespace aten {
Executor& aten_executor();
Executor& aten_prims_executor();
}  // namespace aten
namespace cpu_fuser {
Executor& cpu_fuser_executor();
}
namespace dnnl {
Executor& dnnl_executor();
}
namespace attention {
Executor& attention_executor();
}
namespace c10d_executor {
Executor& c10d_executor();
}

namespace {
std::vector<Executor*> all_executors() {
  return {&cpu_fuser::cpu_fuser_executor(), &dnnl::dnnl_executor(),
          &attention::attention_executor(), &aten::aten_executor(),
          &aten::aten_prims_executor(),     &c10d_executor::c10d_executor()};
}
}  // namespace

Executor& executor_by_name(std::string_view name) {
  for (Executor* e : all_executors())
    if (e->name() == name) return *e;
  std::string known;
  for (const auto& n : executor_names()) known += (known.empty() ? "" : ", ") + n;
  fail("JitOptions: unknown executor '{}' (known executors: {})", name, known);
}

std::vector<std::string> executor_names() {
  std::vector<std::string> out;
  for (Executor* e : all_executors()) out.emplace_back(e->name());
  return out;
}

}  // namespace thunder
