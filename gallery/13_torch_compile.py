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

The default backend, ``inductor``, captures the function (Dynamo), splits it
into a forward and a backward graph (AOTAutograd), decomposes the operators
into simpler ones, lets a min-cut partitioner choose what the forward saves
for the backward, and generates code. This lesson compiles with
``backend="aot_eager_decomp_partition"``, which does all of that except the
code generation, so it runs on a CPU in a moment; and, where it behaves
differently, with ``backend="aot_eager"``, which neither decomposes nor uses
that partitioner. The split is where double backward stops.
"""

# %%
# A critic with a custom activation
# ---------------------------------
#
# The critic of a WGAN-GP (:ref:`lesson 10 <lesson-second-derivatives>`) with
# a softplus written as a Function in the ``setup_context`` style. Its
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


def penalty(critic):
    x_hat = (mix * real + (1 - mix) * fake).requires_grad_()
    (grad,) = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    return ((grad.norm(dim=1) - 1) ** 2).mean()


def penalty_grads(critic):
    """The penalty's gradient for each parameter (None: no path to it)."""
    return torch.autograd.grad(penalty(critic), list(critic.parameters()), allow_unused=True)


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

BACKEND = "aot_eager_decomp_partition"
compiled = torch.compile(critic, backend=BACKEND)
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
# Where the error node hangs
# --------------------------
#
# AOTAutograd runs the compiled backward inside a Function of its own (in
# ``torch/_functorch/_aot_autograd/runtime_wrappers.py``), whose ``backward``
# raises that message. Under ``create_graph=True`` it applies that Function to
# what the compiled backward takes: the tensors the forward saved, and the
# incoming gradients. A second pass reaches the node only through those that
# require grad: an input or an output of the compiled part, saved as it is, or
# an incoming gradient that depends on the input. The critic saves its input
# and its two weights, so its penalty raised. When none requires grad, AOTAutograd
# applies the Function to an empty tensor of its own instead, so that the
# gradient still has a ``grad_fn``; no path leads from there back to ``x``.
#
# What is saved is the partitioner's choice. Take :math:`h(x) = f(x) + x^2`
# with only :math:`f` compiled, differentiated twice with
# :func:`torch.autograd.grad` (the incoming gradient of :math:`f` is then a
# constant). Of :math:`\sin x`, ``aot_eager_decomp_partition`` saves
# :math:`x`, its input. Of :math:`e^x`, ``aot_eager`` saves a detached copy of
# the output, and ``aot_eager_decomp_partition`` the output itself. Of
# :math:`2\tanh(xW)`, with :math:`W` fixed, ``aot_eager_decomp_partition``
# saves only intermediate results. Where nothing saved requires grad,
# :math:`h''` comes out as :math:`2`, the second derivative of :math:`x^2`
# alone, with no error.

assert sum(t is x_hat for t in saved_by_critic) == 1
assert sum(t.requires_grad for t in saved_by_critic) == 3  # x_hat and the two weights

W = torch.randn(3, 3, dtype=torch.float64)
x = torch.tensor([-0.5, 0.5, 1.0], dtype=torch.float64, requires_grad=True)


def h_second(f):
    (grad,) = torch.autograd.grad((f(x) + x**2).sum(), x, create_graph=True)
    return torch.autograd.grad(grad.sum(), x)[0]


cases = {
    f"sin(x), {BACKEND}": (torch.sin, BACKEND),
    "exp(x), aot_eager": (torch.exp, "aot_eager"),
    f"exp(x), {BACKEND}": (torch.exp, BACKEND),
    f"2 tanh(xW), {BACKEND}": (lambda t: 2 * torch.tanh(t @ W), BACKEND),
}
raised, compiled_fs = [], {}
for name, (f, backend) in cases.items():
    compiled_f = compiled_fs[name] = torch.compile(f, backend=backend)
    saved = compiled_f(x).grad_fn.saved_tensors
    tracked = any(t.requires_grad for t in saved)
    try:
        second = h_second(compiled_f)
        outcome = f"h'' = {second.tolist()}, eager: {h_second(f).round(decimals=4).tolist()}"
        assert torch.equal(second, torch.full_like(x, 2.0))
        assert not torch.allclose(second, h_second(f))
    except RuntimeError as error:
        assert str(error) == expected
        outcome = "RuntimeError"
    raised.append(outcome == "RuntimeError")
    print(f"{name:40} saves a tensor that requires grad: {tracked!s:5}  {outcome}")
    assert raised[-1] == tracked
assert raised == [True, False, True, False]

# %%
# The default ``inductor`` backend, with the same decompositions and
# partitioner, behaves as ``aot_eager_decomp_partition`` does in each of these
# cases: this site's tests check it with ``inductor`` itself, which takes too
# long to compile on a page. With :math:`e^x` alone
# under ``aot_eager``, :func:`torch.autograd.grad` finds no path to ``x`` and
# says so with a generic message; ``allow_unused=True`` turns that into
# ``None``, silently; ``.backward()``, which runs every node it can reach,
# reaches the error node and raises. An incoming gradient that depends on
# ``x``, as in :math:`\tanh(e^x)`, leads to the node too.

compiled_exp = compiled_fs["exp(x), aot_eager"]


def exp_grad():
    return torch.autograd.grad(compiled_exp(x).sum(), x, create_graph=True)[0]


outcomes = []
for second_pass in (
    lambda: torch.autograd.grad(exp_grad().sum(), x),
    lambda: torch.autograd.grad(exp_grad().sum(), x, allow_unused=True),
    lambda: exp_grad().sum().backward(),
    lambda: torch.autograd.grad(
        torch.autograd.grad(torch.tanh(compiled_exp(x)).sum(), x, create_graph=True)[0].sum(), x
    ),
):
    try:
        outcomes.append(second_pass())
    except RuntimeError as error:
        outcomes.append(str(error))
    print(outcomes[-1])
assert "appears to not have been used in the graph" in outcomes[0]
assert outcomes[1] == (None,)
assert outcomes[2] == outcomes[3] == expected

# %%
# What works: compile what is differentiated once
# -----------------------------------------------
#
# Back to the critic compiled above. The Wasserstein part of the critic's
# loss, :math:`D(x_f) - D(x_r)` for fake and real samples, is differentiated once:
# it can go through the compiled critic. The penalty is differentiated twice:
# it goes through the same critic in eager mode. Both share the parameters, so
# one ``backward()`` trains them, and the step equals a fully eager one.


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
# But Dynamo captures a custom Function's ``backward`` into a graph of its own
# that starts by turning grad mode off, so under ``create_graph=True`` nothing
# of it is recorded: its result is cut off from ``x`` and from the incoming
# gradient. Here the penalty's gradients come out wrong, and the first layer's
# bias and the last weight get none at all.
#
# The same happens when the inner gradient is computed with
# :func:`torch.func.grad` inside the compiled function, with AOTAutograd too.


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


def functional_penalty(params, x_hat):
    def score(x):
        return torch.func.functional_call(critic, params, (x,)).sum()

    grad = torch.func.grad(score)(x_hat)
    return ((grad.norm(dim=1) - 1) ** 2).mean()


params = dict(critic.named_parameters())
x_hat = mix * real + (1 - mix) * fake
inner = torch.autograd.grad(
    torch.compile(functional_penalty, backend=BACKEND)(params, x_hat),
    list(params.values()),
    allow_unused=True,
)
assert torch.allclose(penalty(critic), functional_penalty(params, x_hat))


def same(grads):
    return all(g is not None and torch.allclose(g, e) for g, e in zip(grads, eager))


for name, grads in (
    ("built-in softplus, backend='eager'", builtin),
    ("custom Function, backend='eager'", dynamo_only),
    ("custom Function, as_captured", own_backend),
    ("custom Function, torch.func.grad", inner),
):
    print(f"{name:35} gradients equal eager mode: {same(grads)}")
assert same(builtin)
for grads in (dynamo_only, own_backend, inner):
    assert grads[0] is not None and not same(grads)
    assert grads[1] is None and grads[2] is None

# %%
# Where nothing else carries a graph, the second pass stops instead, at the
# first gradient of the Function alone, which does not require grad:

t = torch.tensor([-1.0, 0.0, 2.0], dtype=torch.float64, requires_grad=True)
requires = []
for name, softplus in (
    ("eager mode", Softplus.apply),
    ("backend='eager'", torch.compile(Softplus.apply, backend="eager")),
):
    (grad,) = torch.autograd.grad(softplus(t).sum(), t, create_graph=True)
    requires.append(grad.requires_grad)
    print(f"{name:16} the first gradient requires grad: {grad.requires_grad}")
assert requires == [True, False]

# %%
# Summary
# -------
#
# * A backward compiled by AOTAutograd (the default ``inductor``,
#   ``aot_eager_decomp_partition``, ``aot_eager``, and any backend built on
#   AOTAutograd) cannot be differentiated. A second pass raises when it
#   reaches the error node, which hangs off what the compiled backward takes
#   that requires grad: inputs or outputs of the compiled part that it saved,
#   incoming gradients that depend on the input. When it takes none,
#   :func:`torch.autograd.grad` passes the node by: a wrong second derivative,
#   a generic message, or ``None`` under ``allow_unused=True``.
# * A backend without AOTAutograd (``backend="eager"``, or one's own that
#   returns Dynamo's graph as it is) gives right second derivatives through
#   built-in operations. Through a custom Function they come out wrong without
#   a word, or the pass stops: Dynamo captures the Function's ``backward``
#   with grad mode off. The same happens, with AOTAutograd too, to a custom
#   Function under :func:`torch.func.grad` inside the compiled function.
# * Compile what is differentiated once; run the path that is differentiated
#   twice in eager mode, and check the step against eager mode.
#
# Next, :ref:`lesson 14 <lesson-cost>`: what double backward costs.
