"""thunder_cpp.jit on PyTorch code written in Python, against eager PyTorch:
values, gradients (float64), effects on inputs, grad mode, modules and their
training flag, the seed scenarios, introspection and errors."""
import math

import pytest
import torch

import thunder_cpp


def assert_close(got, want, tol=1e-12):
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    assert torch.allclose(got, want, rtol=tol, atol=tol), (got, want)


def leaves(*shapes):
    torch.manual_seed(0)
    return [torch.randn(*s, dtype=torch.float64, requires_grad=True) for s in shapes]


def grads_of(fn, args):
    out = fn(*args)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    sum(o.sum() for o in outs).backward()
    return out, [a.grad.clone() for a in args]


OPS = {
    "pointwise": lambda x, y: torch.tanh(x * 2 + y).exp() - torch.sigmoid(y) / 3,
    "broadcast": lambda x, y: x * y[0] + y.mean(),
    "reductions": lambda x, y: (x.sum(1, keepdim=True) * y.amax(0)).softmax(-1),
    "matmul": lambda x, y: torch.nn.functional.gelu(x @ y.t()),
    "views": lambda x, y: x.transpose(0, 1).reshape(-1) * y.flatten(),
    "layer_norm": lambda x, y: torch.nn.functional.layer_norm(x + y, (4,)),
    "two_results": lambda x, y: (torch.relu(x), x * y),
    "split_chunk": lambda x, y: x.split(2, dim=1)[1] * y.chunk(2, dim=1)[0],
    "masked_fill_triu": lambda x, y: x.masked_fill(torch.triu(y, 1) > 0.5, -1.0) * y,
    "sub_div_pow_sqrt": lambda x, y: (x - y * 0.5) / (y.abs() + 1) + (x * x + 1).sqrt() ** 1.5,
    "where_ge": lambda x, y: torch.where(x >= y, x * 3, y.neg()),
    "log_softmax_mean": lambda x, y: torch.log_softmax(x * y, -1).mean(0),
    "gelu_tanh_sigmoid": lambda x, y: torch.nn.functional.gelu(x, approximate="tanh") * y.sigmoid(),
    "cat_stack": lambda x, y: torch.cat([x, y], 0) * torch.stack([x, y]).sum(0).repeat(2, 1),
    "max_gather": lambda x, y: x.gather(1, y.max(1, keepdim=True)[1]) + y.max(-1)[0].unsqueeze(1),
    "scatter_add_index_select": lambda x, y: torch.zeros_like(x).scatter_add(
        1, torch.tensor([[0, 3], [1, 1], [2, 0]]), y[:, :2]) + x.index_select(0, torch.tensor([2, 0, 1])),
    "embedding_cross_entropy": lambda x, y: torch.nn.functional.cross_entropy(
        torch.nn.functional.embedding(torch.tensor([1, 0, 2, 1]), x) @ y.t(), torch.tensor([0, 2, 1, 1])),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_values_and_gradients_match_eager(name):
    fn = OPS[name]
    x, y = leaves((3, 4), (3, 4))
    xe, ye = [t.detach().clone().requires_grad_() for t in (x, y)]
    want, want_grads = grads_of(fn, [xe, ye])
    jfn = thunder_cpp.jit(fn)
    got, got_grads = grads_of(jfn, [x, y])
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_close(g, w)
    else:
        assert_close(got, want)
    for g, w in zip(got_grads, want_grads):
        assert_close(g, w)
    # The backward is ours: the result's grad_fn is not eager PyTorch's.
    first = got[0] if isinstance(got, tuple) else got
    assert first.grad_fn is not None
    assert thunder_cpp.cache_misses(jfn) == 1


def test_cache_hit_does_not_run_python():
    calls = []

    def fn(x):
        calls.append(1)
        return torch.sin(x) + 1

    jfn = thunder_cpp.jit(fn)
    x = torch.randn(5)
    for _ in range(3):
        assert_close(jfn(x), torch.sin(x) + 1, 1e-6)
    assert len(calls) == 1
    assert thunder_cpp.cache_hits(jfn) == 2
    jfn(torch.randn(7))  # a new shape: one more trace
    assert len(calls) == 2 and thunder_cpp.cache_misses(jfn) == 2


def test_no_grad_inside_and_around():
    # The seed: x + x * ones with the product under no_grad gives x.grad == 1.
    def fn(x):
        with torch.no_grad():
            p = x * torch.ones_like(x)
        return x + p

    jfn = thunder_cpp.jit(fn)
    x = torch.randn(4, requires_grad=True)
    jfn(x).sum().backward()
    assert torch.equal(x.grad, torch.ones(4))
    with torch.no_grad():
        out = jfn(x)
    assert not out.requires_grad
    assert thunder_cpp.cache_misses(jfn) == 2  # grad mode is in the cache key
    with torch.no_grad():
        jfn(x)
    assert thunder_cpp.cache_misses(jfn) == 2 and thunder_cpp.cache_hits(jfn) == 1


def test_in_place_updates_of_arguments_are_visible_afterwards():
    # An SGD-style step under no_grad on a leaf, and `+=` on a view of another
    # argument: the caller's tensors change exactly as eagerly, once per call.
    def fn(w, g, acc):
        with torch.no_grad():
            w.add_(g, alpha=-0.1)
        acc[0] += g.sum(0)
        return w * 2 + acc.sum()

    torch.manual_seed(0)
    w, g, acc = torch.randn(3, 2, requires_grad=True), torch.randn(3, 2), torch.zeros(2, 2)
    we, acce = w.detach().clone(), acc.clone()
    jfn = thunder_cpp.jit(fn)
    for _ in range(3):
        got = jfn(w, g, acc)
        want = fn(we, g, acce)
        assert_close(got.detach(), want, 1e-6)
        assert_close(w.detach(), we, 1e-6)
        assert_close(acc, acce, 1e-6)
    assert w.is_leaf and w.requires_grad
    assert thunder_cpp.cache_misses(jfn) == 1


def test_a_gradient_through_an_argument_written_in_place_reads_the_written_value():
    # After the call the caller's h holds h + 1; the backward must use what
    # the forward read, not h again (rematerialization recomputes h + 1 from h).
    def f(h, w):
        h.add_(1.0)
        return torch.nn.functional.linear(h, w)

    torch.manual_seed(0)
    hidden = torch.randn(6, 4, dtype=torch.float64)
    (w,) = leaves((3, 4))
    ew = w.detach().clone().requires_grad_()
    eh = hidden.clone()
    f(eh, ew).square().sum().backward()
    jfn = thunder_cpp.jit(f)
    for _ in range(2):
        h = hidden.clone()
        w.grad = None
        jfn(h, w).square().sum().backward()
        assert torch.equal(h, eh)
        assert_close(w.grad, ew.grad)


def test_a_write_that_needs_a_gradient_into_an_argument_is_refused():
    x, w = torch.randn(3), torch.randn(3, requires_grad=True)
    before = x.clone()
    jfn = thunder_cpp.jit(lambda x, w: x.add_(w) * 2)
    with pytest.raises(thunder_cpp.Error, match="aten::add_.Tensor"):
        jfn(x, w)
    assert torch.equal(x, before) and not x.requires_grad
    ok = thunder_cpp.jit(lambda a, b: (a * 1.0).add_(b))  # in place on a fresh tensor
    assert_close(ok(x, before).detach(), x + before, 1e-6)


class Counter(torch.nn.Module):
    """A buffer updated in place by forward, as batch norm's step count."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 2)
        self.register_buffer("seen", torch.zeros((), dtype=torch.long))
        self.register_buffer("total", torch.zeros(2))

    def forward(self, x):
        y = self.fc(x)
        self.seen += x.shape[0]
        with torch.no_grad():
            self.total.add_(y.sum(0))
        return y.relu()


def test_module_buffers_updated_in_place_match_eager():
    torch.manual_seed(1)
    eager, jitted = Counter(), Counter()
    jitted.load_state_dict(eager.state_dict())
    jm = thunder_cpp.jit(jitted)
    x = torch.randn(4, 3)
    for _ in range(3):
        jm(x).sum().backward()
        eager(x).sum().backward()
    assert jitted.seen.item() == 12
    assert_close(jitted.total, eager.total, 1e-5)
    assert_close(jitted.fc.weight.grad, eager.fc.weight.grad, 1e-5)


def test_batch_norm_trains_and_updates_running_stats_like_eager():
    torch.manual_seed(3)
    eager = torch.nn.Sequential(torch.nn.BatchNorm2d(3), torch.nn.Tanh()).double()
    jitted = torch.nn.Sequential(torch.nn.BatchNorm2d(3), torch.nn.Tanh()).double()
    with torch.no_grad():
        eager[0].weight.uniform_(0.5, 1.5)
        eager[0].bias.uniform_(-0.5, 0.5)
    jitted.load_state_dict(eager.state_dict())
    jm = thunder_cpp.jit(jitted)
    opt_e = torch.optim.SGD(eager.parameters(), lr=0.1)
    opt_j = torch.optim.SGD(jm.parameters(), lr=0.1)
    for _ in range(3):
        x = torch.randn(4, 3, 5, 5, dtype=torch.float64) * 3 + 1
        xe, xj = x.clone().requires_grad_(), x.clone().requires_grad_()
        for model, opt, xi in ((eager, opt_e, xe), (jm, opt_j, xj)):
            opt.zero_grad()
            (model(xi) ** 2).sum().backward()
            opt.step()
        assert_close(xj.grad, xe.grad, 1e-10)
        for name in ("running_mean", "running_var", "weight", "bias"):
            assert_close(getattr(jitted[0], name).detach(), getattr(eager[0], name).detach(), 1e-10)
    assert jitted[0].num_batches_tracked.item() == 3
    assert thunder_cpp.cache_misses(jm) == 1
    assert "ltorch.batch_norm(" in str(thunder_cpp.last_traces(jm)[0])
    eager.eval()
    jitted.eval()
    x = torch.randn(2, 3, 4, 4, dtype=torch.float64)
    assert_close(jm(x), eager(x), 1e-10)
    assert jitted[0].num_batches_tracked.item() == 3


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(6, 8)
        self.fc2 = torch.nn.Linear(8, 3)
        self.drop = torch.nn.Dropout(0.0)

    def forward(self, x):
        return self.fc2(self.drop(torch.nn.functional.gelu(self.fc1(x))))


def test_module_trains_with_torch_optim_like_eager():
    torch.manual_seed(1)
    eager = MLP().double()
    jitted_model = MLP().double()
    jitted_model.load_state_dict(eager.state_dict())
    jm = thunder_cpp.jit(jitted_model)
    assert len(list(jm.parameters())) == 4  # reaches the original module
    opt_e = torch.optim.AdamW(eager.parameters(), lr=1e-2)
    opt_j = torch.optim.AdamW(jm.parameters(), lr=1e-2)
    x = torch.randn(5, 6, dtype=torch.float64)
    t = torch.randn(5, 3, dtype=torch.float64)
    for _ in range(5):
        for model, opt in ((eager, opt_e), (jm, opt_j)):
            opt.zero_grad()
            loss = ((model(x) - t) ** 2).mean()
            loss.backward()
            opt.step()
    for pe, pj in zip(eager.parameters(), jitted_model.parameters()):
        assert_close(pj.detach(), pe.detach(), 1e-10)
    assert thunder_cpp.cache_misses(jm) == 1
    # Parameters are the trace's inputs, named by their path in the module.
    assert "t_fc1_weight" in str(thunder_cpp.last_traces(jm)[0])


def test_replacing_a_parameter_or_submodule_recompiles():
    torch.manual_seed(4)
    model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Tanh())
    jm = thunder_cpp.jit(model)
    x = torch.randn(2, 3)
    assert_close(jm(x), model(x), 1e-6)
    with torch.no_grad():
        model[0].weight.mul_(2)  # in place: the same entry reads it
    assert_close(jm(x), model(x), 1e-6)
    assert thunder_cpp.cache_misses(jm) == 1
    model[0].weight = torch.nn.Parameter(torch.randn(3, 3))
    assert_close(jm(x), model(x), 1e-6)
    assert thunder_cpp.cache_misses(jm) == 2
    model[0] = torch.nn.Linear(3, 3)
    assert_close(jm(x), model(x), 1e-6)
    assert thunder_cpp.cache_misses(jm) == 3
    jm(x)
    assert thunder_cpp.cache_hits(jm) == 2
    assert "prologue.check_module_identities()" in str(thunder_cpp.last_prologue_trace(jm))


def test_module_eval_and_train_are_separate_entries():
    torch.manual_seed(2)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5))
    jm = thunder_cpp.jit(model)
    x = torch.randn(2, 4)
    model.eval()
    assert_close(jm(x), model(x), 1e-6)
    model.train()
    jm(x)
    model.eval()
    assert_close(jm(x), model(x), 1e-6)
    assert thunder_cpp.cache_misses(jm) == 2 and thunder_cpp.cache_hits(jm) == 1


def test_dropout_policies_saved_bytes():
    x = torch.rand(1024, 1024, requires_grad=True)
    fn = lambda t: torch.nn.functional.dropout(t, 0.5, True) * 2

    def saved(jfn):
        jfn(x).sum().backward()
        return {dtype: sum(b for _, _, d, b in thunder_cpp.last_saved_for_backward(jfn) if d == dtype)
                for dtype in (torch.int64, torch.bool)}

    philox = saved(thunder_cpp.jit(fn))
    assert philox[torch.int64] == 16 and philox[torch.bool] == 0  # seed and offset
    mask = saved(thunder_cpp.jit(fn, disable_replace_uniform=True))
    assert mask[torch.bool] == 1024 * 1024  # the 1-byte mask


def test_checkpoint_recomputes_the_region_in_the_backward():
    def block(x, w):
        return torch.tanh(x @ w).exp()

    def plain(x, w):
        return (block(x, w) * x).sum()

    def checkpointed(x, w):
        return (thunder_cpp.checkpoint(block, x, w) * x).sum()

    (x, w), (ex, ew) = leaves((64, 64), (64, 64)), leaves((64, 64), (64, 64))
    plain(ex, ew).backward()
    saved = {}
    for fn in (plain, checkpointed):
        jfn = thunder_cpp.jit(fn)
        x.grad = w.grad = None
        jfn(x, w).backward()
        assert_close(x.grad, ex.grad)
        assert_close(w.grad, ew.grad)
        saved[fn.__name__] = sum(b for *_, b in thunder_cpp.last_saved_for_backward(jfn))
    # The region's 32 KiB intermediate is recomputed from x and w instead of saved.
    assert saved["checkpointed"] < saved["plain"], saved
    # Eagerly it is just the call.
    assert_close(thunder_cpp.checkpoint(block, ex, ew), block(ex, ew))


def test_dropout_mask_is_the_same_in_forward_and_backward():
    x = torch.ones(64, 64, requires_grad=True)
    jfn = thunder_cpp.jit(lambda t: torch.nn.functional.dropout(t, 0.5, True))
    out = jfn(x)
    out.sum().backward()
    assert torch.equal(x.grad, out.detach())  # grad is 2 exactly where the output kept 2


def test_traces_print_as_programs():
    jfn = thunder_cpp.jit(lambda x: torch.exp(x * 2 + 1), arg_names=["x"])
    jfn(torch.randn(3))
    traces = thunder_cpp.last_traces(jfn)
    assert traces[0].stage == "Tracing"
    first = str(traces[0])
    assert "def computation(x):" in first, first
    assert "ltorch.mul(x, 2" in first and "ltorch.exp(" in first
    assert "cppFusion0" in str(traces[-1])
    assert "prologue.check_tensor_metadata" in str(thunder_cpp.last_prologue_trace(jfn))
    stats = thunder_cpp.compile_stats(jfn)
    assert stats["compiles"] == 1 and stats["fusion_regions"] == 1
    assert [name for name, _ in stats["pass_ms"]][0] == "Tracing"


GOLDEN_FINAL_TRACE = """\
def computation(x):
  # x: "cpu f32[3]"
  [t2] = cppFusion0(x)  # t2: "cpu f32[3]"
    # t0 = prims.mul(x, 2.0)  # t0: "cpu f32[3]"
    # t1 = prims.add(t0, 1.0)  # t1: "cpu f32[3]"
    # t2 = prims.exp(t1)  # t2: "cpu f32[3]"
  del x
  return [t2]
"""


def test_final_trace_golden():
    # The program that runs, as printed: one fused region, the input deleted
    # after its last use. (The first line is the stage and its time.)
    jfn = thunder_cpp.jit(lambda x: torch.exp(x * 2 + 1), arg_names=["x"])
    jfn(torch.randn(3))
    final = str(thunder_cpp.last_traces(jfn)[-1])
    header, body = final.split("\n", 1)
    assert header.startswith("# Constructed by Delete Last Used (took "), header
    assert body == GOLDEN_FINAL_TRACE, body


def test_examine_lists_the_aten_ops():
    report = thunder_cpp.examine(lambda x: torch.relu(x) + 1, torch.randn(3))
    assert "aten::relu" in report and "aten::add" in report


def test_errors_are_thunder_cpp_errors_and_leave_the_function_usable():
    assert issubclass(thunder_cpp.Error, RuntimeError)
    with pytest.raises(thunder_cpp.Error, match="unknown option 'fusion'"):
        thunder_cpp.jit(lambda x: x, fusion="dataflow")
    with pytest.raises(thunder_cpp.Error, match="fusion_type"):
        thunder_cpp.jit(lambda x: x, fusion_type="everything")
    jfn = thunder_cpp.jit(lambda x: x * 2)
    with pytest.raises(thunder_cpp.Error, match="argument 0 is a str"):
        jfn("1.5")
    with pytest.raises(thunder_cpp.Error, match="called with 0 tensors"):
        jfn(1.5)
    with pytest.raises(thunder_cpp.Error, match="result 0 is a str"):
        thunder_cpp.jit(lambda x: "no")(torch.randn(2))
    x = torch.randn(3)
    assert_close(jfn(x), x * 2, 1e-6)


def test_python_exception_inside_the_function_propagates_and_nothing_is_cached():
    state = {"fail": True}

    def fn(x):
        if state["fail"]:
            raise ValueError("user code failed")
        return x + 1

    jfn = thunder_cpp.jit(fn)
    x = torch.randn(3)
    with pytest.raises(ValueError, match="user code failed"):
        jfn(x)
    state["fail"] = False
    assert_close(jfn(x), x + 1, 1e-6)
    # The failed trace was a miss that cached nothing; the retry compiled one entry.
    assert thunder_cpp.compile_stats(jfn)["cache_entries"] == 1
    assert_close(jfn(x), x + 1, 1e-6)
    assert thunder_cpp.cache_hits(jfn) == 1


def test_write_report(tmp_path):
    jfn = thunder_cpp.jit(lambda x: torch.nn.functional.dropout(x * 2, 0.5, True), arg_names=["x"])
    jfn(torch.randn(8, 8, requires_grad=True))
    page = tmp_path / "report.html"
    thunder_cpp.write_report(jfn, str(page))
    html = page.read_text()
    for section in ("stages", "backward-stages", "graphs", "saved", "guards", "timings"):
        assert f'<section id="{section}"' in html
    # The saved table lists exactly what the compiled forward keeps.
    rows = html.count('<tr class="saved"')
    assert rows == len(thunder_cpp.last_saved_for_backward(jfn)) and rows > 0
    with pytest.raises(thunder_cpp.Error, match="not been called yet"):
        thunder_cpp.write_report(thunder_cpp.jit(lambda x: x), str(page))


def test_python_numbers_are_guarded_by_value_and_keep_their_type():
    traced = []

    def fn(x, n, scale, flip):
        traced.append((type(n), type(scale), type(flip)))
        for _ in range(n):  # an int stays an int
            x = torch.tanh(x) * scale
        return -x if flip else x

    def eager(x, n, scale, flip):
        for _ in range(n):
            x = torch.tanh(x) * scale
        return -x if flip else x

    jfn = thunder_cpp.jit(fn)
    x = torch.randn(6, dtype=torch.float64)
    for args in ((2, 1.5, False), (2, 1.5, False), (3, 1.5, False), (2, 0.5, True)):
        assert_close(jfn(x, *args), eager(x, *args))
    assert traced[0] == (int, float, bool)
    assert thunder_cpp.cache_misses(jfn) == 3 and thunder_cpp.cache_hits(jfn) == 1
    guards = str(thunder_cpp.last_prologue_trace(jfn))
    assert "prologue.check_literal('number1', 0.5)" in guards, guards
    # The same numbers in other positions are another call shape.
    jfn2 = thunder_cpp.jit(lambda a, x: x * a)
    jfn2(2.0, x)
    assert_close(jfn2(3.0, x), x * 3.0)
    assert thunder_cpp.cache_misses(jfn2) == 2


def test_runtime_numbers_are_inputs_not_guarded_values():
    # A step size changing every call (a learning-rate schedule) must not
    # compile an entry per value.
    def step(w, g, lr, n):
        return w - g * lr * n

    jfn = thunder_cpp.jit(step, runtime_numbers=True)
    w = torch.randn(4, 3)
    g = torch.randn(4, 3)
    for i, lr in enumerate([0.1, 0.05, 0.025]):
        out = jfn(w, g, lr, i + 1)
        assert out.dtype == torch.float32  # promotes like the Python numbers
        assert_close(out, step(w, g, lr, i + 1), 1e-6)
    assert thunder_cpp.cache_misses(jfn) == 1 and thunder_cpp.cache_hits(jfn) == 2
    first = str(thunder_cpp.last_traces(jfn)[0])
    assert 'lr: "cpu f64[]"' in first and 'n: "cpu i64[]"' in first, first
    # Without the option each value is its own entry.
    guarded = thunder_cpp.jit(step)
    for lr in [0.1, 0.05]:
        guarded(w, g, lr, 1)
    assert thunder_cpp.cache_misses(guarded) == 2


def test_factories_are_part_of_the_trace_not_captured_constants():
    # torch.ones_like returns a shallow copy of the tensor capture saw made.
    def fn(x):
        return x * torch.ones_like(x) + torch.zeros(x.shape[0], 1) + torch.full_like(x, 2.0)

    jfn = thunder_cpp.jit(fn)
    x = torch.randn(3, 4, requires_grad=True)
    assert_close(jfn(x), fn(x), 1e-6)
    first = str(thunder_cpp.last_traces(jfn)[0])
    assert "t_captured" not in first, first
    assert "ltorch.ones(" in first and "ltorch.zeros(" in first and "ltorch.full(" in first


def test_an_empty_tensor_filled_in_place():
    def fn(x):
        t = torch.empty(4)
        t.fill_(3.0)
        return x * t

    x = torch.randn(2, 4)
    assert_close(thunder_cpp.jit(fn)(x), x * 3.0, 1e-6)


def test_data_of_a_value_with_history_is_refused():
    # .data is a copy made outside the dispatcher; capturing it would bake
    # this run's values into the trace.
    jfn = thunder_cpp.jit(lambda x: (x * 2).data + x)
    with pytest.raises(thunder_cpp.Error, match="other autograd state"):
        jfn(torch.randn(3, requires_grad=True))


def test_every_submodule_flag_is_guarded_exactly():
    # 70 submodules: each flag is its own guard (no packing into one number,
    # where submodules 1 and 63 once shared a bit).
    model = torch.nn.Sequential(*[torch.nn.Dropout(0.5) for _ in range(69)])
    jm = thunder_cpp.jit(model)
    x = torch.ones(8)
    model.train()
    model[0].eval()  # submodule 1 of model.modules()
    jm(x)
    model[0].train()
    model[62].eval()  # submodule 63
    jm(x)
    assert thunder_cpp.cache_misses(jm) == 2
    guards = str(thunder_cpp.last_prologue_trace(jm))
    assert "prologue.check_module_training" in guards, guards


def test_transformer_encoder_layer_trains_like_eager_and_eval_is_its_own_entry():
    torch.manual_seed(4)
    make = lambda: torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0).double()
    eager, jitted_model = make(), make()
    jitted_model.load_state_dict(eager.state_dict())
    jm = thunder_cpp.jit(jitted_model)
    opt_e = torch.optim.AdamW(eager.parameters(), lr=1e-2)
    opt_j = torch.optim.AdamW(jm.parameters(), lr=1e-2)
    x = torch.randn(6, 2, 8, dtype=torch.float64)
    target = torch.randn(6, 2, 8, dtype=torch.float64)
    for _ in range(3):
        losses = []
        for model, opt in ((eager, opt_e), (jm, opt_j)):
            opt.zero_grad()
            loss = ((model(x) - target) ** 2).mean()
            loss.backward()
            losses.append(loss.detach())
        assert_close(losses[1], losses[0])
        for (name, pe), pj in zip(eager.named_parameters(), jitted_model.parameters()):
            assert pj.grad is not None, name
            assert_close(pj.grad, pe.grad, 1e-10)
        opt_e.step()
        opt_j.step()
    assert thunder_cpp.cache_misses(jm) == 1
    eager.eval()
    jitted_model.eval()
    with torch.no_grad():
        assert_close(jm(x), eager(x), 1e-12)
    assert thunder_cpp.cache_misses(jm) == 2


def test_small_gpt_trains_with_adamw_like_eager():
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).parents[2] / "examples" / "python" / "train_gpt.py"
    spec = importlib.util.spec_from_file_location("train_gpt", path)
    gpt = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpt)
    torch.manual_seed(5)
    eager = gpt.GPT(vocab=17, context=8, dim=16, heads=2, layers=2).double()
    jitted_model = gpt.GPT(vocab=17, context=8, dim=16, heads=2, layers=2).double()
    jitted_model.load_state_dict(eager.state_dict())
    jm = thunder_cpp.jit(jitted_model)
    opt_e = torch.optim.AdamW(eager.parameters(), lr=3e-3)
    opt_j = torch.optim.AdamW(jm.parameters(), lr=3e-3)
    mask = torch.triu(torch.ones(8, 8, dtype=torch.bool), diagonal=1)
    positions = torch.arange(8)
    for _ in range(5):
        data = torch.randint(0, 17, (3, 9))
        idx, targets = data[:, :-1], data[:, 1:]
        losses = []
        for model, opt in ((eager, opt_e), (jm, opt_j)):
            opt.zero_grad()
            loss = model(idx, targets, mask, positions)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        assert_close(losses[1], losses[0])
    for (name, pe), pj in zip(eager.named_parameters(), jitted_model.parameters()):
        assert_close(pj.detach(), pe.detach(), 1e-10)
    assert thunder_cpp.cache_misses(jm) == 1 and thunder_cpp.cache_hits(jm) == 4


def attention_as_written(q, k, v):
    t = q.shape[-2]
    att = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    future = torch.ones(t, t, dtype=torch.bool).triu(1)
    return att.masked_fill(future, float("-inf")).softmax(-1) @ v


def test_hand_written_attention_runs_as_one_attention():
    # The pipeline rewrites it into scaled_dot_product_attention (same values
    # and gradients, no [.., T, T] probabilities saved); recognize_attention=False
    # keeps it as written.
    torch.manual_seed(0)
    values = [torch.randn(2, 3, 9, 4, dtype=torch.float64) for _ in range(3)]
    leaves = [t.clone().requires_grad_() for t in values]
    expected = attention_as_written(*leaves)
    expected.sum().backward()
    for recognize in (True, False):
        jfn = thunder_cpp.jit(attention_as_written, recognize_attention=recognize)
        args = [t.clone().requires_grad_() for t in values]
        out = jfn(*args)
        assert_close(out, expected.detach())
        out.sum().backward()
        for got, want in zip(args, leaves):
            assert_close(got.grad, want.grad)
        stages = [t.stage for t in thunder_cpp.last_traces(jfn)]
        assert ("Recognize attention" in stages) == recognize, stages
        saved_scores = [s for _, s, *_ in thunder_cpp.last_saved_for_backward(jfn) if list(s)[-2:] == [9, 9]]
        assert bool(saved_scores) != recognize, saved_scores
