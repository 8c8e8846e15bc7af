// The examples' training data: a short text bundled with the repo
// (examples/data/harbour.txt, written for it), as character ids, and random
// windows of it as next-character batches.
#pragma once

#include <ATen/ATen.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace thunder::examples {

struct Corpus {
  std::string text;
  std::string vocab;  // the distinct characters, sorted
  at::Tensor ids;     // the text as vocabulary indices
};

inline Corpus load_corpus(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  Corpus c;
  c.text = ss.str();
  c.vocab = c.text;
  std::sort(c.vocab.begin(), c.vocab.end());
  c.vocab.erase(std::unique(c.vocab.begin(), c.vocab.end()), c.vocab.end());
  std::vector<int64_t> ids;
  for (char ch : c.text) ids.push_back(static_cast<int64_t>(c.vocab.find(ch)));
  c.ids = at::tensor(ids, at::kLong);
  return c;
}

// `steps` batches of `batch` random windows (seeded: every run and every
// rank sees the same ones): inputs [batch, context] and the next characters.
inline std::vector<std::pair<at::Tensor, at::Tensor>> make_batches(const Corpus& c, int steps,
                                                                   int64_t batch, int64_t context) {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int64_t> start(0, c.ids.numel() - context - 2);
  std::vector<std::pair<at::Tensor, at::Tensor>> out;
  for (int s = 0; s < steps; ++s) {
    std::vector<at::Tensor> xs, ys;
    for (int64_t b = 0; b < batch; ++b) {
      int64_t i = start(rng);
      xs.push_back(c.ids.narrow(0, i, context));
      ys.push_back(c.ids.narrow(0, i + 1, context));
    }
    out.emplace_back(at::stack(xs), at::stack(ys));
  }
  return out;
}

}  // namespace thunder::examples
