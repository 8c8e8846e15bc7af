// Executors: who runs each statement of a trace. The claiming pass walks the
// executors in priority order; an executor may claim a whole composite (its
// own kernel), else the statement is replaced by its decomposition and the
// walk repeats on the subsymbols.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "thunder/core/trace.h"
#include "thunder/executors/kernel.h"

namespace thunder {

class Executor {
 public:
  virtual ~Executor() = default;
  virtual std::string_view name() const = 0;
  // Can this executor run the statement as one kernel?
  virtual bool can_claim(const BoundSymbol& b) const = 0;
  // The kernel of a statement this executor claimed.
  virtual Kernel kernel(const BoundSymbol& b) const = 0;
};

// Looks an executor up by name; throws thunder::Error naming unknown ones and
// listing the known ones.
Executor& executor_by_name(std::string_view name);
std::vector<std::string> executor_names();

}  // namespace thunder
