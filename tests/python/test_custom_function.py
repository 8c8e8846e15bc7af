"""Custom torch.autograd.Function subclasses inside thunder_cpp.jit: traced
with their backward (the forward's ops as one statement named after the class,
the backward recorded from the class's backward), against eager PyTorch in
float64: values, gradients, a backward that updates a saved tensor in place,
and the errors."""
import pytest
import torch

import thunder_cpp


def assert_close(got, want, tol=1e-12):
    assert got.shape == want.shape and got.dtype == want.dtype
    assert torch.allclose(got, want, rtol=tol, atol=tol), (got, want)


def twins(*shapes):
    """Leaves for the jitted run and equal ones for the eager run."""
    torch.manual_seed(0)
    a = [torch.randn(*s, dtype=torch.float64, requires_grad=True) for s in shapes]
    return a, [t.detach().clone().requires_grad_() for t in a]


class ScaledTanh(torch.autograd.Function):
    """save_for_backward, a ctx attribute, a Python number argument."""

    @staticmethod
    def forward(ctx, x, scale):
        y = torch.tanh(x) * scale
        ctx.save_for_backward(y)
        ctx.scale = scale
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * (ctx.scale - y * y / ctx.scale), None


class SelectGates(torch.autograd.Function):
    """The MoE router's gate selection: its backward scatters the incoming
    gradient into a zero tensor it saved, in place."""

    @staticmethod
    def forward(ctx, gates, selected):
        masked_gates = torch.zeros_like(gates)
        ctx.save_for_backward(masked_gates, selected)
        return gates.gather(-1, selected)

    @staticmethod
    def backward(ctx, grad):
        masked_gates, selected = ctx.saved_tensors
        masked_gates.scatter_add_(-1, selected, grad)
        return masked_gates, None


def router(hidden, w_gate, fill=-1.0):
    # (The seed program fills with -1e4: the softmax is then one-hot and its
    # gradient exactly zero, which would compare nothing.)
    logits = torch.nn.functional.linear(hidden, w_gate)
    top, selected = logits.max(-1, keepdim=True)
    probs = torch.softmax(logits.masked_fill(logits < top, fill), -1)
    gate = SelectGates.apply(probs, selected)
    return gate * probs.gather(-1, selected) + hidden.sum(1, keepdim=True)


def test_values_and_gradients_match_eager():
    def fn(x, w):
        return ScaledTanh.apply(x @ w, 3.0).sum(1) + ScaledTanh.apply(w, 0.5).sum()

    (x, w), (ex, ew) = twins((5, 4), (4, 4))
    jfn = thunder_cpp.jit(fn)
    out = jfn(x, w)
    want = fn(ex, ew)
    assert_close(out, want)
    out.sum().backward()
    want.sum().backward()
    assert_close(x.grad, ex.grad)
    assert_close(w.grad, ew.grad)


def test_the_forward_is_one_statement_and_the_backward_its_own():
    (x, w), _ = twins((5, 4), (4, 4))
    jfn = thunder_cpp.jit(lambda x, w: ScaledTanh.apply(x @ w, 3.0))
    jfn(x, w).sum().backward()
    first = str(thunder_cpp.last_traces(jfn)[0])
    # t1 = ScaledTanh(t0), its decomposition below it as comments.
    assert " = ScaledTanh(" in first, first
    assert "ltorch.tanh" in first, first
    joint = "\n".join(str(t) for t in thunder_cpp.last_backward_traces(jfn))
    assert " = ScaledTanh_backward(" in joint, joint


def test_cache_hits_run_no_python_and_the_gradient_is_right_each_time():
    calls = []

    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            calls.append("forward")
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            calls.append("backward")
            (x,) = ctx.saved_tensors
            return 2 * x * g

    jfn = thunder_cpp.jit(lambda x: Square.apply(x).sum())
    for i in range(3):
        (x,), _ = twins((6,))
        with torch.no_grad():
            x.mul_(i + 1)
        jfn(x).backward()
        assert_close(x.grad, 2 * x.detach())
    # Recorded once, on the first call: forward, then backward on stand-ins.
    assert calls == ["forward", "backward"]
    assert thunder_cpp.cache_misses(jfn) == 1 and thunder_cpp.cache_hits(jfn) == 2


@pytest.mark.parametrize("fusion_type", ["dataflow", "consecutive"])
def test_router_backward_scatters_into_a_saved_tensor_in_place(fusion_type):
    torch.manual_seed(1)
    hidden = torch.randn(32, 16, dtype=torch.float64)
    (w,), (ew,) = twins((4, 16))
    jfn = thunder_cpp.jit(router, fusion_type=fusion_type)
    out = jfn(hidden, w)
    want = router(hidden, ew)
    assert_close(out, want)
    out.square().sum().backward()
    want.square().sum().backward()
    assert_close(w.grad, ew.grad)
    assert w.grad.abs().sum() > 0  # the gate path carries a gradient
    backward = str(thunder_cpp.last_backward_traces(jfn)[0])
    assert "SelectGates_backward(" in backward, backward


def test_the_caller_tensors_are_untouched_by_the_recorded_backward():
    class AddIntoSaved(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, buf):
            ctx.save_for_backward(buf)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            (buf,) = ctx.saved_tensors
            buf.add_(g)  # in place into an argument the caller owns
            return buf.clone(), None

    x = torch.randn(4, dtype=torch.float64, requires_grad=True)
    buf = torch.zeros(4, dtype=torch.float64)
    jfn = thunder_cpp.jit(lambda x, b: AddIntoSaved.apply(x, b))
    jfn(x, buf).sum().backward()
    assert torch.equal(buf, torch.zeros(4, dtype=torch.float64))
    assert torch.equal(x.grad, torch.ones(4, dtype=torch.float64))


def test_two_outputs_one_marked_non_differentiable():
    class TopOne(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            values, index = x.max(-1, keepdim=True)
            ctx.mark_non_differentiable(index)
            ctx.save_for_backward(index)
            ctx.width = x.shape[-1]
            return values, index

        @staticmethod
        def backward(ctx, g, g_index):
            (index,) = ctx.saved_tensors
            out = torch.zeros(g.shape[0], ctx.width, dtype=g.dtype)
            return out.scatter_add(-1, index, g)

    def fn(x):
        values, index = TopOne.apply(x)
        assert not index.requires_grad
        return values * 3 + index

    (x,), (ex,) = twins((5, 7))
    jfn = thunder_cpp.jit(fn)
    out = jfn(x)
    want = fn(ex)
    assert_close(out, want)
    out.sum().backward()
    want.sum().backward()
    assert_close(x.grad, ex.grad)


def test_needs_input_grad_and_no_grad_around():
    seen = []

    class Mul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            seen.append(ctx.needs_input_grad)
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b, g * a

    a = torch.randn(3, dtype=torch.float64, requires_grad=True)
    b = torch.randn(3, dtype=torch.float64)
    jfn = thunder_cpp.jit(lambda a, b: Mul.apply(a, b))
    jfn(a, b).sum().backward()
    assert seen[-1] == (True, False)
    assert_close(a.grad, b)
    with torch.no_grad():
        y = jfn(a, b)
    assert not y.requires_grad
    assert seen[-1] == (False, False)


class WrongCount(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        return x + y

    @staticmethod
    def backward(ctx, g):
        return (g,)


class WrongShape(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.sum(0)

    @staticmethod
    def backward(ctx, g):
        return g


class Dirty(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.mark_dirty(x)
        return x


class Identity(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        return g


@pytest.mark.parametrize(
    "fn, message",
    [
        (lambda x: WrongCount.apply(x, x), "'WrongCount': backward returned 1 gradients, expected 2"),
        (lambda x: WrongShape.apply(x), "gradient of shape \\[4\\] for argument 0 of shape \\[3, 4\\]"),
        (lambda x: Dirty.apply(x * 1), "mark_dirty"),
        (lambda x: Identity.apply(x), "'Identity': forward returns its argument x as it is"),
    ],
)
def test_errors_name_the_class_and_leave_the_function_usable(fn, message):
    calls = {"n": 0}

    def f(x):
        calls["n"] += 1
        return fn(x) if calls["n"] == 1 else x * 2

    jfn = thunder_cpp.jit(f)
    x = torch.randn(3, 4, requires_grad=True)
    before = x.detach().clone()
    with pytest.raises(thunder_cpp.Error, match=message):
        jfn(x)
    assert torch.equal(x.detach(), before)
    assert torch.equal(jfn(x), x * 2)  # traced again, usable
    # Function.apply is torch's own again outside the jitted call.
    y = torch.randn(3, requires_grad=True)
    ScaledTanh.apply(y, 2.0).sum().backward()
    assert y.grad is not None


def test_examine_lists_the_forward_and_backward_ops():
    table = thunder_cpp.examine(router, torch.randn(8, 16), torch.randn(4, 16, requires_grad=True))
    assert "aten::gather" in table and "aten::scatter_add_" in table, table
    assert table.rstrip().endswith("11 translated, 0 unsupported"), table
