"""torch.no_grad() inside and around a jitted function, as in eager PyTorch:
values made under no_grad inside are constants for the backward, and grad
mode around the call is part of the cache key (one compile per mode).

Run: PYTHONPATH=build/python /usr/bin/python3 examples/python/no_grad.py
"""
import torch

import thunder_cpp


def f(x):
    with torch.no_grad():
        p = x * torch.ones_like(x)  # a constant to autograd
    return x + p


def main():
    jf = thunder_cpp.jit(f)
    x = torch.randn(5, requires_grad=True)
    jf(x).sum().backward()
    print("x.grad under jit:", x.grad)  # all ones: no gradient through p
    assert torch.equal(x.grad, torch.ones(5))
    with torch.no_grad():
        y = jf(x)
    assert not y.requires_grad
    print("compiles:", thunder_cpp.cache_misses(jf), "(grad mode on, then off)")
    print(thunder_cpp.last_prologue_trace(jf))
    assert thunder_cpp.cache_misses(jf) == 2


if __name__ == "__main__":
    main()
