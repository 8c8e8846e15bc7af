// thunder::Error: the one exception type for user errors. Messages name the op
// and the offending value, e.g. "ltorch.matmul: shapes [3, 4] and [5, 6] cannot
// be multiplied (4 != 5)".
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace thunder {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// Throws thunder::Error with a fmt-formatted message.
template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace thunder

// Checks a user-facing condition; the message is only formatted on failure.
#define THUNDER_CHECK(cond, ...)         \
  do {                                   \
    if (!(cond)) ::thunder::fail(__VA_ARGS__); \
  } while (0)
