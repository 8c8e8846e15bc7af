"""The MoE router seed program in Python: an in-place update of an argument,
a max / masked softmax, and a custom torch.autograd.Function whose backward
scatters the incoming gradient into a zero tensor it saved, in place. Under
thunder_cpp.jit the Function's forward is one statement named after its class
and its backward is recorded from the class's backward (fusion_type="dataflow",
and "consecutive" for comparison); outputs, the argument's update and the gate
weight's gradient equal eager PyTorch.

Run: PYTHONPATH=build/python /usr/bin/python3 examples/python/moe_router.py
"""
import torch

import thunder_cpp


class SelectGates(torch.autograd.Function):
    @staticmethod
    def forward(ctx, gates, selected):
        masked_gates = torch.zeros_like(gates)
        ctx.save_for_backward(masked_gates, selected)
        return gates.gather(-1, selected)

    @staticmethod
    def backward(ctx, grad):
        masked_gates, selected = ctx.saved_tensors
        masked_gates.scatter_add_(-1, selected, grad)  # in place, into a saved tensor
        return masked_gates, None


def router(hidden, w_gate, fill=-1e4):
    hidden.mul_(0.5)
    logits = torch.nn.functional.linear(hidden, w_gate)  # [tokens, experts]
    top, selected = logits.max(-1, keepdim=True)
    probs = torch.softmax(logits.masked_fill(logits < top, fill), -1)
    gate = SelectGates.apply(probs, selected)
    return gate * probs.gather(-1, selected) + hidden.sum(1, keepdim=True)


def soft_router(hidden, w_gate):
    # The seed's -1e4 makes each softmax one-hot, whose gradient is zero; a
    # fill of -1 keeps a gradient on the gate path to compare.
    return router(hidden, w_gate, fill=-1.0)


def run(fn, hidden, w_gate):
    h = hidden.clone()
    w = w_gate.detach().clone().requires_grad_()
    out = fn(h, w)
    out.square().sum().backward()
    return out, h, w.grad


def main():
    torch.manual_seed(0)
    hidden = torch.randn(64, 32, dtype=torch.float64)
    w_gate = torch.randn(8, 32, dtype=torch.float64)
    for fn in (router, soft_router):
        want, want_h, want_grad = run(fn, hidden, w_gate)
        for fusion_type in ("dataflow", "consecutive"):
            jfn = thunder_cpp.jit(fn, fusion_type=fusion_type)
            out, h, grad = run(jfn, hidden, w_gate)
            err = max((out - want).abs().max().item(), (grad - want_grad).abs().max().item())
            print(f"{fn.__name__:11} fusion_type={fusion_type:11} max |jit - eager| "
                  f"(output, w_gate.grad): {err:.1e}")
            assert torch.allclose(out, want, rtol=1e-12, atol=1e-12)
            assert torch.equal(h, want_h)  # hidden.mul_(0.5) reached the caller
            assert torch.allclose(grad, want_grad, rtol=1e-12, atol=1e-12)
    assert want_grad.abs().sum() > 0
    print()
    print(thunder_cpp.last_traces(jfn)[0])
    print(thunder_cpp.last_backward_traces(jfn)[0])


if __name__ == "__main__":
    main()
