"""What lesson 13 says of the default backend, checked with inductor itself.

Lesson 13 compiles with ``aot_eager_decomp_partition`` (inductor's operator
decompositions and min-cut partitioner, without inductor's graph rewrites and
code generation) and says that the default ``inductor`` backend gives the same
result on each of its examples. A lesson cannot run inductor (it compiles C++
and costs seconds), so this module builds the lesson's examples itself and
runs each with both backends: what the compiled part saves for its backward,
whether a second pass raises or is silently wrong, the donated buffers after an
ordinary backward (the flag off at run time, while compiling, or from the first
call; sin x; the fixed-shape critic) and with dynamic shapes, the gradient penalty through the
compiled critic, the step that compiles only what is differentiated once, and
``torch.func.grad`` inside the compiled function (with the lesson's Function,
and with the built-in softplus for contrast). The examples draw their own random
values, not the lesson's. It is slow: every case compiles with inductor.

inductor keeps what it compiles in AOTAutograd's cache on disk, and whichever
backward first compiled a graph there, in this process or an earlier one,
decides whether later backwards that keep the graph raise (the lesson says so,
and the last test checks it). So this module compiles in a cache folder of its
own, with AOTAutograd's cache turned off except in that test: no earlier run,
and no order of the tests, decides an outcome.
"""

from __future__ import annotations

import os

import pytest
import torch
from torch import nn
from torch._dynamo.utils import counters
from torch._inductor.utils import fresh_cache

DOUBLE_BACKWARD = "torch.compile with aot_autograd does not currently support double backward"
BACKENDS = ["aot_eager_decomp_partition", "inductor"]

torch.manual_seed(0)
W = torch.randn(3, 3, dtype=torch.float64)


def two_tanh(t):
    return 2 * torch.tanh(t @ W)


def saves_x(saved, x, out):
    return len(saved) == 1 and saved[0] is x


def saves_output(saved, x, out):
    (t,) = saved
    return t.grad_fn is out.grad_fn and t.data_ptr() == out.data_ptr()


def saves_xw_and_w(saved, x, out):
    xw, w_t = saved
    return torch.allclose(xw.flatten(), x.detach() @ W) and torch.equal(w_t, W.T)


w = torch.randn(3, dtype=torch.float64, requires_grad=True)


def w_tanh(t):
    return w * torch.tanh(t @ W)


def saves_w_first(saved, x, out):
    return saved[0] is w and not any(t.requires_grad for t in saved[1:])


# f of the lesson's h(x) = f(x) + x**2: (f, what it saves, whether a saved
# tensor requires grad, whether h'' with respect to x raises)
CASES = {
    "sin": (torch.sin, saves_x, True, True),
    "exp": (torch.exp, saves_output, True, True),
    "2 tanh(xW)": (two_tanh, saves_xw_and_w, False, False),
    "w tanh(xW)": (w_tanh, saves_w_first, True, False),
}


def new_x():
    return torch.tensor([-0.5, 0.5, 1.0], dtype=torch.float64, requires_grad=True)


def h_second(f, x, wrt=None):
    (grad,) = torch.autograd.grad((f(x) + x**2).sum(), x, create_graph=True)
    return torch.autograd.grad(grad.sum(), x if wrt is None else wrt)[0]


@pytest.fixture(scope="module", autouse=True)
def private_cache():
    """An empty cache folder of this module's own, and no AOTAutograd cache."""
    with fresh_cache(), torch._functorch.config.patch(enable_autograd_cache=False):
        # TORCHINDUCTOR_AUTOGRAD_CACHE, if set, would override the patch
        assert not torch._functorch.config.enable_autograd_cache
        yield


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", list(CASES))
def test_what_is_saved_decides_error_or_silence(case, backend):
    f, saves, tracked, raises = CASES[case]
    x = new_x()
    compiled_f = torch.compile(f, backend=backend)
    out = compiled_f(x)
    saved = out.grad_fn.saved_tensors
    assert saves(saved, x, out)
    assert any(t.requires_grad for t in saved) == tracked
    if f is w_tanh:  # w is saved and requires grad: differentiating with respect to it raises
        with pytest.raises(RuntimeError) as error:
            h_second(compiled_f, x, wrt=w)
        assert str(error.value) == DOUBLE_BACKWARD
    if raises:
        with pytest.raises(RuntimeError) as error:
            h_second(compiled_f, x)
        assert str(error.value) == DOUBLE_BACKWARD
    else:
        second = h_second(compiled_f, x)
        assert torch.equal(second, torch.full_like(x, 2.0))  # the x**2 term alone
        assert not torch.allclose(second, h_second(f, x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_compiled_part_that_saves_nothing_tracked_alone(backend):
    x = new_x()
    compiled_f = torch.compile(two_tanh, backend=backend)

    def first():
        return torch.autograd.grad(compiled_f(x).sum(), x, create_graph=True)[0]

    node = first().grad_fn
    leaves = [n.variable for n, _ in node.next_functions if n is not None]
    assert [t.shape for t in leaves] == [(0,)] and all(t.requires_grad for t in leaves)
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        torch.autograd.grad(first().sum(), x)
    assert torch.autograd.grad(first().sum(), x, allow_unused=True) == (None,)
    x.grad = None
    first().sum().backward(inputs=[x])  # passes the node by, silently
    assert x.grad is None
    with pytest.raises(RuntimeError) as error:
        first().sum().backward()
    assert str(error.value) == DOUBLE_BACKWARD
    # An incoming gradient that depends on x leads to the node.
    (grad,) = torch.autograd.grad(torch.tanh(compiled_f(x)).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError) as error:
        torch.autograd.grad(grad.sum(), x)
    assert str(error.value) == DOUBLE_BACKWARD
    # So does one that depends only on a weight, differentiated with respect to it.
    v = torch.randn(3, dtype=torch.float64, requires_grad=True)
    (grad,) = torch.autograd.grad((v * compiled_f(x)).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError) as error:
        torch.autograd.grad(grad.sum(), v)
    assert str(error.value) == DOUBLE_BACKWARD


DONATED = "This backward function was compiled with non-empty donated buffers"


def ordinary_backward_first(backend, f=two_tanh):
    x = new_x()
    compiled_f = torch.compile(f, backend=backend, dynamic=False)
    torch.autograd.grad(compiled_f(x).sum(), x)  # an ordinary backward first
    return compiled_f, x


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_ordinary_backward_first_donates_buffers(backend):
    compiled_f, x = ordinary_backward_first(backend)
    with pytest.raises(RuntimeError, match=DONATED):
        h_second(compiled_f, x)
    # The flag counts when the later backward runs: the same compiled function
    # then gives the x**2 term alone, as when its first backward kept the graph.
    with torch._functorch.config.patch(donated_buffer=False):
        assert torch.equal(h_second(compiled_f, x), torch.full_like(x, 2.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_flag_off_only_while_compiling_changes_nothing(backend):
    with torch._functorch.config.patch(donated_buffer=False):
        compiled_f, x = ordinary_backward_first(backend)
    with pytest.raises(RuntimeError, match=DONATED):
        h_second(compiled_f, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_sin_compiled_with_the_flag_off_raises_the_donated_message(backend):
    # sin saves only its input and donates nothing: compiled with the flag on,
    # it meets the error node; compiled with it off, the donated-buffer check.
    compiled_f, x = ordinary_backward_first(backend, torch.sin)
    with pytest.raises(RuntimeError) as error:
        h_second(compiled_f, x)
    assert str(error.value) == DOUBLE_BACKWARD
    torch._dynamo.reset()
    with torch._functorch.config.patch(donated_buffer=False):
        compiled_f, x = ordinary_backward_first(backend, torch.sin)
    with pytest.raises(RuntimeError, match=DONATED):
        h_second(compiled_f, x)


def test_inductor_reuses_donated_memory_when_the_flag_is_off_at_run_time_only():
    """The flag off at run time only skips the check: inductor's backward
    still reuses the donated buffers, so a second pass through a retained
    graph is silently wrong. Off from before the first call, it is right,
    unless inductor's FX graph cache holds the backward compiled with it on."""
    torch.manual_seed(0)
    weight = torch.randn(64, 64)
    x = torch.randn(8, 64, requires_grad=True)

    def f(t):
        return 2 * torch.tanh(t @ weight)

    (eager,) = torch.autograd.grad(f(x).sum(), x)

    def two_passes(compiled_f):
        out = compiled_f(x)
        passes = [torch.autograd.grad(out.sum(), x, retain_graph=True)[0] for _ in range(2)]
        # float32, and inductor fuses: equal to eager up to rounding, or far off
        return [torch.allclose(g, eager, rtol=1e-4, atol=1e-5) for g in passes]

    compiled_f = torch.compile(f, backend="inductor", dynamic=False)
    torch.autograd.grad(compiled_f(x).sum(), x)  # an ordinary backward first
    with torch._functorch.config.patch(donated_buffer=False):
        assert two_passes(compiled_f) == [True, False]  # the second pass silently wrong
    for fx_graph_cache, right in ((True, [True, False]), (False, [True, True])):
        # Compiled again with the flag off from the first call: inductor's FX
        # graph cache, if on, gives back the backward that reuses the memory.
        torch._dynamo.reset()
        with (
            torch._functorch.config.patch(donated_buffer=False),
            torch._inductor.config.patch(fx_graph_cache=fx_graph_cache),
        ):
            # TORCHINDUCTOR_FX_GRAPH_CACHE, if set, would override the patch
            assert torch._inductor.config.fx_graph_cache == fx_graph_cache
            compiled_f = torch.compile(f, backend="inductor", dynamic=False)
            torch.autograd.grad(compiled_f(x).sum(), x)
            assert two_passes(compiled_f) == right


@pytest.mark.parametrize("backend", BACKENDS)
def test_dynamic_shapes_donate_before_any_ordinary_backward(backend):
    x = new_x()
    with pytest.raises(RuntimeError, match=DONATED):
        h_second(torch.compile(two_tanh, backend=backend, dynamic=True), x)
    # The critic, with the default dynamic=None: the first batch size compiles
    # for fixed shapes, the second with a symbolic batch size.
    critic = Critic()
    compiled = torch.compile(critic.model, backend=backend)
    with pytest.raises(RuntimeError) as error:
        critic.penalty_grads(compiled, batch=32)
    assert str(error.value) == DOUBLE_BACKWARD
    with pytest.raises(RuntimeError, match=DONATED):
        critic.penalty_grads(compiled, batch=16)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_fixed_shape_critic_after_an_ordinary_backward_donates(backend):
    critic = Critic()
    compiled = torch.compile(critic.model, backend=backend, dynamic=False)
    points = critic.real.clone().requires_grad_()  # requires grad, as x_hat does
    torch.autograd.grad(compiled(points).sum(), points)  # an ordinary backward first
    with pytest.raises(RuntimeError, match=DONATED):
        critic.penalty_grads(compiled)


class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return nn.functional.softplus(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)


class SoftplusLayer(nn.Module):
    def forward(self, x):
        return Softplus.apply(x)


class Critic:
    """Lesson 13's critic, its samples and its gradient penalty."""

    def __init__(self):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(2, 16), SoftplusLayer(), nn.Linear(16, 1, bias=False))
        self.model = model.double()
        self.real = torch.randn(32, 2, dtype=torch.float64) + 2
        self.fake = torch.randn(32, 2, dtype=torch.float64)
        self.mix = torch.rand(32, 1, dtype=torch.float64)

    def x_hat(self, batch=32):
        m, r, f = self.mix[:batch], self.real[:batch], self.fake[:batch]
        return m * r + (1 - m) * f

    def penalty(self, model, batch=32):
        x_hat = self.x_hat(batch).requires_grad_()
        (grad,) = torch.autograd.grad(model(x_hat).sum(), x_hat, create_graph=True)
        return ((grad.norm(dim=1) - 1) ** 2).mean()

    def penalty_grads(self, model, batch=32):
        params = list(self.model.parameters())
        return torch.autograd.grad(self.penalty(model, batch), params, allow_unused=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_gradient_penalty_through_the_compiled_critic_raises(backend):
    critic = Critic()
    compiled = torch.compile(critic.model, backend=backend)
    x_hat = critic.x_hat().requires_grad_()
    saved = compiled(x_hat).grad_fn.saved_tensors
    assert sum(t is x_hat for t in saved) == 1
    weights = (critic.model[0].weight, critic.model[2].weight)
    assert sum(any(t is p for t in saved) for p in weights) == 2  # as they are
    assert sum(t.requires_grad for t in saved) == 3  # x_hat and the two weights
    for second_pass in (
        lambda: critic.penalty(compiled).backward(),
        lambda: critic.penalty_grads(compiled),
    ):
        with pytest.raises(RuntimeError) as error:
            second_pass()
        assert str(error.value) == DOUBLE_BACKWARD


@pytest.mark.parametrize("backend", BACKENDS)
def test_compiling_what_is_differentiated_once_equals_eager(backend):
    critic = Critic()
    model = critic.model
    compiled = torch.compile(model, backend=backend)

    def step(fast):
        model.zero_grad()
        wasserstein = fast(critic.fake).mean() - fast(critic.real).mean()
        (wasserstein + 10 * critic.penalty(model)).backward()
        return [p.grad.clone() for p in model.parameters()]

    split, reference = step(compiled), step(model)
    assert all(torch.allclose(s, r) for s, r in zip(split, reference, strict=True))


# The critic's activation: lesson 13's Function, or the built-in softplus, and
# whether each parameter's gradient then equals eager mode's (None: no gradient).
ACTIVATIONS = {
    "custom Function": (SoftplusLayer, [False, None, None]),
    "built-in softplus": (nn.Softplus, [True, True, True]),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("call", ["module", "functional_call"])
def test_func_grad_inside_the_compiled_function(call, activation, backend):
    """As in the lesson, torch.func.grad of the model itself, whose parameters
    are differentiated outside (call="module"); and of functional_call, with
    the parameters passed to the compiled function."""
    critic = Critic()
    layer, expected = ACTIVATIONS[activation]
    model = nn.Sequential(critic.model[0], layer(), critic.model[2])
    params = dict(model.named_parameters())

    def module_penalty(model, x_hat):
        grad = torch.func.grad(lambda x: model(x).sum())(x_hat)
        return ((grad.norm(dim=1) - 1) ** 2).mean()

    def functional_penalty(params, x_hat):
        def score(x):
            return torch.func.functional_call(model, params, (x,)).sum()

        grad = torch.func.grad(score)(x_hat)
        return ((grad.norm(dim=1) - 1) ** 2).mean()

    penalty, first = {
        "module": (module_penalty, model),
        "functional_call": (functional_penalty, params),
    }[call]
    eager = critic.penalty_grads(critic.model)
    value = penalty(first, critic.x_hat())
    assert torch.allclose(value, critic.penalty(critic.model))
    # In eager mode, torch.func.grad gives eager mode's gradients: the
    # difference below is the compiled function's.
    eager_grads = torch.autograd.grad(value, list(params.values()))
    assert all(torch.allclose(g, e) for g, e in zip(eager_grads, eager, strict=True))
    compiled = torch.compile(penalty, backend=backend)
    grads = torch.autograd.grad(
        compiled(first, critic.x_hat()), list(params.values()), allow_unused=True
    )
    same = [None if g is None else torch.allclose(g, e) for g, e in zip(grads, eager, strict=True)]
    assert same == expected


def cache_lookups():
    return {k: n for k, n in counters["aot_autograd"].items() if k.startswith("autograd_cache")}


@pytest.mark.parametrize("first", ["ordinary", "keeps the graph"])
def test_inductor_s_cache_lets_the_first_backward_decide(first):
    """With AOTAutograd's cache on, in an empty folder: the backward that first
    compiled the graph decides, after torch._dynamo.reset() too."""
    before = cache_lookups()
    with fresh_cache(), torch._functorch.config.patch(enable_autograd_cache=True):
        if first == "ordinary":
            ordinary_backward_first("inductor")
        else:
            x = new_x()
            h_second(torch.compile(two_tanh, backend="inductor", dynamic=False), x)
        saved = cache_lookups().get("autograd_cache_saved", 0)
        assert saved > before.get("autograd_cache_saved", 0)
        assert os.listdir(os.path.join(os.environ["TORCHINDUCTOR_CACHE_DIR"], "aotautograd"))
        torch._dynamo.reset()
        hits = cache_lookups().get("autograd_cache_hit", 0)
        # Now the other way round, which on an empty cache gives the other outcome.
        if first == "ordinary":
            x = new_x()
            with pytest.raises(RuntimeError, match=DONATED):
                h_second(torch.compile(two_tanh, backend="inductor", dynamic=False), x)
        else:
            compiled_f, x = ordinary_backward_first("inductor")
            assert torch.equal(h_second(compiled_f, x), torch.full_like(x, 2.0))
        assert cache_lookups().get("autograd_cache_hit", 0) > hits
