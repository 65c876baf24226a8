r"""
.. _lesson-torch-compile:

Today: torch.compile and double backward
========================================

``torch.compile`` captures a function into graphs and compiles them,
forward and backward. A compiled backward, however, cannot be differentiated
again. This lesson shows what a reader meets when a gradient penalty runs
through a compiled model with a custom Function (an error, or a silently
wrong gradient, depending on what the compiled part saves for its backward
and on how it is compiled), and a structure that works, checked against eager
mode.

``torch.compile`` captures the function (Dynamo) and hands the graph to a
backend. The default, ``inductor``, splits it into a forward and a backward
graph (AOTAutograd), decomposes the operators
into simpler ones, rewrites the graph, lets a min-cut partitioner choose what
the forward saves for the backward, and generates code. This lesson compiles
with ``backend="aot_eager_decomp_partition"``, which uses the same
decompositions and partitioner but neither inductor's graph rewrites nor its
code generation, so it runs on a CPU in a moment. This site's tests run the
examples that the lesson compiles that way again, with ``inductor`` too, and
get the same results (in a cache folder of
their own, with AOTAutograd's cache, described below, off); they also check
what the page says of ``inductor`` alone. Where plain
``backend="aot_eager"``, which has the same partitioner but not inductor's
decompositions, gives a different outcome, the lesson shows it too; what it
saves can differ even where the outcome does not. The split is where double
backward stops.
"""

# %%
# A critic with a custom activation
# ---------------------------------
#
# The critic of a WGAN-GP (:ref:`lesson 10 <lesson-second-derivatives>`) with
# a softplus written as a Function in the ``setup_context`` style, which
# :func:`torch.func.grad` needs (``vmap`` would need a vmap rule too, which
# this page does not use). Its
# gradient penalty differentiates the critic's gradient with respect to its
# input.

import torch

# sphinx_gallery_thumbnail_path = "_static/thumbs/13_torch_compile.svg"
from torch import nn


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


torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(2, 16), SoftplusLayer(), nn.Linear(16, 1, bias=False)).double()
real = torch.randn(32, 2, dtype=torch.float64) + 2
fake = torch.randn(32, 2, dtype=torch.float64)
mix = torch.rand(32, 1, dtype=torch.float64)


def penalty(critic, batch=32):
    m, r, f = mix[:batch], real[:batch], fake[:batch]  # the first samples
    x_hat = (m * r + (1 - m) * f).requires_grad_()
    (grad,) = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    return ((grad.norm(dim=1) - 1) ** 2).mean()


def penalty_grads(critic, batch=32):
    """The penalty's gradient for each parameter (None: no path to it)."""
    return torch.autograd.grad(penalty(critic, batch), list(critic.parameters()), allow_unused=True)


eager = penalty_grads(critic)
assert all(g is not None for g in eager)

# %%
# Through a compiled critic: an error
# -----------------------------------
#
# The first derivative goes through the compiled backward; the penalty's
# gradient would have to differentiate that backward. AOTAutograd attaches an
# error node to it, and a second pass that reaches the node raises, by
# ``.backward()`` or by :func:`torch.autograd.grad`.
#
# Outside the section on dynamic shapes below, which shows what they change,
# this page compiles through AOTAutograd with ``dynamic=False``: for the shapes
# of the first call, compiling again for other shapes.

from torch._dynamo.utils import counters


def cache_lookups():
    """How often AOTAutograd looked in its cache on disk, by outcome (see below)."""
    return {k: n for k, n in counters["aot_autograd"].items() if k.startswith("autograd_cache")}


lookups_before = cache_lookups()
BACKEND = "aot_eager_decomp_partition"
compiled = torch.compile(critic, backend=BACKEND, dynamic=False)
messages = []
for second_pass in (lambda: penalty(compiled).backward(), lambda: penalty_grads(compiled)):
    try:
        second_pass()
    except RuntimeError as error:
        messages.append(str(error))
print("RuntimeError:", messages[0])
expected = "torch.compile with aot_autograd does not currently support double backward"
assert messages == [expected, expected]
x_hat = (mix * real + (1 - mix) * fake).requires_grad_()
saved_by_critic = compiled(x_hat).grad_fn.saved_tensors  # for the next section

# %%
# .. _compile-error-node:
#
# Where the error node hangs
# --------------------------
#
# AOTAutograd runs the compiled backward inside a Function of its own (in
# ``torch/_functorch/_aot_autograd/runtime_wrappers.py``), whose ``backward``
# raises that message. Under ``create_graph=True`` it applies that Function to
# what the compiled backward takes: the tensors the forward saved, and the
# incoming gradients. :func:`torch.autograd.grad` reaches the node only through
# those of them that are a tensor it differentiates with respect to, or lead to
# one through their chain of ``grad_fn``. Such are an input, an output or a
# weight of the compiled part, saved as it is, and an incoming gradient that
# depends on such a tensor. An intermediate result that the compiled part saves
# has no ``grad_fn``: computed from the input, it still leads nowhere.
# ``.backward()`` without ``inputs=`` runs every node it can reach, so it
# reaches the node through any of them that requires grad; with ``inputs=``, it
# prunes the pass as :func:`torch.autograd.grad` does. The critic saves its
# input :math:`\hat x` and its two weights as they are, and its penalty is
# differentiated with respect to the weights, so both passes raised. When none
# requires grad, AOTAutograd adds an empty leaf tensor of its own that requires
# grad, so that the first gradient still has a ``grad_fn``. No path leads from
# that leaf to the input, but ``.backward()`` reaches the node through it.
#
# What is saved depends on the decompositions and the partitioner. Take
# :math:`h(x) = f(x) + x^2` with only :math:`f` compiled, differentiated twice
# with :func:`torch.autograd.grad` (the incoming gradient of :math:`f` is then
# a constant). Of :math:`\sin x`, ``aot_eager_decomp_partition`` saves
# :math:`x` itself, its input. Of :math:`e^x`, it saves the output as it is
# (the same storage and ``grad_fn``), while ``aot_eager`` saves a detached
# alias of it (the same storage, no ``grad_fn``), which does not require grad:
# traced, the backward of :math:`e^x` reads the output through
# ``aten.detach``, which inductor's decompositions turn into a plain alias and
# ``aot_eager`` keeps. Of :math:`2\tanh(xW)`, with :math:`W` fixed,
# ``aot_eager_decomp_partition`` saves :math:`xW`, an intermediate result, and
# :math:`W` transposed: neither requires grad. Of :math:`w \odot \tanh(xW)`,
# with a weight :math:`w` that requires grad, it saves :math:`w` as it is,
# which requires grad but does not lead to :math:`x`. Where no saved tensor
# is :math:`x` or leads to it, :math:`h''` comes out as :math:`2`, the second
# derivative of :math:`x^2` alone, with no error, when, as here, shapes are
# fixed and the first backward through the compiled function keeps its graph
# (a section below shows an ordinary backward first, and dynamic shapes). The
# last case raises only when differentiated with respect to :math:`w`.

assert sum(t is x_hat for t in saved_by_critic) == 1
weights = (critic[0].weight, critic[2].weight)
assert sum(any(t is p for t in saved_by_critic) for p in weights) == 2  # as they are
assert sum(t.requires_grad for t in saved_by_critic) == 3  # x_hat and the two weights

W = torch.randn(3, 3, dtype=torch.float64)
x = torch.tensor([-0.5, 0.5, 1.0], dtype=torch.float64, requires_grad=True)


w = torch.randn(3, dtype=torch.float64, requires_grad=True)


def h_second(f, wrt=x):
    (grad,) = torch.autograd.grad((f(x) + x**2).sum(), x, create_graph=True)
    return torch.autograd.grad(grad.sum(), wrt)[0]


def two_tanh(t):
    return 2 * torch.tanh(t @ W)


def w_tanh(t):
    return w * torch.tanh(t @ W)


def saves_x(saved, out):
    return len(saved) == 1 and saved[0] is x


def saves_output(saved, out):
    (t,) = saved
    return t.grad_fn is out.grad_fn and t.data_ptr() == out.data_ptr()


def saves_detached_output(saved, out):
    (t,) = saved
    return t.grad_fn is None and t.data_ptr() == out.data_ptr()


def saves_xw_and_w(saved, out):
    xw, w_t = saved
    return torch.allclose(xw.flatten(), x.detach() @ W) and torch.equal(w_t, W.T)


def saves_w_first(saved, out):
    return saved[0] is w and not any(t.requires_grad for t in saved[1:])


def leads_to_x(t):
    """Whether t is x or its chain of grad_fn leads to x."""
    if t is x or not t.requires_grad:
        return t is x
    return torch.autograd.grad(t.sum(), x, retain_graph=True, allow_unused=True)[0] is not None


# name: (f, backend, what it saves, a check of that)
cases = {
    f"sin(x), {BACKEND}": (torch.sin, BACKEND, "x", saves_x),
    "exp(x), aot_eager": (torch.exp, "aot_eager", "e^x, detached", saves_detached_output),
    f"exp(x), {BACKEND}": (torch.exp, BACKEND, "e^x", saves_output),
    f"2 tanh(xW), {BACKEND}": (two_tanh, BACKEND, "xW and W.T", saves_xw_and_w),
    f"w tanh(xW), {BACKEND}": (w_tanh, BACKEND, "w and more", saves_w_first),
}
raised, requires, compiled_fs = [], [], {}
for name, (f, backend, what, check) in cases.items():
    compiled_f = compiled_fs[name] = torch.compile(f, backend=backend, dynamic=False)
    out = compiled_f(x)
    saved = out.grad_fn.saved_tensors
    assert check(saved, out)
    requires.append(any(t.requires_grad for t in saved))
    tracked = any(leads_to_x(t) for t in saved)
    try:
        second = h_second(compiled_f)
        outcome = f"h'' = {second.tolist()}, eager: {h_second(f).round(decimals=4).tolist()}"
        assert torch.equal(second, torch.full_like(x, 2.0))
        assert not torch.allclose(second, h_second(f))
    except RuntimeError as error:
        assert str(error) == expected
        outcome = "RuntimeError"
    raised.append(outcome == "RuntimeError")
    print(f"{name:38} saves {what:14} requires grad: {requires[-1]!s:5} leads to x: {tracked!s:5}")
    print(f"    {outcome}")
    assert raised[-1] == tracked
assert raised == [True, False, True, False, False]
assert requires == [True, False, True, False, True]  # w requires grad, yet h'' is silent
try:
    h_second(compiled_fs[f"w tanh(xW), {BACKEND}"], wrt=w)
except RuntimeError as error:
    print("w tanh(xW), differentiated with respect to w: RuntimeError")
    assert str(error) == expected
else:
    raise AssertionError("no error with respect to w")

from torch._inductor.compile_fx import select_decomp_table

detach = select_decomp_table()[torch.ops.aten.detach.default]
assert detach(torch.exp(x)).requires_grad and not torch.exp(x).detach().requires_grad

# %%
# Compiled by itself, without the :math:`x^2` term, :math:`2\tanh(xW)` saves
# the same (its first backward, as above, keeps the graph), and its gradient's
# ``grad_fn`` leads only to AOTAutograd's empty leaf. The second pass finds no
# path to ``x``: :func:`torch.autograd.grad` says so with a generic message,
# and ``allow_unused=True`` turns that into ``None``, silently.
# ``.backward()`` raises; ``.backward(inputs=[x])`` passes the node by and
# leaves ``x.grad`` ``None``, silently. An incoming
# gradient that depends on ``x``, as in :math:`\tanh(2\tanh(xW))`, leads to the
# node too.

compiled_tanh = compiled_fs[f"2 tanh(xW), {BACKEND}"]


def tanh_grad():
    return torch.autograd.grad(compiled_tanh(x).sum(), x, create_graph=True)[0]


node = tanh_grad().grad_fn
leaves = [n.variable for n, _ in node.next_functions if n is not None]
print(f"{type(node).__name__} leads to leaves of shapes {[tuple(t.shape) for t in leaves]}")
assert [t.shape for t in leaves] == [(0,)] and all(t.requires_grad for t in leaves)


def backward_to_x():
    x.grad = None
    tanh_grad().sum().backward(inputs=[x])
    return x.grad


outcomes = []
for second_pass in (
    lambda: torch.autograd.grad(tanh_grad().sum(), x),
    lambda: torch.autograd.grad(tanh_grad().sum(), x, allow_unused=True),
    lambda: tanh_grad().sum().backward(),
    backward_to_x,
    lambda: torch.autograd.grad(
        torch.autograd.grad(torch.tanh(compiled_tanh(x)).sum(), x, create_graph=True)[0].sum(), x
    ),
):
    try:
        outcomes.append(second_pass())
    except RuntimeError as error:
        outcomes.append(str(error))
    print(outcomes[-1])
assert "appears to not have been used in the graph" in outcomes[0]
assert outcomes[1] == (None,)
assert outcomes[2] == outcomes[4] == expected and outcomes[3] is None

# %%
# .. _compile-donated-buffers:
#
# After an ordinary backward, or with dynamic shapes: another error
# -----------------------------------------------------------------
#
# With fixed shapes, AOTAutograd compiles the backward when a backward first
# reaches it. If that backward does not keep the graph (neither
# ``create_graph=True`` nor ``retain_graph=True``), as in a training step, the
# compiled part's saved tensors that share memory with none of its inputs,
# its outputs or the gradients its backward returns, such as :math:`xW` of
# :math:`2\tanh(xW)`, become "donated buffers", whose memory the backward may
# reuse. From then on, every backward through that compiled graph (same
# shapes, same inputs requiring grad) that keeps the graph raises, already in
# its first pass. If the first backward keeps the graph, nothing is
# donated, as in the sections above. A new function is compiled for each case
# below, since Dynamo would reuse what it compiled for ``two_tanh``.
#
# .. _compile-caches:
#
# ``inductor`` keeps what it compiles on disk, in the folder
# ``TORCHINDUCTOR_CACHE_DIR`` names (by default one per user in the system's
# temporary folder). Two of its caches there matter here; it reuses them for
# the same graph, after ``torch._dynamo.reset()`` and in later processes too.
# AOTAutograd's cache keeps the compiled forward and backward, so the backward
# that first compiled a graph into it decides, in this process or an earlier
# one: after a training step has filled it, even a first backward that keeps
# the graph raises, and after a backward that kept the graph has filled it, a
# later ordinary backward donates nothing. ``TORCHINDUCTOR_AUTOGRAD_CACHE=0``
# in the environment turns it off (in Python, after
# ``import torch._functorch.config``,
# ``torch._functorch.config.enable_autograd_cache = False``), and then
# ``inductor``'s errors are those this page shows. The FX graph cache keeps the
# code ``inductor`` generates for each graph, a backward's included, and can
# still hand back one that reuses donated memory (see below);
# ``TORCHINDUCTOR_FX_GRAPH_CACHE=0`` turns it off
# (``torch._inductor.config.fx_graph_cache = False``). The backends this page
# compiles with keep nothing on disk, and Dynamo keeps something only with a
# job id set (see dynamic shapes below), so without one nothing an earlier run
# left behind changes what the page shows: the assert before the summary checks
# that none of its compiles looked in AOTAutograd's cache.
#
# The check reads ``torch._functorch.config.donated_buffer`` when the later
# backward runs (its value at compile time counts too, below): set to
# ``False`` around it, as the message says (after
# ``import torch._functorch.config``, as below: ``import torch`` alone does
# not load that module),
# :math:`2\tanh(xW)` gives :math:`h'' = 2` again, from the same compiled
# function. That only skips the check. The backward was compiled with donated
# buffers, and ``inductor``'s compiled backward may reuse their memory: in
# the one case measured (:math:`2\tanh(xW)`, :math:`W` of 64 by 64), run a
# second time through a graph kept with ``retain_graph=True``, with the flag
# off only at run time, it returned wrong gradients without an error
# (measured off this page, where ``inductor`` would be slow to compile;
# ``aot_eager_decomp_partition`` reuses no memory). Keep the flag off from
# before the first call. Compiling again is not enough with ``inductor`` while
# its FX graph cache is on: that cache keeps the backward, reuse included, and
# a compile with the flag off gets it back. Set to ``False`` only while
# compiling and during the ordinary backward, it does not prevent the error; it
# widens it. Compiled with the flag off, AOTAutograd records no list of donated
# buffers, and the check at the later backward takes that for a list that is
# not empty: even :math:`\sin x`, which saves only its input and so donates
# nothing, then raises this message, where compiled with the flag on it meets
# the error node.

import torch._functorch.config


def two_tanh_a(t):
    return two_tanh(t)


def two_tanh_b(t):
    return two_tanh(t)


def two_tanh_c(t):
    return two_tanh(t)


def second_or_error(compiled_f):
    try:
        return h_second(compiled_f).tolist()
    except RuntimeError as error:
        return str(error)


def clause(message):
    """A message up to its first "which"."""
    return message.split(" which ")[0]


def after_ordinary_backward(fresh):
    compiled_fresh = torch.compile(fresh, backend=BACKEND, dynamic=False)
    torch.autograd.grad(compiled_fresh(x).sum(), x)  # as in a training step
    return compiled_fresh


ordinary_first = after_ordinary_backward(two_tanh_a)
donated = second_or_error(ordinary_first)
with torch._functorch.config.patch(donated_buffer=False):
    not_donated = second_or_error(ordinary_first)
    compiled_while_off = after_ordinary_backward(two_tanh_b)
off_while_compiling = second_or_error(compiled_while_off)
print("donated_buffer=True:", donated)
print("donated_buffer=False at the later backward:", not_donated)
print("donated_buffer=False while compiling only:", clause(off_while_compiling))
DONATED = "This backward function was compiled with non-empty donated buffers"
assert donated.startswith(DONATED) and off_while_compiling.startswith(DONATED)
assert not_donated == [2.0, 2.0, 2.0]


def sine_on(t):
    return torch.sin(t)


def sine_off(t):
    return torch.sin(t)


with torch._functorch.config.patch(donated_buffer=False):
    sine_compiled_off = after_ordinary_backward(sine_off)
sine_flag_on = second_or_error(after_ordinary_backward(sine_on))
sine_flag_off = second_or_error(sine_compiled_off)
print("sin x, compiled with donated_buffer=False:", clause(sine_flag_off))
assert sine_flag_on == expected and sine_flag_off.startswith(DONATED)
try:  # the first pass that keeps the graph raises already
    torch.autograd.grad(ordinary_first(x).sum(), x, create_graph=True)
    first_pass = ""
except RuntimeError as error:
    first_pass = str(error)
assert first_pass.startswith(DONATED)

# %%
# With dynamic shapes, AOTAutograd compiles the backward together with the
# forward, before any backward runs, when that backward needs a symbolic size,
# as the backwards of :math:`2\tanh(xW)` and of the critic do. It then keeps
# the donated buffers as after an ordinary backward, so the first backward
# that keeps the graph raises already. ``dynamic=True`` asks for dynamic shapes
# from the first call. The default, ``dynamic=None``, compiles the first call
# for fixed shapes and, when a size changes (a smaller last batch, say),
# compiles again with that size symbolic: the critic's penalty then meets
# this error in place of the double-backward one. With a job id,
# ``TORCH_COMPILE_JOB_ID``, Dynamo remembers this on disk for a function
# passed to ``torch.compile``, and a later run compiles that size symbolic from
# its first call. For a module passed to it, such as this critic, Dynamo on
# 2.13 files what it remembers under a new key in every run, so a later run
# starts with fixed shapes again. With fixed shapes, the critic meets this
# error too after an ordinary backward through the same graph (an input that
# requires grad, as the penalty's does), run last below.

dynamic_first = second_or_error(torch.compile(two_tanh_c, backend=BACKEND, dynamic=True))
print("2 tanh(xW), dynamic=True:", clause(dynamic_first))
assert dynamic_first.startswith(DONATED)

torch._dynamo.reset()  # forget the critic compiled above
by_default = torch.compile(critic, backend=BACKEND)  # dynamic=None, the default
by_batch = []
for batch in (32, 16):
    try:
        penalty_grads(by_default, batch)
    except RuntimeError as error:
        by_batch.append(str(error))
    print(f"the critic's penalty, dynamic=None, batch {batch}: {clause(by_batch[-1])}")
assert by_batch[0] == expected and by_batch[1].startswith(DONATED)

torch._dynamo.reset()
fixed = torch.compile(critic, backend=BACKEND, dynamic=False)
points = real.clone().requires_grad_()  # an input that requires grad, as x_hat does
torch.autograd.grad(fixed(points).sum(), points)  # an ordinary backward first
try:
    penalty_grads(fixed)
    after_training_step = ""
except RuntimeError as error:
    after_training_step = str(error)
print(
    "the critic's penalty, fixed shapes, after an ordinary backward:", clause(after_training_step)
)
assert after_training_step.startswith(DONATED)

# %%
# What works: compile what is differentiated once
# -----------------------------------------------
#
# Back to the critic compiled above. The Wasserstein part of the critic's loss,
# :math:`D(x_f) - D(x_r)` for fake and real samples, is differentiated once: it
# can go through the compiled critic. The penalty is differentiated twice: it
# goes through the same critic in eager mode. Both share the parameters, so one
# ``backward()`` trains them, and the step equals a fully eager one.


def critic_loss(fast, slow):
    wasserstein = fast(fake).mean() - fast(real).mean()
    return wasserstein + 10 * penalty(slow)


critic_loss(compiled, critic).backward()
split = [p.grad.clone() for p in critic.parameters()]
critic.zero_grad()
critic_loss(critic, critic).backward()
reference = [p.grad.clone() for p in critic.parameters()]
print("compiled + eager step equals the eager step:", end=" ")
print(all(torch.allclose(s, r) for s, r in zip(split, reference)))
assert all(torch.allclose(s, r) for s, r in zip(split, reference))

# %%
# Two more ways to be silently wrong
# ----------------------------------
#
# A backend without AOTAutograd runs the graph Dynamo captured with ordinary
# autograd: ``backend="eager"`` does, and so does a backend of one's own that
# returns the graph as it is. For built-in operations the result is right.
# A custom Function is another matter when Dynamo traces its ``backward``,
# which it does whenever it can: it captures that ``backward`` into a graph of
# its own that starts by turning grad mode off, so under
# ``create_graph=True`` nothing of it is recorded, and its result is cut off
# from ``x`` and from the incoming gradient. Here the first layer's weight
# gets a wrong gradient, and its bias and the last weight get none (``None``
# below).
#
# The same happens to such a Function when the inner gradient is computed with
# :func:`torch.func.grad` inside the compiled function, with AOTAutograd too,
# while the built-in softplus there gives the right gradients.


class SoftplusModule(nn.Module):
    def forward(self, x):
        return nn.functional.softplus(x)


def as_captured(graph_module, example_inputs):
    """A backend of one's own: run Dynamo's graph as it is."""
    return graph_module.forward


twin = nn.Sequential(nn.Linear(2, 16), SoftplusModule(), nn.Linear(16, 1, bias=False))
twin = twin.double()
twin.load_state_dict(critic.state_dict())
torch._dynamo.reset()
builtin = penalty_grads(torch.compile(twin, backend="eager"))
dynamo_only = penalty_grads(torch.compile(critic, backend="eager"))
own_backend = penalty_grads(torch.compile(critic, backend=as_captured))


def functional_penalty(model, x_hat):
    grad = torch.func.grad(lambda x: model(x).sum())(x_hat)
    return ((grad.norm(dim=1) - 1) ** 2).mean()


def inner_grads(model):
    """The penalty's gradients, with torch.func.grad inside the compiled function."""
    x_hat = mix * real + (1 - mix) * fake
    value = torch.compile(functional_penalty, backend=BACKEND, dynamic=False)(model, x_hat)
    assert torch.allclose(value, penalty(critic))
    return torch.autograd.grad(value, list(model.parameters()), allow_unused=True)


inner = inner_grads(critic)
builtin_inner = inner_grads(twin)


def compare(grads):
    """For each parameter: whether its gradient equals eager mode's, or None."""
    return [None if g is None else torch.allclose(g, e) for g, e in zip(grads, eager)]


print("each parameter's gradient equals eager mode's (None: no gradient):")
for name, grads in (
    ("built-in softplus, backend='eager'", builtin),
    ("custom Function, backend='eager'", dynamo_only),
    ("custom Function, as_captured", own_backend),
    ("built-in softplus, torch.func.grad", builtin_inner),
    ("custom Function, torch.func.grad", inner),
):
    print(f"{name:35} {compare(grads)}")
assert compare(builtin) == compare(builtin_inner) == [True, True, True]
for grads in (dynamo_only, own_backend, inner):
    assert compare(grads) == [False, None, None]

# %%
# Where nothing else carries a graph, the second pass stops instead: compiled
# by itself with ``backend="eager"``, ``Softplus`` gives a first gradient that
# does not require grad.
#
# A Function applied as here, not under :func:`torch.func.grad`, whose
# ``backward`` Dynamo cannot trace is not captured: Dynamo breaks the graph
# there and runs the Function eagerly (inside a model built like this critic,
# perhaps the layers around it too), and the second derivative is right. A
# ``backward`` that checks its incoming gradient for NaN is one: it branches on
# a tensor's value. Which of the two a Function gets depends on its code; rely
# on neither.


class SoftplusChecked(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return nn.functional.softplus(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_out):
        if torch.isnan(grad_out).any():
            raise ValueError("NaN in the incoming gradient")
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)


t = torch.tensor([-1.0, 0.0, 2.0], dtype=torch.float64, requires_grad=True)
right = torch.sigmoid(t) * (1 - torch.sigmoid(t))  # softplus''
outcomes = []
for name, softplus in (
    ("Softplus, eager mode", Softplus.apply),
    ("Softplus, backend='eager'", torch.compile(Softplus.apply, backend="eager")),
    ("SoftplusChecked, backend='eager'", torch.compile(SoftplusChecked.apply, backend="eager")),
):
    (grad,) = torch.autograd.grad(softplus(t).sum(), t, create_graph=True)
    if grad.requires_grad:
        (second,) = torch.autograd.grad(grad.sum(), t)
        outcomes.append(torch.allclose(second, right))
        outcome = f"second derivative right: {outcomes[-1]}"
    else:
        outcomes.append(None)
        outcome = "the first gradient does not require grad"
    print(f"{name:33} {outcome}")
assert outcomes == [True, None, True]

assert cache_lookups() == lookups_before  # no compile of this page used the disk cache

# %%
# Summary
# -------
#
# * A backward compiled by AOTAutograd (the default ``inductor``,
#   ``aot_eager_decomp_partition``, ``aot_eager``, and any backend built on
#   AOTAutograd) cannot be differentiated. A second pass raises when it reaches
#   the error node, which hangs off what the compiled backward takes; which
#   tensors those are depends on the decompositions and the partitioner
#   (:ref:`where the error node hangs <compile-error-node>`).
#   :func:`torch.autograd.grad` and ``.backward(inputs=...)`` reach it only
#   through a tensor that is, or leads to, one they differentiate with respect
#   to; otherwise they pass it by, even when a saved weight requires grad: a
#   wrong second derivative, a generic message, or ``None``. ``.backward()``
#   without ``inputs=`` raises. This holds with fixed shapes when the first
#   backward through the compiled function kept the graph.
# * After an ordinary backward, and with dynamic shapes even before one, a
#   backward that keeps the graph can raise the donated-buffer message
#   instead, as :math:`2\tanh(xW)` and the critic do, with ``aot_eager`` too
#   (:ref:`another error <compile-donated-buffers>`). Setting
#   ``torch._functorch.config.donated_buffer = False``
#   (after ``import torch._functorch.config``) only around that
#   backward skips the check, but ``inductor``'s backward may still reuse the
#   memory. Set it before the first call and keep it: a part compiled with the
#   flag off, when the flag is on again at a later backward that keeps the
#   graph, raises this message even with nothing to donate. With
#   ``inductor``, a backward compiled earlier, in another process too, can
#   come back from its :ref:`caches on disk <compile-caches>`, donated buffers
#   and memory reuse included.
# * A backend without AOTAutograd (``backend="eager"``, or one's own that
#   returns Dynamo's graph as it is) gives right second derivatives through
#   built-in operations. Through a custom Function whose ``backward`` Dynamo
#   traces, they come out wrong without a word, or the pass stops: Dynamo
#   captures that ``backward`` with grad mode off. The same happens, with
#   AOTAutograd too, to such a Function under :func:`torch.func.grad` inside
#   the compiled function. A Function applied directly whose ``backward``
#   Dynamo cannot trace runs eagerly, perhaps with the layers around it, and
#   is right under a backend without AOTAutograd.
# * Compile what is differentiated once; run the path that is differentiated
#   twice in eager mode, and check the step against eager mode.
#
# Next, :ref:`lesson 14 <lesson-cost>`: what double backward costs.
