// A small character-level GPT written against thunder::nn: token and position
// embeddings, pre-LayerNorm blocks of causal multi-head self-attention and a
// GELU MLP with residuals, a final LayerNorm and a language-model head trained
// with cross-entropy on the next character.
#pragma once

#include <thunder/thunder.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace thunder::models {

struct CharGPTBlock : nn::Module {
  int64_t C, heads;
  nn::LayerNorm ln1, ln2;
  nn::Linear qkv, proj, fc, fc_out;
  CharGPTBlock(int64_t c, int64_t n_heads)
      : C(c),
        heads(n_heads),
        ln1(c),
        ln2(c),
        qkv(c, 3 * c),
        proj(c, c),
        fc(c, 4 * c),
        fc_out(4 * c, c) {
    register_module("ln1", ln1);
    register_module("qkv", qkv);
    register_module("proj", proj);
    register_module("ln2", ln2);
    register_module("fc", fc);
    register_module("fc_out", fc_out);
  }

  Tensor attention(const Tensor& x) {
    namespace F = nn::functional;
    int64_t B = x.size(0), T = x.size(1), hd = C / heads;
    std::vector<Tensor> parts = qkv(x).split(C, 2);
    auto split_heads = [&](const Tensor& t) { return t.view({B, T, heads, hd}).transpose(1, 2); };
    Tensor q = split_heads(parts[0]), k = split_heads(parts[1]), v = split_heads(parts[2]);
    Tensor y = F::scaled_dot_product_attention(q, k, v, /*is_causal=*/true);
    return proj(y.transpose(1, 2).reshape({B, T, C}));
  }

  Tensor forward(const Tensor& x) {
    namespace F = nn::functional;
    Tensor h = x + attention(ln1(x));
    return h + fc_out(F::gelu(fc(ln2(h)), "tanh"));
  }
};

struct CharGPT : nn::Module {
  int64_t context;
  nn::Embedding wte, wpe;
  std::vector<std::unique_ptr<CharGPTBlock>> blocks;
  nn::LayerNorm ln_f;
  nn::Linear lm_head;
  CharGPT(int64_t vocab, int64_t ctx, int64_t c, int64_t n_heads, int64_t n_layers)
      : context(ctx), wte(vocab, c), wpe(ctx, c), ln_f(c), lm_head(c, vocab, false) {
    register_module("wte", wte);
    register_module("wpe", wpe);
    for (int64_t i = 0; i < n_layers; ++i) {
      blocks.push_back(std::make_unique<CharGPTBlock>(c, n_heads));
      register_module("h" + std::to_string(i), *blocks.back());
    }
    register_module("ln_f", ln_f);
    register_module("lm_head", lm_head);
  }

  // idx, targets: [B, T] int64 character ids; returns the mean next-character loss.
  Tensor forward(const Tensor& idx, const Tensor& targets) {
    namespace F = nn::functional;
    int64_t T = idx.size(1);
    Tensor x = wte(idx) + wpe(thunder::arange(T, at::TensorOptions().dtype(at::kLong)));
    for (auto& b : blocks) x = b->forward(x);
    Tensor logits = lm_head(ln_f(x));
    return F::cross_entropy(logits.reshape({-1, logits.size(2)}), targets.reshape({-1}));
  }
};

}  // namespace thunder::models
