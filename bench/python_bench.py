"""thunder_cpp from Python against eager PyTorch, in one process, reps
interleaved: per-call cost of a cache hit (3 ops on small tensors, and a
small module), a small MLP's train step (fwd + bwd + AdamW), and the
char-GPT training step of `thunder_bench capture` (fwd + bwd of the same
model, B16 T64 C128, 2 layers), whose eager/jit ratio compares with that
row's eager torch::nn / captured jit. Medians with min and max; at 1 and 2
threads. Run: PYTHONPATH=build/python /usr/bin/python3 bench/python_bench.py"""
import math
import platform
import statistics
import time

import torch

import thunder_cpp


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def interleaved(fns, reps, inner):
    times = {name: [] for name in fns}
    for _ in range(reps):
        for name, fn in fns.items():
            start = time.perf_counter()
            for _ in range(inner):
                fn()
            times[name].append((time.perf_counter() - start) / inner)
    return times


def row(label, times, unit, scale):
    e, j = times["eager"], times["jit"]
    me, mj = statistics.median(e), statistics.median(j)
    print(f"{label:<38} eager {me * scale:9.2f} {unit} [{min(e) * scale:.2f}, {max(e) * scale:.2f}]"
          f"   jit {mj * scale:9.2f} {unit} [{min(j) * scale:.2f}, {max(j) * scale:.2f}]"
          f"   eager/jit {me / mj:5.2f}x")


def overhead():
    fn = lambda x, y: (x * y + x).sin()
    jfn = thunder_cpp.jit(fn)
    x, y = torch.randn(8), torch.randn(8)
    jfn(x, y)
    times = interleaved({"eager": lambda: fn(x, y), "jit": lambda: jfn(x, y)}, reps=15, inner=2000)
    row("3 ops on 8 floats, per call", times, "us", 1e6)


def module_overhead():
    # A module's hit also reads every submodule's training flag and the
    # identities of its parameters, buffers and children.
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Tanh(), torch.nn.Linear(8, 8))
    jm = thunder_cpp.jit(model)
    x = torch.randn(2, 8)
    with torch.no_grad():
        jm(x)
        times = interleaved({"eager": lambda: model(x), "jit": lambda: jm(x)}, reps=15, inner=2000)
    row("Linear-Tanh-Linear, no_grad, per call", times, "us", 1e6)


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(256, 1024)
        self.fc2 = torch.nn.Linear(1024, 256)

    def forward(self, x, t):
        h = torch.nn.functional.gelu(self.fc1(x))
        return ((self.fc2(h) - t) ** 2).mean()


def train_step():
    torch.manual_seed(0)
    eager, jitted = MLP(), MLP()
    jitted.load_state_dict(eager.state_dict())
    jm = thunder_cpp.jit(jitted)
    x, t = torch.randn(512, 256), torch.randn(512, 256)
    opt_e = torch.optim.AdamW(eager.parameters(), lr=1e-3)
    opt_j = torch.optim.AdamW(jitted.parameters(), lr=1e-3)

    def step(model, opt):
        opt.zero_grad()
        model(x, t).backward()
        opt.step()

    step(jm, opt_j)
    times = interleaved({"eager": lambda: step(eager, opt_e), "jit": lambda: step(jm, opt_j)},
                        reps=9, inner=5)
    row("MLP 512x256->1024->256 train step", times, "ms", 1e3)


class CharGPTBlock(torch.nn.Module):
    """examples/torch_char_gpt.h's block, op for op."""

    def __init__(self, c, heads):
        super().__init__()
        self.c, self.heads = c, heads
        self.ln1 = torch.nn.LayerNorm(c)
        self.qkv = torch.nn.Linear(c, 3 * c)
        self.proj = torch.nn.Linear(c, c)
        self.ln2 = torch.nn.LayerNorm(c)
        self.fc = torch.nn.Linear(c, 4 * c)
        self.fc_out = torch.nn.Linear(4 * c, c)

    def attention(self, x):
        b, t, c = x.shape
        hd = c // self.heads
        q, k, v = (p.view(b, t, self.heads, hd).transpose(1, 2) for p in self.qkv(x).split(c, 2))
        att = q.matmul(k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
        future = torch.ones(t, t, dtype=torch.bool).triu(1)
        att = torch.softmax(att.masked_fill(future, float("-inf")), -1)
        return self.proj(att.matmul(v).transpose(1, 2).reshape(b, t, c))

    def forward(self, x):
        h = x + self.attention(self.ln1(x))
        return h + self.fc_out(torch.nn.functional.gelu(self.fc(self.ln2(h)), approximate="tanh"))


class CharGPT(torch.nn.Module):
    def __init__(self, vocab=65, context=64, c=128, heads=4, layers=2):
        super().__init__()
        self.wte = torch.nn.Embedding(vocab, c)
        self.wpe = torch.nn.Embedding(context, c)
        self.h = torch.nn.ModuleList(CharGPTBlock(c, heads) for _ in range(layers))
        self.ln_f = torch.nn.LayerNorm(c)
        self.lm_head = torch.nn.Linear(c, vocab, bias=False)

    def forward(self, idx, targets):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[2]),
                                                 targets.reshape(-1))


def char_gpt_step():
    torch.manual_seed(1)
    eager, jitted = CharGPT(), CharGPT()
    jitted.load_state_dict(eager.state_dict())
    jm = thunder_cpp.jit(jitted)
    idx, targets = torch.randint(65, (16, 64)), torch.randint(65, (16, 64))

    def step(model, params):
        for p in params:
            p.grad = None
        model(idx, targets).backward()

    pe, pj = list(eager.parameters()), list(jitted.parameters())
    step(jm, pj)
    times = interleaved({"eager": lambda: step(eager, pe), "jit": lambda: step(jm, pj)},
                        reps=9, inner=3)
    row("char-GPT step (fwd+bwd, as capture's)", times, "ms", 1e3)


def main():
    print(f"thunder_cpp Python benchmarks: torch {torch.__version__}, {cpu_model()}")
    for threads in (1, 2):
        torch.set_num_threads(threads)
        print(f"-- {threads} intra-op thread(s)")
        overhead()
        module_overhead()
        train_step()
        char_gpt_step()


if __name__ == "__main__":
    main()
