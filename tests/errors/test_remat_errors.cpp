// Rematerialization policies: bad symbol ids are errors that name them.
#include <gtest/gtest.h>
#include <thunder/thunder.h>

namespace thunder {
namespace {

TEST(RematErrors, AddTagsToUnknownSymbolNamesIt) {
  try {
    add_tags("ltorch.no_such_op", {OpTag::DONT_RECOMPUTE_IN_BACKWARD});
    FAIL() << "expected thunder::Error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "add_tags: unknown symbol 'ltorch.no_such_op'");
  }
  EXPECT_THROW(add_tags("dropout", std::vector<OpTag>{OpTag::RECOMPUTE_IN_BACKWARD}), Error);
}

}  // namespace
}  // namespace thunder
