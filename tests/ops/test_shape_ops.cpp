// OpInfo samples for shape ops: reshape, view, flatten, transpose, permute,
// unsqueeze, squeeze, expand, contiguous, cat, stack, narrow, select, split,
// chunk, triu, tril, to.
#include "ops/opinfo.h"

namespace thunder::testing {
namespace {
using ShapeOps = OpInfoTest;

using TFL = std::function<TensorList(const Tensor&)>;
using AFL = std::function<std::vector<at::Tensor>(const at::Tensor&)>;

// One input, a list of outputs (split, chunk).
void check_list(const std::string& name, const at::Tensor& x, TFL tf, AFL af) {
  check_sample({name,
                {x},
                [tf](const TensorList& v) { return tf(v[0]); },
                [af](const std::vector<at::Tensor>& v) { return af(v[0]); }});
}

const at::ScalarType kDTypes[] = {at::kFloat, at::kDouble, at::kHalf,
                                  at::kInt,   at::kLong,   at::kBool};

std::string str(at::IntArrayRef v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

TEST_F(ShapeOps, Reshape) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{2, 3, 4}, {6, 4}},
      {{2, 3, 4}, {-1}},
      {{2, 3, 4}, {4, -1, 2}},
      {{2, 3, 4}, {2, 3, 4}},
      {{}, {1}},
      {{}, {}},
      {{1}, {}},
      {{1, 1}, {-1}},
      {{0, 3}, {3, 0}},
      {{0, 3}, {-1}},
      {{0, 3}, {0, 3, 1}},
      {{6}, {1, 6, 1}},
  };
  for (const auto& [from, to] : cases)
    for (auto dt : kDTypes) {
      std::ostringstream os;
      os << "reshape " << str(from) << " -> " << str(to) << " " << dt;
      check1(
          os.str(), make_tensor(from, dt), [to = to](const Tensor& x) { return reshape(x, to); },
          [to = to](const at::Tensor& x) { return at::reshape(x, to); });
      check1(
          "view: " + os.str(), make_tensor(from, dt),
          [to = to](const Tensor& x) { return x.view(to); },
          [to = to](const at::Tensor& x) { return x.view(to); });
    }
  check1(
      "reshape noncontiguous", make_noncontiguous({3, 4, 5}),
      [](const Tensor& x) {
        return x.reshape({5, -1});
      },
      [](const at::Tensor& x) {
        return x.reshape({5, -1});
      });
}

TEST_F(ShapeOps, ReshapeErrors) {
  error1("ltorch.reshape", make_tensor({2, 3}), [](const Tensor& x) { return reshape(x, {4}); });
  error1("ltorch.reshape", make_tensor({2, 3}), [](const Tensor& x) {
    return reshape(x, {5, -1});
  });
  error1("ltorch.reshape", make_tensor({2, 3}), [](const Tensor& x) {
    return reshape(x, {-1, -1});
  });
  error1("ltorch.reshape", make_tensor({2, 3}), [](const Tensor& x) {
    return reshape(x, {-2, -3});
  });
  error1("ltorch.reshape", make_tensor({0, 3}), [](const Tensor& x) {
    return reshape(x, {-1, 0});
  });
  error1("ltorch.reshape", make_tensor({0, 3}), [](const Tensor& x) {
    return reshape(x, {0, -1, 1});
  });
  error1("ltorch.view", make_tensor({2, 3}), [](const Tensor& x) { return view(x, {7}); });
}

TEST_F(ShapeOps, Flatten) {
  const std::vector<std::tuple<std::vector<int64_t>, int64_t, int64_t>> cases = {
      {{2, 3, 4}, 0, -1},  {{2, 3, 4}, 1, 2}, {{2, 3, 4}, 0, 1},
      {{2, 3, 4}, -2, -1}, {{2, 3, 4}, 1, 1}, {{}, 0, -1},
      {{}, 0, 0},          {{0, 3, 2}, 0, 1}, {{5}, 0, 0},
  };
  for (const auto& [shape, s, e] : cases)
    for (auto dt : {at::kFloat, at::kLong, at::kBool})
      check1(
          "flatten " + str(shape) + " " + std::to_string(s) + ".." + std::to_string(e),
          make_tensor(shape, dt), [s = s, e = e](const Tensor& x) { return flatten(x, s, e); },
          [s = s, e = e](const at::Tensor& x) { return at::flatten(x, s, e); });
  check1(
      "flatten noncontiguous", make_noncontiguous({3, 4, 5}),
      [](const Tensor& x) { return x.flatten(); }, [](const at::Tensor& x) { return x.flatten(); });
  error1("ltorch.flatten", make_tensor({2, 3, 4}),
         [](const Tensor& x) { return flatten(x, 2, 1); });
  error1("ltorch.flatten", make_tensor({2, 3, 4}),
         [](const Tensor& x) { return flatten(x, 0, 3); });
}

TEST_F(ShapeOps, TransposePermute) {
  for (auto dt : kDTypes) {
    at::Tensor x = make_tensor({2, 3, 4}, dt);
    for (auto [d0, d1] : std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {-1, 0}, {1, 1}, {2, -2}})
      check1(
          "transpose " + std::to_string(d0) + "," + std::to_string(d1), x,
          [d0 = d0, d1 = d1](const Tensor& x) { return transpose(x, d0, d1); },
          [d0 = d0, d1 = d1](const at::Tensor& x) { return at::transpose(x, d0, d1); });
    for (const std::vector<int64_t>& p :
         {std::vector<int64_t>{2, 0, 1}, {-1, 0, 1}, {0, 1, 2}, {1, 0, -1}})
      check1(
          "permute " + str(p), x, [p](const Tensor& x) { return permute(x, p); },
          [p](const at::Tensor& x) { return x.permute(p); });
  }
  check1(
      "transpose 0-d", make_tensor({}), [](const Tensor& x) { return x.transpose(0, -1); },
      [](const at::Tensor& x) { return x.transpose(0, -1); });
  check1(
      "permute 0-d", make_tensor({}), [](const Tensor& x) { return x.permute({}); },
      [](const at::Tensor& x) { return x.permute({}); });
  check1(
      "transpose noncontiguous", make_noncontiguous({3, 4}),
      [](const Tensor& x) { return x.transpose(0, 1); },
      [](const at::Tensor& x) { return x.transpose(0, 1); });
  check1(
      "transpose empty", make_tensor({0, 4}), [](const Tensor& x) { return x.transpose(0, 1); },
      [](const at::Tensor& x) { return x.transpose(0, 1); });
  error1("ltorch.transpose", make_tensor({2, 3}),
         [](const Tensor& x) { return transpose(x, 0, 2); });
  error1("ltorch.permute", make_tensor({2, 3}), [](const Tensor& x) { return permute(x, {0}); });
  error1("ltorch.permute", make_tensor({2, 3}), [](const Tensor& x) {
    return permute(x, {0, -2});
  });
  error1("ltorch.permute", make_tensor({2, 3}), [](const Tensor& x) { return permute(x, {0, 2}); });
}

TEST_F(ShapeOps, UnsqueezeSqueeze) {
  for (auto dt : kDTypes) {
    at::Tensor x = make_tensor({2, 1, 3, 1}, dt);
    for (int64_t d : {0, 2, 4, -1, -5})
      check1(
          "unsqueeze " + std::to_string(d), x, [d](const Tensor& x) { return unsqueeze(x, d); },
          [d](const at::Tensor& x) { return at::unsqueeze(x, d); });
    check1(
        "squeeze all", x, [](const Tensor& x) { return squeeze(x); },
        [](const at::Tensor& x) { return at::squeeze(x); });
    // A dim whose size is not 1 is left alone.
    for (int64_t d : {1, -1, 0, 2})
      check1(
          "squeeze " + std::to_string(d), x, [d](const Tensor& x) { return squeeze(x, d); },
          [d](const at::Tensor& x) { return at::squeeze(x, d); });
  }
  for (int64_t d : {0, -1}) {
    check1(
        "unsqueeze 0-d", make_tensor({}), [d](const Tensor& x) { return x.unsqueeze(d); },
        [d](const at::Tensor& x) { return x.unsqueeze(d); });
    check1(
        "squeeze 0-d", make_tensor({}), [d](const Tensor& x) { return x.squeeze(d); },
        [d](const at::Tensor& x) { return x.squeeze(d); });
  }
  check1(
      "squeeze nothing to squeeze", make_tensor({2, 3}),
      [](const Tensor& x) { return x.squeeze(); }, [](const at::Tensor& x) { return x.squeeze(); });
  check1(
      "squeeze empty", make_tensor({0, 1}), [](const Tensor& x) { return x.squeeze(); },
      [](const at::Tensor& x) { return x.squeeze(); });
  check1(
      "unsqueeze noncontiguous", make_noncontiguous({3, 4}),
      [](const Tensor& x) { return x.unsqueeze(1); },
      [](const at::Tensor& x) { return x.unsqueeze(1); });
  error1("ltorch.unsqueeze", make_tensor({2, 3}), [](const Tensor& x) { return unsqueeze(x, 3); });
  error1("ltorch.unsqueeze", make_tensor({2, 3}), [](const Tensor& x) { return unsqueeze(x, -4); });
  error1("ltorch.squeeze", make_tensor({2, 1}), [](const Tensor& x) { return squeeze(x, 2); });
}

TEST_F(ShapeOps, ExpandContiguous) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{3, 1}, {3, 4}}, {{3, 1}, {-1, 4}}, {{3, 1}, {2, 3, 4}}, {{3, 1}, {2, -1, -1}},
      {{}, {2, 3}},     {{1}, {0}},        {{3, 4}, {3, 4}},    {{1, 4}, {0, 5, 4}},
  };
  for (const auto& [from, to] : cases)
    for (auto dt : kDTypes)
      check1(
          "expand " + str(from) + " -> " + str(to), make_tensor(from, dt),
          [to = to](const Tensor& x) { return expand(x, to); },
          [to = to](const at::Tensor& x) { return x.expand(to); });
  check1(
      "expand noncontiguous", make_noncontiguous({3, 1}),
      [](const Tensor& x) {
        return x.expand({2, 3, 5});
      },
      [](const at::Tensor& x) {
        return x.expand({2, 3, 5});
      });
  for (auto dt : kDTypes)
    check1(
        "contiguous", make_noncontiguous({3, 4}, dt), [](const Tensor& x) { return contiguous(x); },
        [](const at::Tensor& x) { return x.contiguous(); });
  error1("ltorch.expand", make_tensor({3, 4}), [](const Tensor& x) { return expand(x, {4}); });
  error1("ltorch.expand", make_tensor({3, 4}), [](const Tensor& x) { return expand(x, {3, 5}); });
  error1("ltorch.expand", make_tensor({3, 1}), [](const Tensor& x) {
    return expand(x, {-1, 3, 4});
  });
}

// Several inputs, one output.
void check_n(const std::string& name, const std::vector<at::Tensor>& xs,
             std::function<Tensor(const TensorList&)> tf,
             std::function<at::Tensor(const std::vector<at::Tensor>&)> af) {
  check_sample({name, xs, [tf](const TensorList& v) { return TensorList{tf(v)}; },
                [af](const std::vector<at::Tensor>& v) { return std::vector<at::Tensor>{af(v)}; }});
}

TEST_F(ShapeOps, Cat) {
  for (auto dt : kDTypes)
    for (int64_t dim : {0, 1, -1, -2}) {
      std::vector<at::Tensor> xs = {make_tensor({2, 3}, dt), make_tensor({2, 3}, dt),
                                    make_tensor({2, 3}, dt)};
      check_n(
          "cat dim " + std::to_string(dim), xs, [dim](const TensorList& v) { return cat(v, dim); },
          [dim](const std::vector<at::Tensor>& v) { return at::cat(v, dim); });
    }
  check_n(
      "cat uneven", {make_tensor({2, 3}), make_tensor({2, 5}), make_noncontiguous({2, 1})},
      [](const TensorList& v) { return cat(v, 1); },
      [](const std::vector<at::Tensor>& v) { return at::cat(v, 1); });
  check_n(
      "cat promotes int and float", {make_tensor({2, 3}, at::kLong), make_tensor({1, 3})},
      [](const TensorList& v) { return cat(v); },
      [](const std::vector<at::Tensor>& v) { return at::cat(v); });
  check_n(
      "cat promotes bool and int32",
      {make_tensor({2, 3}, at::kBool), make_tensor({2, 2}, at::kInt)},
      [](const TensorList& v) { return cat(v, 1); },
      [](const std::vector<at::Tensor>& v) { return at::cat(v, 1); });
  check_n(
      "cat half and double", {make_tensor({2}, at::kHalf), make_tensor({3}, at::kDouble)},
      [](const TensorList& v) { return cat(v); },
      [](const std::vector<at::Tensor>& v) { return at::cat(v); });
  check_n(
      "cat skips legacy 1-D empty tensors",
      {make_tensor({2, 3}, at::kInt), make_tensor({0}, at::kDouble), make_tensor({2, 1}, at::kInt)},
      [](const TensorList& v) { return cat(v, 1); },
      [](const std::vector<at::Tensor>& v) { return at::cat(v, 1); });
  check_n(
      "cat of empty tensors", {make_tensor({0, 3}), make_tensor({0, 3})},
      [](const TensorList& v) { return cat(v, 0); },
      [](const std::vector<at::Tensor>& v) { return at::cat(v, 0); });
  check_n(
      "cat one tensor", {make_tensor({2, 3})}, [](const TensorList& v) { return cat(v, 0); },
      [](const std::vector<at::Tensor>& v) { return at::cat(v, 0); });
}

TEST_F(ShapeOps, CatErrors) {
  auto cat_fn = [](int64_t dim) {
    return [dim](const TensorList& v) { return TensorList{cat(v, dim)}; };
  };
  expect_error("ltorch.cat", {make_tensor({2, 3}), make_tensor({3, 3})}, cat_fn(1));
  expect_error("ltorch.cat", {make_tensor({2, 3}), make_tensor({2, 3, 1})}, cat_fn(0));
  expect_error("ltorch.cat", {make_tensor({}), make_tensor({})}, cat_fn(0));
  expect_error("ltorch.cat", {make_tensor({2, 3}), make_tensor({2, 3})}, cat_fn(2));
  expect_error("ltorch.cat", {}, cat_fn(0));
}

TEST_F(ShapeOps, Stack) {
  for (auto dt : kDTypes)
    for (int64_t dim : {0, 1, 2, -1, -3}) {
      std::vector<at::Tensor> xs = {make_tensor({2, 3}, dt), make_noncontiguous({2, 3}, dt)};
      check_n(
          "stack dim " + std::to_string(dim), xs,
          [dim](const TensorList& v) { return stack(v, dim); },
          [dim](const std::vector<at::Tensor>& v) { return at::stack(v, dim); });
    }
  check_n(
      "stack 0-d", {make_tensor({}), make_tensor({}), make_tensor({})},
      [](const TensorList& v) { return stack(v); },
      [](const std::vector<at::Tensor>& v) { return at::stack(v); });
  check_n(
      "stack promotes", {make_tensor({3}, at::kInt), make_tensor({3}, at::kFloat)},
      [](const TensorList& v) { return stack(v, 1); },
      [](const std::vector<at::Tensor>& v) { return at::stack(v, 1); });
  check_n(
      "stack empty", {make_tensor({0, 2}), make_tensor({0, 2})},
      [](const TensorList& v) { return stack(v, 1); },
      [](const std::vector<at::Tensor>& v) { return at::stack(v, 1); });
  auto stack_fn = [](int64_t dim) {
    return [dim](const TensorList& v) { return TensorList{stack(v, dim)}; };
  };
  expect_error("ltorch.stack", {make_tensor({2, 3}), make_tensor({3, 2})}, stack_fn(0));
  expect_error("ltorch.stack", {make_tensor({2, 3}), make_tensor({2, 3})}, stack_fn(3));
  expect_error("ltorch.stack", {}, stack_fn(0));
}

TEST_F(ShapeOps, NarrowSelect) {
  for (auto dt : kDTypes) {
    at::Tensor x = make_tensor({4, 5, 3}, dt);
    for (auto [dim, start, len] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
             {0, 1, 2}, {1, 0, 5}, {-1, 2, 1}, {1, -3, 2}, {1, 5, 0}, {0, -4, 4}})
      check1(
          "narrow " + std::to_string(dim) + " " + std::to_string(start) + " " + std::to_string(len),
          x, [=](const Tensor& x) { return narrow(x, dim, start, len); },
          [=](const at::Tensor& x) { return at::narrow(x, dim, start, len); });
    for (auto [dim, index] :
         std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {0, 3}, {1, -1}, {-1, 2}, {2, -3}})
      check1(
          "select " + std::to_string(dim) + " " + std::to_string(index), x,
          [=](const Tensor& x) { return select(x, dim, index); },
          [=](const at::Tensor& x) { return at::select(x, dim, index); });
  }
  check1(
      "select 1-D gives 0-d", make_tensor({3}), [](const Tensor& x) { return x.select(0, 1); },
      [](const at::Tensor& x) { return x.select(0, 1); });
  check1(
      "narrow noncontiguous", make_noncontiguous({4, 6}),
      [](const Tensor& x) { return x.narrow(1, 2, 3); },
      [](const at::Tensor& x) { return x.narrow(1, 2, 3); });
  check1(
      "select noncontiguous", make_noncontiguous({4, 6}),
      [](const Tensor& x) { return x.select(1, 4); },
      [](const at::Tensor& x) { return x.select(1, 4); });
  error1("ltorch.narrow", make_tensor({4, 5}), [](const Tensor& x) { return narrow(x, 1, 3, 3); });
  error1("ltorch.narrow", make_tensor({4, 5}), [](const Tensor& x) { return narrow(x, 1, -6, 1); });
  error1("ltorch.narrow", make_tensor({4, 5}), [](const Tensor& x) { return narrow(x, 2, 0, 1); });
  error1("ltorch.narrow", make_tensor({}), [](const Tensor& x) { return narrow(x, 0, 0, 1); });
  error1("ltorch.select", make_tensor({4, 5}), [](const Tensor& x) { return select(x, 1, 5); });
  error1("ltorch.select", make_tensor({4, 5}), [](const Tensor& x) { return select(x, 0, -5); });
  error1("ltorch.select", make_tensor({}), [](const Tensor& x) { return select(x, 0, 0); });
}

TEST_F(ShapeOps, Split) {
  for (auto dt : {at::kFloat, at::kLong, at::kBool}) {
    at::Tensor x = make_tensor({7, 4}, dt);
    for (int64_t size : {1, 2, 3, 7, 10})
      check_list(
          "split size " + std::to_string(size), x,
          [size](const Tensor& x) { return split(x, size); },
          [size](const at::Tensor& x) { return at::split(x, size); });
    check_list(
        "split size dim -1", x, [](const Tensor& x) { return x.split(3, -1); },
        [](const at::Tensor& x) { return x.split(3, -1); });
    for (const std::vector<int64_t>& sizes :
         {std::vector<int64_t>{3, 4}, {7}, {0, 2, 0, 5}, {1, 1, 1, 1, 1, 1, 1}})
      check_list(
          "split sizes " + str(sizes), x, [sizes](const Tensor& x) { return split(x, sizes); },
          [sizes](const at::Tensor& x) { return at::split_with_sizes(x, sizes); });
  }
  check_list(
      "split empty dim, size 0", make_tensor({0, 3}), [](const Tensor& x) { return split(x, 0); },
      [](const at::Tensor& x) { return at::split(x, 0); });
  check_list(
      "split empty dim, size 2", make_tensor({0, 3}), [](const Tensor& x) { return split(x, 2); },
      [](const at::Tensor& x) { return at::split(x, 2); });
  check_list(
      "split noncontiguous", make_noncontiguous({4, 6}),
      [](const Tensor& x) {
        return x.split({2, 4}, 1);
      },
      [](const at::Tensor& x) {
        return x.split_with_sizes({2, 4}, 1);
      });
  auto fn = [](TFL f) { return [f](const TensorList& v) { return f(v[0]); }; };
  expect_error("ltorch.split", {make_tensor({5, 3})}, fn([](const Tensor& x) {
                 return split(x, {2, 2});
               }));
  expect_error("ltorch.split", {make_tensor({5, 3})}, fn([](const Tensor& x) {
                 return split(x, {6, -1});
               }));
  expect_error("ltorch.split", {make_tensor({5, 3})},
               fn([](const Tensor& x) { return split(x, 0); }));
  expect_error("ltorch.split", {make_tensor({5, 3})},
               fn([](const Tensor& x) { return split(x, -1); }));
  expect_error("ltorch.split", {make_tensor({5, 3})},
               fn([](const Tensor& x) { return split(x, 2, 2); }));
  expect_error("ltorch.split", {make_tensor({})}, fn([](const Tensor& x) { return split(x, 1); }));
}

TEST_F(ShapeOps, Chunk) {
  // torch.chunk uses pieces of ceil(size / chunks): 6 in 4 chunks gives 3 pieces.
  const std::vector<std::pair<int64_t, int64_t>> cases = {{6, 4}, {5, 4}, {5, 5}, {2, 5},
                                                          {8, 3}, {1, 1}, {0, 3}, {9, 3}};
  for (auto [size, chunks] : cases)
    for (auto dt : {at::kFloat, at::kInt, at::kBool})
      for (int64_t dim : {0, -1}) {
        std::vector<int64_t> shape =
            dim == 0 ? std::vector<int64_t>{size, 2} : std::vector<int64_t>{2, size};
        check_list(
            "chunk " + std::to_string(size) + " in " + std::to_string(chunks),
            make_tensor(shape, dt), [=](const Tensor& x) { return chunk(x, chunks, dim); },
            [=](const at::Tensor& x) { return at::chunk(x, chunks, dim); });
      }
  check_list(
      "chunk noncontiguous", make_noncontiguous({5, 6}),
      [](const Tensor& x) { return x.chunk(4, 1); },
      [](const at::Tensor& x) { return x.chunk(4, 1); });
  auto fn = [](TFL f) { return [f](const TensorList& v) { return f(v[0]); }; };
  expect_error("ltorch.chunk", {make_tensor({5})}, fn([](const Tensor& x) { return chunk(x, 0); }));
  expect_error("ltorch.chunk", {make_tensor({5})},
               fn([](const Tensor& x) { return chunk(x, 2, 1); }));
  expect_error("ltorch.chunk", {make_tensor({})}, fn([](const Tensor& x) { return chunk(x, 2); }));
}

TEST_F(ShapeOps, TriuTril) {
  const std::vector<std::vector<int64_t>> shapes = {{4, 4},       {3, 5}, {5, 3}, {2, 3, 4},
                                                    {2, 2, 3, 3}, {0, 3}, {3, 0}};
  for (const auto& shape : shapes)
    for (auto dt : kDTypes)
      for (int64_t diag : {0, 1, -1, 2, -4, 10}) {
        at::Tensor x = make_tensor(shape, dt);
        std::string tag = str(shape) + " diagonal " + std::to_string(diag);
        check1(
            "triu " + tag, x, [diag](const Tensor& x) { return triu(x, diag); },
            [diag](const at::Tensor& x) { return at::triu(x, diag); });
        check1(
            "tril " + tag, x, [diag](const Tensor& x) { return tril(x, diag); },
            [diag](const at::Tensor& x) { return at::tril(x, diag); });
      }
  check1(
      "triu noncontiguous", make_noncontiguous({4, 5}), [](const Tensor& x) { return x.triu(); },
      [](const at::Tensor& x) { return x.triu(); });
  check1(
      "tril noncontiguous", make_noncontiguous({4, 5}), [](const Tensor& x) { return x.tril(1); },
      [](const at::Tensor& x) { return x.tril(1); });
  error1("ltorch.triu", make_tensor({3}), [](const Tensor& x) { return triu(x); });
  error1("ltorch.tril", make_tensor({}), [](const Tensor& x) { return tril(x); });
}

TEST_F(ShapeOps, To) {
  for (auto from : kDTypes)
    for (auto to : kDTypes) {
      std::ostringstream os;
      os << "to " << from << " -> " << to;
      check1(
          os.str(), make_tensor({3, 4}, from), [to](const Tensor& x) { return x.to(to); },
          [to](const at::Tensor& x) { return x.to(to); });
    }
  check1(
      "to noncontiguous", make_noncontiguous({3, 4}),
      [](const Tensor& x) { return x.to(at::kDouble); },
      [](const at::Tensor& x) { return x.to(at::kDouble); });
  check1(
      "to 0-d", make_tensor({}), [](const Tensor& x) { return x.to(at::kLong); },
      [](const at::Tensor& x) { return x.to(at::kLong); });
}

}  // namespace
}  // namespace thunder::testing
