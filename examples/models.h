// Small models written against thunder::nn, with a plain-libtorch twin of
// each forward that reads the same parameters: tests compare losses and
// gradients, benchmarks compare time and saved-for-backward memory.
#pragma once

#include <ATen/ATen.h>
#include <thunder/thunder.h>

#include <cmath>

namespace thunder::models {

namespace F = nn::functional;

// Linear -> GELU -> Dropout -> Linear.
struct MLP : nn::Module {
  nn::Linear fc1, fc2;
  nn::Dropout drop;
  MLP(int64_t d, int64_t hidden, double p = 0.0) : fc1(d, hidden), fc2(hidden, d), drop(p) {
    register_module("fc1", fc1);
    register_module("fc2", fc2);
    register_module("drop", drop);
  }
  Tensor forward(const Tensor& x) { return fc2(drop(F::gelu(fc1(x)))); }
  at::Tensor reference(const at::Tensor& x) {
    at::Tensor h = at::gelu(at::linear(x, fc1.weight.aten(), fc1.bias.aten()));
    return at::linear(at::dropout(h, drop.p, is_training()), fc2.weight.aten(), fc2.bias.aten());
  }
};

// A GPT-style block with token embedding and a language-model loss:
// pre-LayerNorm causal self-attention and MLP with residuals, then
// cross-entropy against the next tokens.
struct GPTBlock : nn::Module {
  int64_t C, heads;
  nn::Embedding wte;
  nn::LayerNorm ln1, ln2, ln_f;
  nn::Linear qkv, proj, fc, fc_out, lm_head;
  GPTBlock(int64_t vocab, int64_t c, int64_t n_heads)
      : C(c),
        heads(n_heads),
        wte(vocab, c),
        ln1(c),
        ln2(c),
        ln_f(c),
        qkv(c, 3 * c),
        proj(c, c),
        fc(c, 4 * c),
        fc_out(4 * c, c),
        lm_head(c, vocab, false) {
    register_module("wte", wte);
    register_module("ln1", ln1);
    register_module("qkv", qkv);
    register_module("proj", proj);
    register_module("ln2", ln2);
    register_module("fc", fc);
    register_module("fc_out", fc_out);
    register_module("ln_f", ln_f);
    register_module("lm_head", lm_head);
  }

  Tensor attention(const Tensor& x) {
    int64_t B = x.size(0), T = x.size(1), hd = C / heads;
    std::vector<Tensor> qkv_parts = qkv(x).split(C, 2);
    auto heads_of = [&](const Tensor& t) { return t.view({B, T, heads, hd}).transpose(1, 2); };
    Tensor q = heads_of(qkv_parts[0]), k = heads_of(qkv_parts[1]), v = heads_of(qkv_parts[2]);
    Tensor att = q.matmul(k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(hd)));
    Tensor mask = thunder::ones({T, T}, at::TensorOptions().dtype(at::kBool)).triu(1);
    att = F::softmax(att.masked_fill(mask, -INFINITY), -1);
    Tensor y = att.matmul(v).transpose(1, 2).reshape({B, T, C});
    return proj(y);
  }

  Tensor forward(const Tensor& idx, const Tensor& targets) {
    Tensor x = wte(idx);
    x = x + attention(ln1(x));
    x = x + fc_out(F::gelu(fc(ln2(x)), "tanh"));
    Tensor logits = lm_head(ln_f(x));
    int64_t V = logits.size(2);
    return F::cross_entropy(logits.reshape({-1, V}), targets.reshape({-1}));
  }

  at::Tensor reference(const at::Tensor& idx, const at::Tensor& targets) {
    auto lin = [](nn::Linear& l, const at::Tensor& x) {
      return at::linear(x, l.weight.aten(), l.bias.defined() ? l.bias.aten() : at::Tensor());
    };
    auto ln = [](nn::LayerNorm& l, const at::Tensor& x) {
      return at::layer_norm(x, l.normalized_shape, l.weight.aten(), l.bias.aten(), l.eps);
    };
    at::Tensor x = at::embedding(wte.weight.aten(), idx);
    int64_t B = x.size(0), T = x.size(1), hd = C / heads;
    auto parts = lin(qkv, ln(ln1, x)).split(C, 2);
    auto h = [&](const at::Tensor& t) { return t.view({B, T, heads, hd}).transpose(1, 2); };
    at::Tensor att = h(parts[0]).matmul(h(parts[1]).transpose(-2, -1)) / std::sqrt(double(hd));
    at::Tensor mask = at::ones({T, T}, at::kBool).triu(1);
    att = at::softmax(att.masked_fill(mask, -INFINITY), -1);
    x = x + lin(proj, att.matmul(h(parts[2])).transpose(1, 2).reshape({B, T, C}));
    x = x + lin(fc_out, at::gelu(lin(fc, ln(ln2, x)), "tanh"));
    at::Tensor logits = lin(lm_head, ln(ln_f, x));
    return at::cross_entropy_loss(logits.reshape({-1, logits.size(2)}), targets.reshape({-1}));
  }
};

}  // namespace thunder::models
