"""Dropout under thunder_cpp.jit with its three recompute policies, and what
each keeps for the backward (a 1024x1024 input):

  default                      the backward replays the Philox draw from the
                               saved seed and offset (16 bytes)
  disable_replace_uniform=True the stateful draw stays, so the 1-byte mask is saved
  DONT_RECOMPUTE_IN_BACKWARD   a tag on ltorch.dropout keeps the mask even with Philox

Run: PYTHONPATH=build/python /usr/bin/python3 examples/python/dropout_policies.py
"""
import torch

import thunder_cpp


def dropout_scale(x):
    return torch.nn.functional.dropout(x, p=0.5, training=True) * 3.0


def saved_bytes(jfn):
    return sum(nbytes for _, _, _, nbytes in thunder_cpp.last_saved_for_backward(jfn))


def run(label, jfn, x):
    out = jfn(x)
    out.sum().backward()
    # The gradient is 6 exactly where the forward kept an element (3 / (1 - p)),
    # so the backward used the forward's mask whichever way it got it.
    kept = out.detach() != 0
    assert torch.equal(x.grad != 0, kept)
    assert torch.allclose(x.grad[kept], torch.full_like(x.grad[kept], 6.0))
    print(f"{label:<34} saved for backward: {saved_bytes(jfn):>9} bytes")
    for name, shape, dtype, nbytes in thunder_cpp.last_saved_for_backward(jfn):
        print(f"    {name:<8} {str(tuple(shape)):<14} {str(dtype):<14} {nbytes} bytes")
    x.grad = None
    return saved_bytes(jfn)


def main():
    torch.manual_seed(0)
    # Strictly positive, so a zero output is a dropped element (torch.rand
    # draws exact zeros: one in 2^24, about one run in 16 at this size).
    x = (torch.rand(1024, 1024) + 0.5).requires_grad_()
    default = thunder_cpp.jit(dropout_scale)
    philox = run("default (Philox replay)", default, x)
    print("\n  its final backward:\n")
    print(thunder_cpp.last_backward_traces(default)[-1])
    mask = run("disable_replace_uniform=True",
               thunder_cpp.jit(dropout_scale, disable_replace_uniform=True), x)
    # A tag lasts for the rest of the process: every jitted function recompiles.
    thunder_cpp.add_tags("ltorch.dropout", [thunder_cpp.OpTag.DONT_RECOMPUTE_IN_BACKWARD])
    tagged = run("DONT_RECOMPUTE_IN_BACKWARD on dropout", thunder_cpp.jit(dropout_scale), x)
    assert philox == 16, philox
    assert mask >= 1024 * 1024 and tagged >= 1024 * 1024, (mask, tagged)


if __name__ == "__main__":
    main()
