"""A small GPT in plain PyTorch, trained with AdamW eagerly and under
thunder_cpp.jit from the same weights: the losses agree step by step, and
the jitted step is timed against the eager one.

Run: PYTHONPATH=build/python /usr/bin/python3 examples/python/train_gpt.py [steps]
"""
import math
import sys
import time

import torch

import thunder_cpp


class Block(torch.nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.ln2 = torch.nn.LayerNorm(dim)
        self.fc = torch.nn.Linear(dim, 4 * dim)
        self.out = torch.nn.Linear(4 * dim, dim)

    def forward(self, x, mask):
        b, t, c = x.shape
        h = self.heads
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q = q.reshape(b, t, h, c // h).transpose(1, 2)
        k = k.reshape(b, t, h, c // h).transpose(1, 2)
        v = v.reshape(b, t, h, c // h).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(c // h))
        att = att.masked_fill(mask, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, c)
        x = x + self.proj(y)
        return x + self.out(torch.nn.functional.gelu(self.fc(self.ln2(x))))


class GPT(torch.nn.Module):
    def __init__(self, vocab=64, context=32, dim=64, heads=4, layers=2):
        super().__init__()
        self.tok = torch.nn.Embedding(vocab, dim)
        self.pos = torch.nn.Embedding(context, dim)
        self.blocks = torch.nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.ln = torch.nn.LayerNorm(dim)
        self.head = torch.nn.Linear(dim, vocab, bias=False)

    def forward(self, idx, targets, mask, positions):
        x = self.tok(idx) + self.pos(positions)
        for block in self.blocks:
            x = block(x, mask)
        logits = self.head(self.ln(x))
        return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 targets.reshape(-1))


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    torch.manual_seed(0)
    eager, jitted = GPT(), GPT()
    jitted.load_state_dict(eager.state_dict())
    jm = thunder_cpp.jit(jitted)
    opt_e = torch.optim.AdamW(eager.parameters(), lr=3e-3)
    opt_j = torch.optim.AdamW(jitted.parameters(), lr=3e-3)
    t = 32
    mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
    positions = torch.arange(t)
    data = torch.randint(0, 64, (16, t + 1))
    idx, targets = data[:, :-1], data[:, 1:]
    times = {"eager": 0.0, "jit": 0.0}
    for step in range(steps):
        losses = {}
        for name, model, opt in (("eager", eager, opt_e), ("jit", jm, opt_j)):
            start = time.perf_counter()
            opt.zero_grad()
            loss = model(idx, targets, mask, positions)
            loss.backward()
            opt.step()
            if step > 0:  # the first jitted step compiles
                times[name] += time.perf_counter() - start
            losses[name] = loss.item()
        if step % 10 == 0 or step == steps - 1:
            print(f"step {step:3d}  eager {losses['eager']:.4f}  jit {losses['jit']:.4f}")
        assert abs(losses["eager"] - losses["jit"]) < 1e-3 * max(1.0, losses["eager"]), losses
    if steps > 1:
        e, j = times["eager"] / (steps - 1), times["jit"] / (steps - 1)
        print(f"train step: eager {e * 1e3:.2f} ms, jit {j * 1e3:.2f} ms ({e / j:.2f}x); "
              f"saved for backward: {sum(b for *_, b in thunder_cpp.last_saved_for_backward(jm))} bytes")
    print(f"compiles: {thunder_cpp.cache_misses(jm)}, hits: {thunder_cpp.cache_hits(jm)}")


if __name__ == "__main__":
    main()
