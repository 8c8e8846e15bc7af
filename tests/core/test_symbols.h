// Symbols for hand-built traces in the core tests (ids "test.*"), registered
// once on first use in the process-wide registry.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "thunder/core/error.h"
#include "thunder/core/tracing.h"
#include "thunder/lang/ltorch.h"

namespace thunder::testing {

// A fixture tracing into its own trace: tensor inputs by shape and dtype, and
// a check that a call fails with a message and records nothing.
class TracingTest : public ::testing::Test {
 protected:
  TracingTest() : scope_(trace_) {}
  ProxyPtr in(Shape shape, DType dtype, Device device = Device::cpu()) {
    return scope_.ctx().add_tensor_input("x" + std::to_string(n_++), std::move(shape), dtype,
                                         device, false);
  }
  template <typename F>
  void expect_error(const std::string& needle, F&& f) {
    size_t before = trace_.bsyms.size();
    try {
      f();
      ADD_FAILURE() << "expected thunder::Error mentioning '" << needle << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
          << "message: " << e.what() << "\nexpected: " << needle;
    }
    EXPECT_EQ(trace_.bsyms.size(), before) << needle;
  }

  Trace trace_;
  TracingScope scope_;
  int n_ = 0;
};

inline const Symbol& test_symbol(const std::string& id, bool is_prim, uint32_t tags,
                                 std::function<Value(const OpArgs&)> fn) {
  ltorch::ensure_registered();
  if (const Symbol* s = symbol_registry().find(id)) return *s;
  Symbol s;
  s.id = id;
  s.is_prim = is_prim;
  s.tags = tags;
  (is_prim ? s.meta : s.body) = std::move(fn);
  return symbol_registry().add(std::move(s));
}

inline ProxyPtr fresh(Shape shape, DType dtype = DType::f32) {
  return current_trace_ctx()->new_tensor(std::move(shape), dtype, Device::cpu());
}

// A prim taking anything and returning a cpu f32[2] tensor.
inline Value show(std::vector<Value> args) {
  static const Symbol& s =
      test_symbol("test.show", true, 0, [](const OpArgs&) -> Value { return fresh({2}); });
  return call_symbol(s, std::move(args));
}

// A prim with two outputs: [f32[2], i64[3]].
inline Value two(std::vector<Value> args) {
  static const Symbol& s = test_symbol("test.two", true, 0, [](const OpArgs&) -> Value {
    return Value(std::vector<Value>{fresh({2}), fresh({3}, DType::i64)});
  });
  return call_symbol(s, std::move(args));
}

// A prim with a side effect: no output, tagged DONT_DCE.
inline void sink(std::vector<Value> args) {
  static const Symbol& s = test_symbol("test.sink", true, tag_bits({OpTag::DONT_DCE}),
                                       [](const OpArgs&) -> Value { return Value(); });
  call_symbol(s, std::move(args));
}

// An in-place prim (IN_PLACE): returns a new value for its first argument.
inline Value inplace(const Value& a) {
  static const Symbol& s = test_symbol(
      "test.inplace", true, tag_bits({OpTag::IN_PLACE}),
      [](const OpArgs& a) -> Value { return fresh(a.tensor(0).shape, a.tensor(0).dtype); });
  return call_symbol(s, {a});
}

// A composite that returns its input unchanged.
inline Value identity(const Value& a) {
  static const Symbol& s =
      test_symbol("test.identity", false, 0, [](const OpArgs& a) -> Value { return a[0]; });
  return call_symbol(s, {a});
}

// A composite two levels deep: ltorch.mul(ltorch.add(a, a), 2.0).
inline Value outer(const Value& a) {
  static const Symbol& s = test_symbol("test.outer", false, 0, [](const OpArgs& a) -> Value {
    return ltorch::mul(ltorch::add(a[0], a[0]), 2.0);
  });
  return call_symbol(s, {a});
}

}  // namespace thunder::testing
