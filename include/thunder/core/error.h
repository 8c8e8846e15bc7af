// thunder::Error: the one exception type for user errors. Messages name the op
// and the offending value, e.g. "ltorch.matmul: shapes [3, 4] and [5, 6] cannot
// be multiplied (4 != 5)".
//
// thunder::InternalError: a broken invariant of thunder itself (a pass produced
// a trace another pass cannot handle, a registry holds two kernels for one
// symbol). It is a different type on purpose: callers that catch
// thunder::Error to report a bad input must not swallow a thunder bug, and a
// bug report should say where it happened. Raise it with
// THUNDER_INTERNAL_CHECK; never for something a user's input can cause.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace thunder {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& what) : std::logic_error(what) {}
};

// Throws thunder::Error with a fmt-formatted message.
template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format(f, std::forward<Args>(args)...));
}

// Throws thunder::InternalError with the message
// "thunder internal error (please report): <message> (at file:line)".
template <typename... Args>
[[noreturn]] void internal_fail(const char* file, int line, fmt::format_string<Args...> f,
                                Args&&... args) {
  throw InternalError(fmt::format("thunder internal error (please report): {} (at {}:{})",
                                  fmt::format(f, std::forward<Args>(args)...), file, line));
}

}  // namespace thunder

// Checks a user-facing condition; the message is only formatted on failure.
#define THUNDER_CHECK(cond, ...)               \
  do {                                         \
    if (!(cond)) ::thunder::fail(__VA_ARGS__); \
  } while (0)

// Checks an invariant of thunder's own code (see InternalError above); the
// message is only formatted on failure.
#define THUNDER_INTERNAL_CHECK(cond, ...)                                   \
  do {                                                                      \
    if (!(cond)) ::thunder::internal_fail(__FILE__, __LINE__, __VA_ARGS__); \
  } while (0)
