// The character-level GPT of torch_char_gpt.h as a TorchScript module, made
// in C++ with `define` as a user's exported model.pt would hold it: Linear,
// LayerNorm and Embedding submodules called as `self.fc.forward(x)`, blocks
// h0, h1, ... (TorchScript source cannot index a ModuleList), the same
// parameters copied from a torch::nn model, in its order.
#pragma once

#include <torch/script.h>

#include <cmath>
#include <string>

#include "torch_char_gpt.h"

namespace thunder::models {

namespace script_parts {

inline at::Tensor copy(const at::Tensor& t) {
  return t.detach().clone().requires_grad_(t.requires_grad());
}

inline torch::jit::Module module(const std::string& type) {
  torch::jit::Module m(type);
  m.register_attribute("training", c10::BoolType::get(), true);
  return m;
}

inline torch::jit::Module linear(const torch::nn::Linear& l) {
  torch::jit::Module m = module("Linear");
  m.register_parameter("weight", copy(l->weight), false);
  if (l->bias.defined()) {
    m.register_parameter("bias", copy(l->bias), false);
    m.define("def forward(self, x):\n    return torch.linear(x, self.weight, self.bias)\n");
  } else {
    m.define("def forward(self, x):\n    return torch.linear(x, self.weight, None)\n");
  }
  return m;
}

inline torch::jit::Module layer_norm(const torch::nn::LayerNorm& l) {
  torch::jit::Module m = module("LayerNorm");
  m.register_attribute("shape", c10::ListType::ofInts(),
                       c10::List<int64_t>(l->options.normalized_shape()));
  m.register_attribute("eps", c10::FloatType::get(), l->options.eps());
  m.register_parameter("weight", copy(l->weight), false);
  m.register_parameter("bias", copy(l->bias), false);
  m.define(R"(
def forward(self, x):
    return torch.layer_norm(x, self.shape, self.weight, self.bias, self.eps)
)");
  return m;
}

inline torch::jit::Module embedding(const torch::nn::Embedding& e) {
  torch::jit::Module m = module("Embedding");
  m.register_parameter("weight", copy(e->weight), false);
  m.define("def forward(self, idx):\n    return torch.embedding(self.weight, idx)\n");
  return m;
}

inline torch::jit::Module block(TorchCharGPTBlockImpl& b) {
  torch::jit::Module m = module("Block");
  m.register_attribute("C", c10::IntType::get(), b.C);
  m.register_attribute("heads", c10::IntType::get(), b.heads);
  m.register_attribute("scale", c10::FloatType::get(),
                       1.0 / std::sqrt(static_cast<double>(b.C / b.heads)));
  m.register_module("ln1", layer_norm(b.ln1));
  m.register_module("qkv", linear(b.qkv));
  m.register_module("proj", linear(b.proj));
  m.register_module("ln2", layer_norm(b.ln2));
  m.register_module("fc", linear(b.fc));
  m.register_module("fc_out", linear(b.fc_out));
  m.define(R"(
def attention(self, x):
    B = x.size(0)
    T = x.size(1)
    hd = self.C // self.heads
    parts = self.qkv.forward(x).split(self.C, 2)
    q = parts[0].view([B, T, self.heads, hd]).transpose(1, 2)
    k = parts[1].view([B, T, self.heads, hd]).transpose(1, 2)
    v = parts[2].view([B, T, self.heads, hd]).transpose(1, 2)
    att = torch.matmul(q, k.transpose(-2, -1)) * self.scale
    future = torch.ones([T, T]).triu(1) > 0.5
    att = torch.softmax(att.masked_fill(future, float("-inf")), -1)
    return self.proj.forward(torch.matmul(att, v).transpose(1, 2).reshape([B, T, self.C]))

def forward(self, x):
    h = x + self.attention(self.ln1.forward(x))
    return h + self.fc_out.forward(torch.gelu(self.fc.forward(self.ln2.forward(h)), approximate="tanh"))
)");
  return m;
}

}  // namespace script_parts

// forward(idx, targets) -> the mean next-character loss, as TorchCharGPT.
inline torch::jit::Module script_char_gpt(TorchCharGPT& model) {
  using namespace script_parts;
  torch::jit::Module m = module("CharGPT");
  m.register_module("wte", embedding(model->wte));
  m.register_module("wpe", embedding(model->wpe));
  std::string blocks;
  for (size_t i = 0; i < model->blocks->size(); ++i) {
    const std::string name = "h" + std::to_string(i);
    m.register_module(name, block(*model->blocks[i]->as<TorchCharGPTBlock>()));
    blocks += "    x = self." + name + ".forward(x)\n";
  }
  m.register_module("ln_f", layer_norm(model->ln_f));
  m.register_module("lm_head", linear(model->lm_head));
  m.define(R"(
def forward(self, idx, targets):
    T = idx.size(1)
    x = self.wte.forward(idx) + self.wpe.forward(torch.arange(T))
)" + blocks +
           R"(
    logits = self.lm_head.forward(self.ln_f.forward(x))
    return torch.cross_entropy_loss(logits.reshape([-1, logits.size(2)]), targets.reshape([-1]))
)");
  return m;
}

}  // namespace thunder::models
