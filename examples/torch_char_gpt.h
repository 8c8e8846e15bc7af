// The character-level GPT of char_gpt.h written in plain libtorch, as a
// libtorch user would write it: torch::nn modules (TORCH_MODULE holders),
// at::Tensor and torch::nn::functional, nothing from thunder. thunder::jit
// compiles it unmodified (capture, docs/capture.md).
#pragma once

#include <torch/torch.h>

#include <cmath>
#include <string>

namespace thunder::models {

struct TorchCharGPTBlockImpl : torch::nn::Module {
  int64_t C, heads;
  torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
  torch::nn::Linear qkv{nullptr}, proj{nullptr}, fc{nullptr}, fc_out{nullptr};

  TorchCharGPTBlockImpl(int64_t c, int64_t n_heads) : C(c), heads(n_heads) {
    ln1 = register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c})));
    qkv = register_module("qkv", torch::nn::Linear(c, 3 * c));
    proj = register_module("proj", torch::nn::Linear(c, c));
    ln2 = register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c})));
    fc = register_module("fc", torch::nn::Linear(c, 4 * c));
    fc_out = register_module("fc_out", torch::nn::Linear(4 * c, c));
  }

  // Causal multi-head self-attention.
  torch::Tensor attention(const torch::Tensor& x) {
    const int64_t B = x.size(0), T = x.size(1), hd = C / heads;
    auto parts = qkv(x).split(C, 2);
    auto split_heads = [&](const torch::Tensor& t) {
      return t.view({B, T, heads, hd}).transpose(1, 2);
    };
    torch::Tensor q = split_heads(parts[0]), k = split_heads(parts[1]), v = split_heads(parts[2]);
    torch::Tensor att = q.matmul(k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(hd)));
    torch::Tensor future = torch::ones({T, T}, torch::kBool).triu(1);
    att = torch::softmax(att.masked_fill(future, -INFINITY), -1);
    return proj(att.matmul(v).transpose(1, 2).reshape({B, T, C}));
  }

  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor h = x + attention(ln1(x));
    return h + fc_out(torch::gelu(fc(ln2(h)), "tanh"));
  }
};
TORCH_MODULE(TorchCharGPTBlock);

struct TorchCharGPTImpl : torch::nn::Module {
  torch::nn::Embedding wte{nullptr}, wpe{nullptr};
  torch::nn::ModuleList blocks;
  torch::nn::LayerNorm ln_f{nullptr};
  torch::nn::Linear lm_head{nullptr};

  TorchCharGPTImpl(int64_t vocab, int64_t ctx, int64_t c, int64_t n_heads, int64_t n_layers) {
    wte = register_module("wte", torch::nn::Embedding(vocab, c));
    wpe = register_module("wpe", torch::nn::Embedding(ctx, c));
    for (int64_t i = 0; i < n_layers; ++i) blocks->push_back(TorchCharGPTBlock(c, n_heads));
    register_module("h", blocks);
    ln_f = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c})));
    lm_head = register_module("lm_head",
                              torch::nn::Linear(torch::nn::LinearOptions(c, vocab).bias(false)));
  }

  // idx, targets: [B, T] int64 character ids; returns the mean next-character loss.
  torch::Tensor forward(const torch::Tensor& idx, const torch::Tensor& targets) {
    const int64_t T = idx.size(1);
    torch::Tensor x = wte(idx) + wpe(torch::arange(T, torch::kLong));
    for (const auto& block : *blocks) x = block->as<TorchCharGPTBlock>()->forward(x);
    torch::Tensor logits = lm_head(ln_f(x));
    return torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(2)}),
                                                targets.reshape({-1}));
  }
};
TORCH_MODULE(TorchCharGPT);

}  // namespace thunder::models
