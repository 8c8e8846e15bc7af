// ltorch shape ops: torch's argument conventions (negative dims, -1 sizes,
// split/chunk counts, cat's type promotion) expressed with shape prims. On
// proxies views and copies are the same thing, so view == reshape and
// contiguous is the identity.
#include <algorithm>

#include "lang_util.h"

namespace thunder::ltorch {
namespace detail {
namespace {

const uint32_t kShape = tag_bits({OpTag::SHAPE_OP});

// The shape `shape` (with at most one -1) stands for, given `numel` elements.
Shape infer_shape(const std::string& op, const Proxy& p, const std::vector<int64_t>& shape) {
  Shape out = shape;
  int64_t infer = -1, known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      THUNDER_CHECK(infer < 0, "{}: only one dimension can be inferred, got shape {}", op,
                    shape_str(shape));
      infer = static_cast<int64_t>(i);
    } else {
      THUNDER_CHECK(shape[i] >= 0, "{}: invalid size {} in shape {}", op, shape[i],
                    shape_str(shape));
      known *= shape[i];
    }
  }
  auto bad = [&] {
    fail("{}: cannot reshape {} ({} elements) to {}", op, shape_str(p.shape), p.numel(),
         shape_str(shape));
  };
  if (infer >= 0) {
    THUNDER_CHECK(known != 0 || p.numel() != 0,
                  "{}: cannot reshape {} (0 elements) to {}: the size of the -1 dimension is "
                  "ambiguous",
                  op, shape_str(p.shape), shape_str(shape));
    if (known == 0 || p.numel() % known != 0) bad();
    out[infer] = p.numel() / known;
  } else if (known != p.numel()) {
    bad();
  }
  return out;
}

Value reshape_impl(const std::string& op, const OpArgs& a) {
  const Proxy& p = tensor_arg(op, a[0], "a");
  Shape shape = infer_shape(op, p, a.ints(1));
  if (shape == p.shape) return a[0];
  return prims::reshape(a[0], shape);
}

// Inserts a size-1 dim at `dim` (already canonical for rank + 1).
Value unsqueeze_at(const Value& t, int64_t dim) {
  const Proxy& p = *t.proxy();
  Shape shape = p.shape;
  shape.insert(shape.begin() + dim, 1);
  std::vector<int64_t> dims;
  for (int64_t i = 0; i <= p.ndim(); ++i)
    if (i != dim) dims.push_back(i);
  return prims::broadcast_in_dim(t, shape, dims);
}

// Slices `t` along `dim` into consecutive pieces of the given lengths.
Value split_lengths(const Value& t, int64_t dim, const std::vector<int64_t>& lengths) {
  const Proxy& p = *t.proxy();
  std::vector<int64_t> start(p.ndim(), 0), end = p.shape, strides(p.ndim(), 1);
  std::vector<Value> pieces;
  int64_t offset = 0;
  for (int64_t len : lengths) {
    start[dim] = offset;
    end[dim] = offset + len;
    pieces.push_back(prims::slice(t, start, end, strides));
    offset += len;
  }
  return Value(std::move(pieces));
}

void check_not_0d(const std::string& op, const Proxy& p) {
  THUNDER_CHECK(p.ndim() > 0, "{}: cannot be applied to a 0-dim tensor", op);
}

// The tensors of a cat/stack list, checked, with their promoted dtype.
std::vector<const Proxy*> tensor_list(const std::string& op, const std::vector<Value>& ts,
                                      DType* dtype) {
  THUNDER_CHECK(!ts.empty(), "{}: expected a non-empty list of tensors", op);
  std::vector<const Proxy*> out;
  for (size_t i = 0; i < ts.size(); ++i) {
    THUNDER_CHECK(ts[i].is_tensor(), "{}: entry {} of the list must be a tensor, got {}", op, i,
                  ts[i].str());
    out.push_back(ts[i].proxy().get());
  }
  *dtype = result_type(op, ts);
  return out;
}

Value triangle(const std::string& op, const OpArgs& a, bool upper) {
  const Proxy& p = tensor_arg(op, a[0], "a");
  THUNDER_CHECK(p.ndim() >= 2, "{}: expected a tensor of at least 2 dims, got shape {}", op,
                shape_str(p.shape));
  int64_t diagonal = a.integer(1);
  int64_t r = p.ndim(), m = p.shape[r - 2], n = p.shape[r - 1];
  // Element (i, j) is kept when j >= i + diagonal (upper) or j <= i + diagonal (lower).
  Value rows = prims::iota(m, diagonal, 1, p.device, DType::i64);
  Value cols = prims::iota(n, 0, 1, p.device, DType::i64);
  rows = prims::broadcast_in_dim(rows, {m, n}, {0});
  cols = prims::broadcast_in_dim(cols, {m, n}, {1});
  Value mask = upper ? prims::ge(cols, rows) : prims::le(cols, rows);
  if (r > 2) mask = prims::broadcast_in_dim(mask, p.shape, {r - 2, r - 1});
  Value zero = is_float(p.dtype) ? Value(0.0) : is_bool(p.dtype) ? Value(false) : Value(0);
  return prims::where(mask, a[0], zero);
}

}  // namespace

void register_shape() {
  define("ltorch.reshape", {"a", "shape"}, kShape,
         [](const OpArgs& a) -> Value { return reshape_impl("ltorch.reshape", a); });
  define("ltorch.view", {"a", "shape"}, kShape,
         [](const OpArgs& a) -> Value { return reshape_impl("ltorch.view", a); });

  define("ltorch.flatten", {"a", "start_dim", "end_dim"}, kShape, [](const OpArgs& a) -> Value {
    const std::string id = "ltorch.flatten";
    const Proxy& p = tensor_arg(id, a[0], "a");
    int64_t start = canonical_dim(id, a.integer(1), p.ndim());
    int64_t end = canonical_dim(id, a.integer(2), p.ndim());
    THUNDER_CHECK(start <= end, "ltorch.flatten: start_dim {} cannot come after end_dim {}",
                  a.integer(1), a.integer(2));
    if (p.ndim() == 0) return prims::reshape(a[0], {1});
    if (start == end) return a[0];
    Shape shape(p.shape.begin(), p.shape.begin() + start);
    int64_t flat = 1;
    for (int64_t i = start; i <= end; ++i) flat *= p.shape[i];
    shape.push_back(flat);
    shape.insert(shape.end(), p.shape.begin() + end + 1, p.shape.end());
    return prims::reshape(a[0], shape);
  });

  define("ltorch.transpose", {"a", "dim0", "dim1"}, kShape, [](const OpArgs& a) -> Value {
    const std::string id = "ltorch.transpose";
    const Proxy& p = tensor_arg(id, a[0], "a");
    int64_t d0 = canonical_dim(id, a.integer(1), p.ndim());
    int64_t d1 = canonical_dim(id, a.integer(2), p.ndim());
    if (p.ndim() == 0 || d0 == d1) return a[0];
    std::vector<int64_t> perm(p.ndim());
    for (int64_t i = 0; i < p.ndim(); ++i) perm[i] = i;
    std::swap(perm[d0], perm[d1]);
    return prims::transpose(a[0], perm);
  });

  define("ltorch.permute", {"a", "dims"}, kShape, [](const OpArgs& a) -> Value {
    const std::string id = "ltorch.permute";
    const Proxy& p = tensor_arg(id, a[0], "a");
    const auto& dims = a.ints(1);
    THUNDER_CHECK(static_cast<int64_t>(dims.size()) == p.ndim(),
                  "ltorch.permute: dims {} has {} entries for a tensor of rank {}",
                  Value(dims).str(), dims.size(), p.ndim());
    std::vector<int64_t> perm;
    bool identity = true;
    for (int64_t d : dims) {
      int64_t c = canonical_dim(id, d, p.ndim());
      THUNDER_CHECK(std::find(perm.begin(), perm.end(), c) == perm.end(),
                    "ltorch.permute: dim {} is repeated in {}", d, Value(dims).str());
      identity = identity && c == static_cast<int64_t>(perm.size());
      perm.push_back(c);
    }
    if (identity) return a[0];
    return prims::transpose(a[0], perm);
  });

  define("ltorch.unsqueeze", {"a", "dim"}, kShape, [](const OpArgs& a) -> Value {
    const std::string id = "ltorch.unsqueeze";
    const Proxy& p = tensor_arg(id, a[0], "a");
    return unsqueeze_at(a[0], canonical_dim(id, a.integer(1), p.ndim() + 1));
  });

  define("ltorch.squeeze", {"a", "dims"}, kShape, [](const OpArgs& a) -> Value {
    const std::string id = "ltorch.squeeze";
    const Proxy& p = tensor_arg(id, a[0], "a");
    std::vector<int64_t> dims;
    if (a[1].is_none()) {
      for (int64_t i = 0; i < p.ndim(); ++i)
        if (p.shape[i] == 1) dims.push_back(i);
    } else {
      // Like torch, a listed dim whose size is not 1 is left alone.
      for (int64_t d : a.ints(1)) {
        int64_t c = canonical_dim(id, d, p.ndim());
        if (p.ndim() > 0 && p.shape[c] == 1 && std::find(dims.begin(), dims.end(), c) == dims.end())
          dims.push_back(c);
      }
      std::sort(dims.begin(), dims.end());
    }
    if (dims.empty()) return a[0];
    return prims::squeeze(a[0], dims);
  });

  define("ltorch.expand", {"a", "shape"}, kShape, [](const OpArgs& a) -> Value {
    const std::string id = "ltorch.expand";
    const Proxy& p = tensor_arg(id, a[0], "a");
    const auto& shape = a.ints(1);
    int64_t n = static_cast<int64_t>(shape.size());
    THUNDER_CHECK(n >= p.ndim(),
                  "ltorch.expand: shape {} has fewer dims than the tensor of shape {}",
                  shape_str(shape), shape_str(p.shape));
    int64_t offset = n - p.ndim();
    Shape out(n);
    for (int64_t i = 0; i < n; ++i) {
      if (i < offset) {
        THUNDER_CHECK(shape[i] >= 0,
                      "ltorch.expand: size {} is not allowed in the new leading "
                      "dim {} of shape {}",
                      shape[i], i, shape_str(shape));
        out[i] = shape[i];
        continue;
      }
      int64_t have = p.shape[i - offset];
      out[i] = shape[i] == -1 ? have : shape[i];
      THUNDER_CHECK(out[i] >= 0, "ltorch.expand: invalid size {} in shape {}", shape[i],
                    shape_str(shape));
      THUNDER_CHECK(have == out[i] || have == 1,
                    "ltorch.expand: cannot expand shape {} to {}: dim {} has size {}, not 1",
                    shape_str(p.shape), shape_str(shape), i - offset, have);
    }
    if (out == p.shape) return a[0];
    std::vector<int64_t> dims;
    for (int64_t i = offset; i < n; ++i) dims.push_back(i);
    return prims::broadcast_in_dim(a[0], out, dims);
  });

  define("ltorch.contiguous", {"a"}, kShape, [](const OpArgs& a) -> Value {
    tensor_arg("ltorch.contiguous", a[0], "a");
    return a[0];
  });

  define("ltorch.cat", {"tensors", "dim"}, kShape, [](const OpArgs& a) -> Value {
    const std::string id = "ltorch.cat";
    const auto& ts = a.list(0);
    DType dtype;
    auto ps = tensor_list(id, ts, &dtype);
    for (size_t i = 0; i < ps.size(); ++i)
      THUNDER_CHECK(ps[i]->ndim() > 0,
                    "ltorch.cat: zero-dimensional tensor (at position {}) cannot be concatenated",
                    i);
    // torch still skips 1-D empty tensors whatever the other shapes are.
    auto legacy_empty = [](const Proxy* p) { return p->shape == Shape{0}; };
    std::vector<size_t> kept;
    for (size_t i = 0; i < ps.size(); ++i)
      if (!legacy_empty(ps[i])) kept.push_back(i);
    if (kept.empty()) kept.push_back(0);
    const Proxy& ref = *ps[kept[0]];
    int64_t dim = canonical_dim(id, a.integer(1), ref.ndim());
    std::vector<Value> parts;
    for (size_t i : kept) {
      const Proxy& p = *ps[i];
      THUNDER_CHECK(p.ndim() == ref.ndim(),
                    "ltorch.cat: tensors must have the same rank: entry {} has shape {}, entry {} "
                    "has shape {}",
                    kept[0], shape_str(ref.shape), i, shape_str(p.shape));
      for (int64_t d = 0; d < p.ndim(); ++d)
        THUNDER_CHECK(d == dim || p.shape[d] == ref.shape[d],
                      "ltorch.cat: sizes must match except in dim {}: entry {} has shape {}, "
                      "entry {} has shape {}",
                      dim, kept[0], shape_str(ref.shape), i, shape_str(p.shape));
      parts.push_back(maybe_convert(ts[i], dtype));
    }
    return prims::cat(parts, dim);
  });

  define("ltorch.stack", {"tensors", "dim"}, kShape, [](const OpArgs& a) -> Value {
    const std::string id = "ltorch.stack";
    const auto& ts = a.list(0);
    DType dtype;
    auto ps = tensor_list(id, ts, &dtype);
    for (size_t i = 1; i < ps.size(); ++i)
      THUNDER_CHECK(ps[i]->shape == ps[0]->shape,
                    "ltorch.stack: expects tensors of equal shape, got {} at entry 0 and {} at "
                    "entry {}",
                    shape_str(ps[0]->shape), shape_str(ps[i]->shape), i);
    int64_t dim = canonical_dim(id, a.integer(1), ps[0]->ndim() + 1);
    std::vector<Value> parts;
    for (const Value& t : ts) parts.push_back(unsqueeze_at(maybe_convert(t, dtype), dim));
    return prims::cat(parts, dim);
  });

  define("ltorch.narrow", {"a", "dim", "start", "length"}, kShape, [](const OpArgs& a) -> Value {
    const std::string id = "ltorch.narrow";
    const Proxy& p = tensor_arg(id, a[0], "a");
    check_not_0d(id, p);
    int64_t dim = canonical_dim(id, a.integer(1), p.ndim());
    int64_t size = p.shape[dim], start = a.integer(2), length = a.integer(3);
    THUNDER_CHECK(start >= -size && start <= size,
                  "ltorch.narrow: start {} is out of range for dim {} of size {}", start, dim,
                  size);
    if (start < 0) start += size;
    THUNDER_CHECK(length >= 0, "ltorch.narrow: length must be non-negative, got {}", length);
    THUNDER_CHECK(start + length <= size,
                  "ltorch.narrow: start ({}) + length ({}) exceeds the size {} of dim {}", start,
                  length, size, dim);
    std::vector<int64_t> begin(p.ndim(), 0), end = p.shape, strides(p.ndim(), 1);
    begin[dim] = start;
    end[dim] = start + length;
    return prims::slice(a[0], begin, end, strides);
  });

  define("ltorch.select", {"a", "dim", "index"}, kShape, [](const OpArgs& a) -> Value {
    const std::string id = "ltorch.select";
    const Proxy& p = tensor_arg(id, a[0], "a");
    check_not_0d(id, p);
    int64_t dim = canonical_dim(id, a.integer(1), p.ndim());
    int64_t size = p.shape[dim], index = a.integer(2);
    THUNDER_CHECK(index >= -size && index < size,
                  "ltorch.select: index {} is out of range for dim {} of size {}", index, dim,
                  size);
    if (index < 0) index += size;
    std::vector<int64_t> begin(p.ndim(), 0), end = p.shape, strides(p.ndim(), 1);
    begin[dim] = index;
    end[dim] = index + 1;
    return prims::squeeze(prims::slice(a[0], begin, end, strides), {dim});
  });

  define("ltorch.split", {"a", "split_size_or_sections", "dim"}, kShape,
         [](const OpArgs& a) -> Value {
           const std::string id = "ltorch.split";
           const Proxy& p = tensor_arg(id, a[0], "a");
           check_not_0d(id, p);
           int64_t dim = canonical_dim(id, a.integer(2), p.ndim());
           int64_t size = p.shape[dim];
           std::vector<int64_t> lengths;
           if (a[1].kind() == Value::Kind::IntList) {
             lengths = a.ints(1);
             int64_t total = 0;
             for (int64_t l : lengths) {
               THUNDER_CHECK(l >= 0, "ltorch.split: split sizes {} must be non-negative",
                             shape_str(lengths));
               total += l;
             }
             THUNDER_CHECK(total == size,
                           "ltorch.split: split sizes {} must sum exactly to {} (the size of dim "
                           "{}), got {}",
                           shape_str(lengths), size, dim, total);
           } else {
             int64_t s = a.integer(1);
             THUNDER_CHECK(s >= 0, "ltorch.split: split_size must be non-negative, got {}", s);
             THUNDER_CHECK(s > 0 || size == 0,
                           "ltorch.split: split_size can only be 0 if dim {} has size 0, not {}",
                           dim, size);
             // At least one piece, the last one possibly shorter.
             int64_t count = s == 0 ? 1 : std::max<int64_t>((size + s - 1) / s, 1);
             for (int64_t i = 0; i < count; ++i)
               lengths.push_back(i + 1 < count ? s : size - s * (count - 1));
           }
           return split_lengths(a[0], dim, lengths);
         });

  define("ltorch.chunk", {"a", "chunks", "dim"}, kShape, [](const OpArgs& a) -> Value {
    const std::string id = "ltorch.chunk";
    const Proxy& p = tensor_arg(id, a[0], "a");
    check_not_0d(id, p);
    int64_t chunks = a.integer(1);
    THUNDER_CHECK(chunks > 0, "ltorch.chunk: chunks must be greater than 0, got {}", chunks);
    int64_t dim = canonical_dim(id, a.integer(2), p.ndim());
    int64_t size = p.shape[dim];
    // torch: pieces of ceil(size / chunks), so fewer than `chunks` pieces can come out;
    // an empty dim gives `chunks` empty pieces.
    int64_t piece = (size + chunks - 1) / chunks;
    std::vector<int64_t> lengths;
    if (size == 0) {
      lengths.assign(chunks, 0);
    } else {
      for (int64_t off = 0; off < size; off += piece)
        lengths.push_back(std::min(piece, size - off));
    }
    return split_lengths(a[0], dim, lengths);
  });

  define("ltorch.triu", {"a", "diagonal"}, 0,
         [](const OpArgs& a) -> Value { return triangle("ltorch.triu", a, true); });
  define("ltorch.tril", {"a", "diagonal"}, 0,
         [](const OpArgs& a) -> Value { return triangle("ltorch.tril", a, false); });

  define("ltorch.to", {"a", "dtype"}, 0, [](const OpArgs& a) -> Value {
    tensor_arg("ltorch.to", a[0], "a");
    return maybe_convert(a[0], a.dtype(1));
  });
}

}  // namespace detail

Value reshape(const Value& a, const std::vector<int64_t>& shape) {
  THUNDER_LTORCH_CALL("ltorch.reshape", a, shape);
}
Value view(const Value& a, const std::vector<int64_t>& shape) {
  THUNDER_LTORCH_CALL("ltorch.view", a, shape);
}
Value flatten(const Value& a, int64_t start_dim, int64_t end_dim) {
  THUNDER_LTORCH_CALL("ltorch.flatten", a, start_dim, end_dim);
}
Value transpose(const Value& a, int64_t dim0, int64_t dim1) {
  THUNDER_LTORCH_CALL("ltorch.transpose", a, dim0, dim1);
}
Value permute(const Value& a, const std::vector<int64_t>& dims) {
  THUNDER_LTORCH_CALL("ltorch.permute", a, dims);
}
Value unsqueeze(const Value& a, int64_t dim) { THUNDER_LTORCH_CALL("ltorch.unsqueeze", a, dim); }
Value squeeze(const Value& a, const Value& dims) { THUNDER_LTORCH_CALL("ltorch.squeeze", a, dims); }
Value expand(const Value& a, const std::vector<int64_t>& shape) {
  THUNDER_LTORCH_CALL("ltorch.expand", a, shape);
}
Value contiguous(const Value& a) { THUNDER_LTORCH_CALL("ltorch.contiguous", a); }
Value cat(const std::vector<Value>& tensors, int64_t dim) {
  THUNDER_LTORCH_CALL("ltorch.cat", Value(tensors), dim);
}
Value stack(const std::vector<Value>& tensors, int64_t dim) {
  THUNDER_LTORCH_CALL("ltorch.stack", Value(tensors), dim);
}
Value narrow(const Value& a, int64_t dim, int64_t start, int64_t length) {
  THUNDER_LTORCH_CALL("ltorch.narrow", a, dim, start, length);
}
Value select(const Value& a, int64_t dim, int64_t index) {
  THUNDER_LTORCH_CALL("ltorch.select", a, dim, index);
}
Value split(const Value& a, const std::vector<int64_t>& sizes, int64_t dim) {
  THUNDER_LTORCH_CALL("ltorch.split", a, sizes, dim);
}
Value split(const Value& a, int64_t split_size, int64_t dim) {
  THUNDER_LTORCH_CALL("ltorch.split", a, split_size, dim);
}
Value chunk(const Value& a, int64_t chunks, int64_t dim) {
  THUNDER_LTORCH_CALL("ltorch.chunk", a, chunks, dim);
}
Value triu(const Value& a, int64_t diagonal) { THUNDER_LTORCH_CALL("ltorch.triu", a, diagonal); }
Value tril(const Value& a, int64_t diagonal) { THUNDER_LTORCH_CALL("ltorch.tril", a, diagonal); }
Value to(const Value& a, DType dtype) { THUNDER_LTORCH_CALL("ltorch.to", a, dtype); }

}  // namespace thunder::ltorch
