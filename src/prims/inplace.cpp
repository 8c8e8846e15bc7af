// In-place prims: copy_. The output is a fresh proxy standing for dst's new
// value, so passes stay in SSA form while the kernel really writes into dst.
#include "prim_util.h"

namespace thunder::prims {
namespace detail {

void register_inplace() {
  define("prims.copy_", {"src", "dst"}, tag_bits({OpTag::IN_PLACE, OpTag::DONT_DCE}),
         [](const OpArgs& a) -> Value {
           const Proxy& src = a.tensor(0);
           const Proxy& dst = a.tensor(1);
           THUNDER_CHECK(src.shape == dst.shape, "prims.copy_: shapes {} (src) and {} (dst) "
                         "must be equal", shape_str(src.shape), shape_str(dst.shape));
           THUNDER_CHECK(src.dtype == dst.dtype, "prims.copy_: dtypes {} (src) and {} (dst) "
                         "must be equal", long_name(src.dtype), long_name(dst.dtype));
           THUNDER_CHECK(src.device == dst.device, "prims.copy_: devices {} (src) and {} (dst) "
                         "must be equal", src.device.str(), dst.device.str());
           return new_tensor(dst.shape, dst.dtype, dst.device);
         });
}

}  // namespace detail

Value copy_(const Value& src, const Value& dst) { THUNDER_PRIM_CALL("prims.copy_", src, dst); }

}  // namespace thunder::prims
