// Finds attention written out by hand and makes it one
// ltorch.scaled_dot_product_attention statement, so the attention executor
// runs it in tiles and training saves each query row's log-sum-exp instead of
// the [.., T, S] probabilities (docs/attention.md):
//
//   s = ltorch.matmul(q, ltorch.transpose(k, -2, -1))
//   s = ltorch.mul(s, 1 / sqrt(D))        (or div by sqrt(D); before or after the mask)
//   s = ltorch.masked_fill(s, causal, -inf)   (optional: is_causal)
//   p = ltorch.softmax(s, -1)
//   o = ltorch.matmul(p, v)
//
// `causal` must be a mask the trace computes from constants alone and that is
// exactly torch's top-left causal mask: triu(ones or a nonzero full, 1) of
// shape [.., L, S] with leading dims 1, as bool directly or through
// `> c` (0 <= c < fill) or `!= 0`. A mask that is an input is a run-time
// value and is left alone, as is a chain whose intermediates (scores,
// probabilities) anything else reads, a scale other than 1/sqrt(D), or q, k
// and v that ltorch.scaled_dot_product_attention would reject. The new
// statement keeps o's proxy; dead mask and transpose statements are removed.
#pragma once

#include "thunder/core/trace.h"

namespace thunder {

Trace recognize_attention(const Trace& trace);

}  // namespace thunder
