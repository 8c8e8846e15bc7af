// THUNDER_INTERNAL_CHECK: a broken invariant of thunder is an InternalError,
// never a thunder::Error (which callers catch to report bad input).
#include <gtest/gtest.h>

#include <string>

#include "thunder/core/error.h"

namespace thunder {
namespace {

void broken_invariant(int slot) {
  THUNDER_INTERNAL_CHECK(slot >= 0, "lower: slot {} is negative", slot);
}

TEST(InternalError, InternalCheckThrowsInternalErrorNotError) {
  EXPECT_NO_THROW(broken_invariant(0));
  try {
    broken_invariant(-1);
    FAIL() << "expected thunder::InternalError";
  } catch (const Error&) {
    FAIL() << "an internal check must not throw the user-error type";
  } catch (const InternalError& e) {
    std::string m = e.what();
    EXPECT_EQ(m.rfind("thunder internal error (please report): lower: slot -1 is negative (at ", 0),
              0u)
        << m;
    EXPECT_NE(m.find("test_internal_error.cpp:"), std::string::npos) << m;
  }
  EXPECT_THROW(broken_invariant(-2), std::logic_error);
}

TEST(InternalError, UserChecksStayErrors) {
  EXPECT_THROW(THUNDER_CHECK(false, "ltorch.add: bad {}", 1), Error);
}

}  // namespace
}  // namespace thunder
