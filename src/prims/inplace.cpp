// In-place prims. copy_: the output is a fresh proxy standing for dst's new
// value, so passes stay in SSA form while the kernel really writes into dst.
// update_aliases: an alias-update barrier after a write into tensors that
// share storage at run time; it renames them (fresh outputs, same tensors at
// run time) so every later read depends on the write and no pass can move a
// read above it. Functionalization emits it; fusers must not fuse it.
#include "prim_util.h"

namespace thunder::prims {
namespace detail {

void register_inplace() {
  define("prims.copy_", {"src", "dst"}, tag_bits({OpTag::IN_PLACE, OpTag::DONT_DCE}),
         [](const OpArgs& a) -> Value {
           const Proxy& src = a.tensor(0);
           const Proxy& dst = a.tensor(1);
           THUNDER_CHECK(src.shape == dst.shape,
                         "prims.copy_: shapes {} (src) and {} (dst) "
                         "must be equal",
                         shape_str(src.shape), shape_str(dst.shape));
           THUNDER_CHECK(src.dtype == dst.dtype,
                         "prims.copy_: dtypes {} (src) and {} (dst) "
                         "must be equal",
                         long_name(src.dtype), long_name(dst.dtype));
           THUNDER_CHECK(src.device == dst.device,
                         "prims.copy_: devices {} (src) and {} (dst) "
                         "must be equal",
                         src.device.str(), dst.device.str());
           return new_tensor(dst.shape, dst.dtype, dst.device);
         });
  define("prims.update_aliases", {"aliases"}, tag_bits({OpTag::IN_PLACE, OpTag::DONT_DCE}),
         [](const OpArgs& a) -> Value {
           std::vector<Value> outs;
           for (const Value& v : a.list(0)) {
             THUNDER_CHECK(v.is_tensor(), "prims.update_aliases: expected tensors, got {}",
                           v.str());
             const Proxy& p = *v.proxy();
             outs.emplace_back(new_tensor(p.shape, p.dtype, p.device));
           }
           return Value(std::move(outs));
         });
}

}  // namespace detail

Value copy_(const Value& src, const Value& dst) { THUNDER_PRIM_CALL("prims.copy_", src, dst); }

}  // namespace thunder::prims
