// The dnnl executor: float32 CPU matmul and linear as oneDNN matmul
// primitives, with the elementwise statements that follow a product fused in
// as post-ops (dnnl_epilogues.cpp). Every oneDNN include of the project is in
// this file.
//
// Why oneDNN and not ATen: libtorch 1.13 reaches OpenBLAS, whose kernel choice
// depends on whether it recognises the CPU (issue 17); oneDNN picks its
// kernel from the CPU's ISA at run time. Neither wins everywhere, so the
// executor decides per shape by measurement: the first call of a primitive's
// key (sizes, strides, bias, epilogues) times both and remembers the faster
// in a process-wide table.
//
// One product is one primitive: batch dims (broadcast ones as size 1), a
// transposed or strided operand (a weight's t(), k.transpose(-2, -1) of a
// head view of the qkv buffer) are described by strides in the memory
// descriptors, so nothing is copied unless a matrix has neither inner stride
// 1. Primitives are built once per key and thread and kept in that thread's
// cache (a hit hashes the key's bytes: no lock, no allocation, no strings);
// memory objects are bound to the call's pointers, and the scratchpad is the
// thread's own buffer, so threads never share mutable oneDNN state.
//
// THUNDER_DNNL=0 in the environment when a function is compiled makes the
// executor claim nothing (its statements go to the next executor, ATen).
#include "thunder/executors/dnnl_matmul.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dnnl_epilogues.h"
#include "thunder/core/error.h"
#include "thunder/executors/executor.h"
#include "thunder/executors/kernel.h"

namespace thunder::dnnl {
namespace {

// Dims of one primitive: up to four batch dims (after dropping size-1 ones)
// and the matrix. More go to ATen.
constexpr int kMaxDims = 6;

void check(dnnl_status_t st, const char* what) {
  THUNDER_CHECK(st == dnnl_success, "dnnl: {} failed with status {}", what, static_cast<int>(st));
}

dnnl_engine_t engine() {
  static dnnl_engine_t e = [] {
    dnnl_engine_t made;
    check(dnnl_engine_create(&made, dnnl_cpu, 0), "dnnl_engine_create");
    return made;
  }();
  return e;
}

// A tensor as a oneDNN memory descriptor describes it.
struct Layout {
  int64_t dims[kMaxDims];
  int64_t strides[kMaxDims];
};

// Everything a primitive depends on. Zero-filled before use, so it compares
// and hashes as bytes. Added tensors and the bias are read contiguous: the
// residual has dst's layout, the bias [1, ..., N].
struct Key {
  // Intra-op threads: with more than one, OpenBLAS runs single-threaded
  // inside programs (BlasThreadsScope), so the choice is measured per count.
  int32_t threads;
  int32_t ndims;
  int32_t has_bias;
  int32_t n_epilogues;
  Epilogue::Kind epilogue[kMaxEpilogues];
  float alpha[kMaxEpilogues];
  Layout src, wei, dst;
};

struct KeyHash {
  size_t operator()(const Key& k) const {
    return std::hash<std::string_view>{}(
        std::string_view(reinterpret_cast<const char*>(&k), sizeof(Key)));
  }
};
struct KeyEq {
  bool operator()(const Key& a, const Key& b) const {
    return std::memcmp(&a, &b, sizeof(Key)) == 0;
  }
};

// An operand with batch dims, read without making a tensor view (a view
// allocates a TensorImpl on the hot path).
struct Matrix {
  const float* data;
  int ndim;
  const int64_t* sizes;
  const int64_t* strides;
  int64_t rows() const { return sizes[ndim - 2]; }
  int64_t cols() const { return sizes[ndim - 1]; }
  int64_t row_stride() const { return rows() == 1 ? cols() * col_stride() : strides[ndim - 2]; }
  int64_t col_stride() const { return cols() == 1 ? 1 : strides[ndim - 1]; }
  // One of the inner strides is 1 with a leading dimension that covers the
  // other dim: what a gemm reads without a copy.
  bool gemm_layout() const {
    const int64_t rs = row_stride(), cs = col_stride();
    return (cs == 1 && (rows() == 1 || rs >= cols())) || (rs == 1 && cs >= rows());
  }
};

// A batch dim of size 1 gets the stride a contiguous tensor would give it:
// oneDNN picks its reference kernel for e.g. stride 0 there.
void normalize_unit_strides(Layout& l, int nd) {
  int64_t extent = 1;
  for (int i = nd - 1; i >= 0; --i) {
    if (l.dims[i] == 1) l.strides[i] = extent;
    extent = std::max(extent, l.dims[i] * l.strides[i]);
  }
}

void contiguous_layout(Layout& l, int nd) {
  int64_t s = 1;
  for (int i = nd - 1; i >= 0; --i) {
    l.strides[i] = s;
    s *= l.dims[i];
  }
}

enum class Described { Ok, NeedsCopy, Unsupported };

// The primitive's view of a @ b (a [..., M, K], b [..., K, N], batch dims
// broadcast): batch dims where the output has size 1 are dropped; a stride-0
// (expanded) batch dim is a broadcast dim; when b is one matrix for every
// batch entry and a's rows are evenly spaced, the batch folds into M.
Described describe(const Matrix& a, const Matrix& b, Key* key) {
  if (!a.gemm_layout() || !b.gemm_layout()) return Described::NeedsCopy;
  const int na = a.ndim - 2, nb = b.ndim - 2, nbatch = std::max(na, nb);
  int nd = 0;
  bool b_shared = true, a_full = true;
  for (int j = 0; j < nbatch; ++j) {
    const int ia = j - (nbatch - na), ib = j - (nbatch - nb);
    const int64_t sa = ia >= 0 ? a.sizes[ia] : 1, sb = ib >= 0 ? b.sizes[ib] : 1;
    const int64_t size = std::max(sa, sb);
    if (size == 1) continue;
    if (nd == kMaxDims - 2) return Described::Unsupported;
    const bool a_reads = sa != 1 && a.strides[ia] != 0, b_reads = sb != 1 && b.strides[ib] != 0;
    if (!a_reads && !b_reads) return Described::Unsupported;  // both broadcast: no dst size
    key->src.dims[nd] = a_reads ? size : 1;
    key->src.strides[nd] = a_reads ? a.strides[ia] : 0;
    key->wei.dims[nd] = b_reads ? size : 1;
    key->wei.strides[nd] = b_reads ? b.strides[ib] : 0;
    key->dst.dims[nd] = size;
    b_shared = b_shared && !b_reads;
    a_full = a_full && a_reads;
    ++nd;
  }
  const int64_t m = a.rows(), k = a.cols(), n = b.cols();
  // Folding: a's batch dims and rows as one row dim of stride row_stride().
  bool fold = nd > 0 && b_shared && a_full && a.col_stride() == 1;
  for (int j = nd - 1; fold && j >= 0; --j) {
    const int64_t inner =
        j == nd - 1 ? a.row_stride() * m : key->src.strides[j + 1] * key->src.dims[j + 1];
    fold = key->src.strides[j] == inner;
  }
  if (fold) {
    int64_t rows = m;
    for (int j = 0; j < nd; ++j) rows *= key->dst.dims[j];
    nd = 0;
    key->src.dims[0] = rows;
    key->src.strides[0] = rows == 1 ? k : a.row_stride();
    key->dst.dims[0] = rows;
  } else {
    key->src.dims[nd] = m;
    key->src.strides[nd] = a.row_stride();
    key->dst.dims[nd] = m;
  }
  key->src.dims[nd + 1] = k;
  key->src.strides[nd + 1] = a.col_stride();
  key->wei.dims[nd] = k;
  key->wei.strides[nd] = b.row_stride();
  key->wei.dims[nd + 1] = n;
  key->wei.strides[nd + 1] = b.col_stride();
  key->dst.dims[nd + 1] = n;
  key->ndims = nd + 2;
  normalize_unit_strides(key->src, key->ndims);
  normalize_unit_strides(key->wei, key->ndims);
  contiguous_layout(key->dst, key->ndims);
  return Described::Ok;
}

dnnl_memory_desc_t memory_desc(const Layout& l, int nd) {
  dnnl_memory_desc_t md;
  check(dnnl_memory_desc_init_by_strides(&md, nd, l.dims, dnnl_f32, l.strides),
        "dnnl_memory_desc_init_by_strides");
  return md;
}

dnnl_alg_kind_t eltwise_of(Epilogue::Kind kind) {
  switch (kind) {
    case Epilogue::Kind::GeluErf:
      return dnnl_eltwise_gelu_erf;
    case Epilogue::Kind::GeluTanh:
      return dnnl_eltwise_gelu_tanh;
    case Epilogue::Kind::Relu:
      return dnnl_eltwise_relu;
    case Epilogue::Kind::Scale:
      return dnnl_eltwise_linear;
    case Epilogue::Kind::Add:
      break;
  }
  return dnnl_alg_kind_undef;
}

// Counters of primitives built (process-wide, all threads).
std::atomic<int64_t> primitives_built{0}, reference_built{0};

// A call's data pointers, by the argument they are for (the epilogue's
// index i gives a residual's slot, kResidual + i).
enum Slot {
  kSrc,
  kWeights,
  kDst,
  kScratchpad,
  kBias,
  kResidual,
  kSlots = kResidual + kMaxEpilogues
};
using Pointers = std::array<const void*, kSlots>;

// A built primitive and the memory objects its calls bind to their pointers.
class Primitive {
 public:
  explicit Primitive(const Key& key) {
    const dnnl_memory_desc_t src = memory_desc(key.src, key.ndims),
                             wei = memory_desc(key.wei, key.ndims),
                             dst = memory_desc(key.dst, key.ndims);
    Layout bias_layout{};
    std::fill(bias_layout.dims, bias_layout.dims + key.ndims, 1);
    bias_layout.dims[key.ndims - 1] = key.dst.dims[key.ndims - 1];
    contiguous_layout(bias_layout, key.ndims);
    const dnnl_memory_desc_t bias = memory_desc(bias_layout, key.ndims);
    dnnl_matmul_desc_t desc;
    check(dnnl_matmul_desc_init(&desc, &src, &wei, key.has_bias ? &bias : nullptr, &dst),
          "dnnl_matmul_desc_init");
    dnnl_primitive_attr_t attr;
    check(dnnl_primitive_attr_create(&attr), "dnnl_primitive_attr_create");
    dnnl_post_ops_t post_ops;
    check(dnnl_post_ops_create(&post_ops), "dnnl_post_ops_create");
    for (int i = 0; i < key.n_epilogues; ++i) {
      if (key.epilogue[i] == Epilogue::Kind::Add)
        check(dnnl_post_ops_append_binary(post_ops, dnnl_binary_add, &dst),
              "dnnl_post_ops_append_binary");
      else
        check(dnnl_post_ops_append_eltwise(post_ops, 1.0f, eltwise_of(key.epilogue[i]),
                                           key.alpha[i], 0.0f),
              "dnnl_post_ops_append_eltwise");
    }
    check(dnnl_primitive_attr_set_post_ops(attr, post_ops), "dnnl_primitive_attr_set_post_ops");
    // The scratchpad is the calling thread's buffer (the library's own would
    // be shared between primitives in some oneDNN builds).
    check(dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user),
          "dnnl_primitive_attr_set_scratchpad_mode");
    dnnl_primitive_desc_t pd;
    const dnnl_status_t st = dnnl_primitive_desc_create(&pd, &desc, attr, engine(), nullptr);
    dnnl_post_ops_destroy(post_ops);
    dnnl_primitive_attr_destroy(attr);
    check(st, "dnnl_primitive_desc_create");
    const char* impl = nullptr;
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    if (impl != nullptr && std::string_view(impl).starts_with("ref")) ++reference_built;
    const dnnl_memory_desc_t* scratch =
        dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    scratch_bytes_ = dnnl_memory_desc_get_size(scratch);
    const dnnl_status_t made = dnnl_primitive_create(&prim_, pd);
    dnnl_primitive_desc_destroy(pd);
    check(made, "dnnl_primitive_create");
    ++primitives_built;
    bind(DNNL_ARG_SRC, src, kSrc);
    bind(DNNL_ARG_WEIGHTS, wei, kWeights);
    bind(DNNL_ARG_DST, dst, kDst);
    if (scratch_bytes_ > 0) bind(DNNL_ARG_SCRATCHPAD, *scratch, kScratchpad);
    if (key.has_bias) bind(DNNL_ARG_BIAS, bias, kBias);
    for (int i = 0; i < key.n_epilogues; ++i)
      if (key.epilogue[i] == Epilogue::Kind::Add)
        bind(DNNL_ARG_ATTR_MULTIPLE_POST_OP(i) | DNNL_ARG_SRC_1, dst, kResidual + i);
  }
  ~Primitive() {
    for (int i = 0; i < nargs_; ++i) dnnl_memory_destroy(args_[i].memory);
    dnnl_primitive_destroy(prim_);
  }
  Primitive(const Primitive&) = delete;
  Primitive& operator=(const Primitive&) = delete;

  size_t scratch_bytes() const { return scratch_bytes_; }

  // Runs on the call's pointers, indexed by Slot.
  void execute(dnnl_stream_t stream, const Pointers& pointers) {
    for (int i = 0; i < nargs_; ++i)
      check(dnnl_memory_set_data_handle(args_[i].memory, const_cast<void*>(pointers[slot_[i]])),
            "dnnl_memory_set_data_handle");
    check(dnnl_primitive_execute(prim_, stream, nargs_, args_.data()), "dnnl_primitive_execute");
    check(dnnl_stream_wait(stream), "dnnl_stream_wait");
  }

  int choice = -1;  // -1: not looked up yet on this thread, else 0 ATen, 1 oneDNN

 private:
  void bind(int arg, const dnnl_memory_desc_t& md, int slot) {
    dnnl_memory_t m;
    check(dnnl_memory_create(&m, &md, engine(), DNNL_MEMORY_NONE), "dnnl_memory_create");
    slot_[nargs_] = slot;
    args_[nargs_++] = {arg, m};
  }
  dnnl_primitive_t prim_ = nullptr;
  std::array<dnnl_exec_arg_t, kSlots> args_{};
  std::array<int, kSlots> slot_{};
  int nargs_ = 0;
  size_t scratch_bytes_ = 0;
};

// ---- the process-wide choice table ----

struct Choices {
  std::mutex mu;
  std::unordered_map<Key, bool, KeyHash, KeyEq> use_dnnl;
  int64_t measured = 0, dnnl_won = 0;
  std::atomic<uint64_t> generation{0};  // bumped by reset_choices: thread caches are stale
};

Choices& choices() {
  static Choices c;
  return c;
}

// One thread's primitives, stream and scratchpad. Dropped whole when
// reset_choices ran since, or when it holds kMaxPrimitives (programs with
// ever-new shapes must not grow it without bound).
struct ThreadCache {
  static constexpr size_t kMaxPrimitives = 1024;
  uint64_t generation = ~uint64_t{0};
  std::unordered_map<Key, std::unique_ptr<Primitive>, KeyHash, KeyEq> primitives;
  dnnl_stream_t stream = nullptr;
  std::unique_ptr<char, decltype(&std::free)> scratch{nullptr, &std::free};
  size_t scratch_bytes = 0;

  ThreadCache() {
    check(dnnl_stream_create(&stream, engine(), dnnl_stream_default_flags), "dnnl_stream_create");
  }
  ~ThreadCache() {
    primitives.clear();
    dnnl_stream_destroy(stream);
  }

  Primitive& primitive(const Key& key) {
    const uint64_t g = choices().generation.load(std::memory_order_acquire);
    if (generation != g || primitives.size() >= kMaxPrimitives) {
      primitives.clear();
      generation = g;
    }
    auto it = primitives.find(key);
    if (it == primitives.end())
      it = primitives.emplace(key, std::make_unique<Primitive>(key)).first;
    return *it->second;
  }

  void* scratchpad(size_t bytes) {
    if (bytes > scratch_bytes) {
      const size_t rounded = (bytes + 63) / 64 * 64;
      scratch.reset(static_cast<char*>(std::aligned_alloc(64, rounded)));
      THUNDER_CHECK(scratch != nullptr, "dnnl: cannot allocate a {}-byte scratchpad", rounded);
      scratch_bytes = rounded;
    }
    return scratch.get();
  }
};

ThreadCache& thread_cache() {
  thread_local ThreadCache c;
  return c;
}

template <class F>
double best_of_ms(int reps, F&& f) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return best;
}

// oneDNN or ATen for this key: the thread's primitive remembers it after the
// first look-up; the process-wide table answers that, or measures on the
// call's own operands the first time (one warm-up and three timed reps each).
template <class Dnnl, class Aten>
bool choose_dnnl(const Key& key, Primitive& p, Dnnl&& run_dnnl, Aten&& run_aten) {
  if (p.choice >= 0) return p.choice == 1;
  Choices& c = choices();
  std::lock_guard<std::mutex> lock(c.mu);
  auto it = c.use_dnnl.find(key);
  if (it == c.use_dnnl.end()) {
    run_dnnl();
    run_aten();
    const double d = best_of_ms(3, run_dnnl), a = best_of_ms(3, run_aten);
    it = c.use_dnnl.emplace(key, d <= a).first;
    ++c.measured;
    c.dnnl_won += it->second;
  }
  p.choice = it->second ? 1 : 0;
  return it->second;
}

// ---- kernels ----

// What the aten executor would run for the statement: the product, then each
// epilogue as its own op.
at::Tensor aten_product(const KernelCall& k, const ProductSpec& spec) {
  at::Tensor t = spec.linear ? at::linear(k.tensor(0), k.tensor(1), k.optional_tensor(2))
                             : at::matmul(k.tensor(0), k.tensor(1));
  for (const Epilogue& e : spec.epilogues) {
    switch (e.kind) {
      case Epilogue::Kind::GeluErf:
        t = at::gelu(t, "none");
        break;
      case Epilogue::Kind::GeluTanh:
        t = at::gelu(t, "tanh");
        break;
      case Epilogue::Kind::Relu:
        t = at::relu(t);
        break;
      case Epilogue::Kind::Scale:
        t = at::mul(t, e.scale);
        break;
      case Epilogue::Kind::Add:
        t = at::add(t, k.tensor(e.operand));
        break;
    }
  }
  return t;
}

Matrix matrix_of(const at::Tensor& t) {
  return {t.data_ptr<float>(), static_cast<int>(t.dim()), t.sizes().data(), t.strides().data()};
}

template <bool Measured>
void product_kernel(KernelCall& k) {
  const ProductSpec& spec = *static_cast<const ProductSpec*>(k.state());
  at::Tensor a = k.tensor(0), b = k.tensor(1);
  at::Tensor bias = spec.linear ? k.optional_tensor(2) : at::Tensor();
  const bool f32 = a.scalar_type() == at::kFloat && b.scalar_type() == at::kFloat &&
                   (!bias.defined() || bias.scalar_type() == at::kFloat);
  if (!f32 || (!spec.linear && (a.dim() < 2 || b.dim() < 2)) || a.numel() == 0 || b.numel() == 0)
      [[unlikely]] {
    k.set_output(0, aten_product(k, spec));
    return;
  }
  // The operands as matrices; linear's w^T is w with sizes and strides swapped
  // and a 1-D x is one row.
  int64_t x_sizes[2], x_strides[2], wt_sizes[2], wt_strides[2];
  auto as_matrices = [&](Matrix* ma, Matrix* mb) {
    if (!spec.linear) {
      *ma = matrix_of(a);
      *mb = matrix_of(b);
      return;
    }
    *ma = matrix_of(a);
    if (a.dim() == 1) {
      x_sizes[0] = 1, x_sizes[1] = a.size(0), x_strides[0] = a.size(0), x_strides[1] = a.stride(0);
      *ma = {a.data_ptr<float>(), 2, x_sizes, x_strides};
    }
    wt_sizes[0] = b.size(1), wt_sizes[1] = b.size(0);
    wt_strides[0] = b.stride(1), wt_strides[1] = b.stride(0);
    *mb = {b.data_ptr<float>(), 2, wt_sizes, wt_strides};
  };
  Key key;
  std::memset(&key, 0, sizeof key);
  key.threads = at::get_num_threads();
  Matrix ma, mb;
  as_matrices(&ma, &mb);
  Described d = describe(ma, mb, &key);
  if (d == Described::NeedsCopy) {
    a = a.contiguous();
    b = b.contiguous();
    as_matrices(&ma, &mb);
    d = describe(ma, mb, &key);
  }
  if (d != Described::Ok) [[unlikely]] {
    k.set_output(0, aten_product(k, spec));
    return;
  }
  // The output's shape: matmul's broadcast batch, or linear's leading dims.
  std::array<int64_t, 2 * kMaxDims + 2> out_shape{};
  int out_ndim = 0;
  if (spec.linear) {
    for (int64_t i = 0; i + 1 < a.dim(); ++i) out_shape[out_ndim++] = a.size(i);
    out_shape[out_ndim++] = b.size(0);
  } else {
    const int64_t nbatch = std::max(a.dim(), b.dim()) - 2;
    if (nbatch + 2 > static_cast<int64_t>(out_shape.size())) [[unlikely]] {
      k.set_output(0, aten_product(k, spec));
      return;
    }
    for (int64_t j = 0; j < nbatch; ++j) {
      const int64_t ia = j - (nbatch - (a.dim() - 2)), ib = j - (nbatch - (b.dim() - 2));
      out_shape[out_ndim++] = std::max(ia >= 0 ? a.size(ia) : 1, ib >= 0 ? b.size(ib) : 1);
    }
    out_shape[out_ndim++] = a.size(-2);
    out_shape[out_ndim++] = b.size(-1);
  }
  // The bias and residuals are read contiguous, as the key says.
  Pointers pointers{};
  std::array<at::Tensor, kMaxEpilogues> residuals;
  pointers[kSrc] = ma.data;
  pointers[kWeights] = mb.data;
  key.has_bias = bias.defined();
  if (bias.defined()) {
    bias = bias.contiguous();
    pointers[kBias] = bias.data_ptr<float>();
  }
  key.n_epilogues = static_cast<int32_t>(spec.epilogues.size());
  for (size_t i = 0; i < spec.epilogues.size(); ++i) {
    const Epilogue& e = spec.epilogues[i];
    key.epilogue[i] = e.kind;
    key.alpha[i] = e.kind == Epilogue::Kind::Scale ? static_cast<float>(e.scale) : 0.0f;
    if (e.kind == Epilogue::Kind::Add) {
      residuals[i] = k.tensor(e.operand).contiguous();
      pointers[kResidual + i] = residuals[i].data_ptr<float>();
    }
  }
  ThreadCache& cache = thread_cache();
  Primitive& p = cache.primitive(key);
  at::Tensor out;
  auto run = [&] {
    if (!out.defined()) out = at::empty(c10::IntArrayRef(out_shape.data(), out_ndim), a.options());
    pointers[kDst] = out.data_ptr<float>();
    pointers[kScratchpad] = cache.scratchpad(p.scratch_bytes());
    p.execute(cache.stream, pointers);
  };
  if (Measured && !choose_dnnl(key, p, run, [&] { (void)aten_product(k, spec); })) {
    k.set_output(0, aten_product(k, spec));
    return;
  }
  run();
  k.set_output(0, std::move(out));
}

bool f32_cpu_tensor(const Value& v) {
  return v.is_tensor() && v.proxy()->dtype == DType::f32 &&
         v.proxy()->device.type == Device::Type::CPU;
}

class DnnlExecutor : public Executor {
 public:
  std::string_view name() const override { return "dnnl"; }
  bool can_claim(const BoundSymbol& b) const override {
    if (mode() == Mode::Off) return false;
    const ProductSpec* p = plain_product(b);
    if (p == nullptr) return false;
    if (!p->linear)
      return b.args.size() == 2 && f32_cpu_tensor(b.args[0]) && f32_cpu_tensor(b.args[1]) &&
             b.args[0].proxy()->ndim() >= 2 && b.args[1].proxy()->ndim() >= 2;
    return b.args.size() == 3 && f32_cpu_tensor(b.args[0]) && f32_cpu_tensor(b.args[1]) &&
           (b.args[2].is_none() || f32_cpu_tensor(b.args[2])) && b.args[0].proxy()->ndim() >= 1 &&
           b.args[1].proxy()->ndim() == 2;
  }
  // Measured: the choice table decides per key; Always: oneDNN without
  // measuring (THUNDER_DNNL=1, for tests and A/B runs).
  Kernel kernel(const BoundSymbol&) const override {
    return mode() == Mode::Always ? &product_kernel<false> : &product_kernel<true>;
  }
  // The statement's ProductSpec, owned by its symbol (a fused one's lives in
  // the trace's and program's owned symbols, a plain one's is static).
  std::shared_ptr<const void> kernel_state(const BoundSymbol& b) const override {
    return std::shared_ptr<const void>(std::shared_ptr<const void>(), &product_spec(b));
  }
  std::vector<FusionPass> fusion_passes() const override {
    return {{"Matmul epilogues", "matmul_epilogues", [](const Trace& t, const FusionContext& c) {
               return mode() == Mode::Off ? t : fuse_matmul_epilogues(t, c.self);
             }}};
  }
};

}  // namespace

Mode mode() {
  const char* v = std::getenv("THUNDER_DNNL");
  if (v == nullptr || *v == '\0') return Mode::Measure;
  const std::string_view s(v);
  if (s == "0") return Mode::Off;
  if (s == "1") return Mode::Always;
  fail("THUNDER_DNNL: expected 0 (off), 1 (always oneDNN) or unset (measure), got '{}'", s);
}

ChoiceStats choice_stats() {
  Choices& c = choices();
  std::lock_guard<std::mutex> lock(c.mu);
  return {c.measured, c.dnnl_won, primitives_built.load(), reference_built.load()};
}

void reset_choices() {
  Choices& c = choices();
  std::lock_guard<std::mutex> lock(c.mu);
  c.use_dnnl.clear();
  c.measured = c.dnnl_won = 0;
  primitives_built = 0;
  reference_built = 0;
  c.generation.fetch_add(1, std::memory_order_release);
}

double isolated_sgemm_us(int64_t batch, int64_t m, int64_t n, int64_t k, int iters) {
  std::vector<float> a(batch * m * k, 0.5f), b(batch * k * n, 0.25f), c(batch * m * n);
  auto once = [&] {
    for (int64_t i = 0; i < batch; ++i)
      check(dnnl_sgemm('N', 'N', m, n, k, 1.0f, a.data() + i * m * k, k, b.data() + i * k * n, n,
                       0.0f, c.data() + i * m * n, n),
            "dnnl_sgemm");
  };
  once();
  std::vector<double> us;
  for (int r = 0; r < 7; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) once();
    auto t1 = std::chrono::steady_clock::now();
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / iters);
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

Executor& dnnl_executor() {
  static DnnlExecutor e;
  return e;
}

void sgemm(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  dnnl_status_t st = dnnl_sgemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  THUNDER_CHECK(st == dnnl_success, "dnnl: dnnl_sgemm failed with status {}", static_cast<int>(st));
}

}  // namespace thunder::dnnl
