"""thunder_cpp from Python against eager PyTorch, in one process, reps
interleaved: per-call cost of a cache hit (3 ops on small tensors, and a
small module) and a small MLP's train step (fwd + bwd + AdamW). Medians
with min and max; at 1 and 2 threads. Run: PYTHONPATH=build/python /usr/bin/python3 bench/python_bench.py"""
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


def main():
    print(f"thunder_cpp Python benchmarks: torch {torch.__version__}, {cpu_model()}")
    for threads in (1, 2):
        torch.set_num_threads(threads)
        print(f"-- {threads} intra-op thread(s)")
        overhead()
        module_overhead()
        train_step()


if __name__ == "__main__":
    main()
