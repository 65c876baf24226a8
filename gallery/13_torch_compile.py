r"""
.. _lesson-torch-compile:

Today: torch.compile and double backward
========================================

``torch.compile`` captures a function into graphs and compiles them,
forward and backward. A compiled backward, however, cannot be differentiated
again. This lesson shows what a reader meets when a gradient penalty runs
through a compiled model with a custom Function (an error, or a silently
wrong gradient, depending on how it is compiled), and a structure that
works, checked against eager mode.

It compiles with ``backend="aot_eager"``: the same capture (Dynamo) and the
same split into a forward and a backward graph (AOTAutograd) as the default
``inductor`` backend, without generating code, so it runs on a CPU in a
moment. The split is where double backward stops.
"""

# %%
# A critic with a custom activation
# ---------------------------------
#
# The critic of a WGAN-GP (:ref:`lesson-second-derivatives`) with a softplus
# written as a Function in the ``setup_context`` style. Its gradient penalty
# differentiates the critic's gradient with respect to its input.

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
# Through a compiled critic: an error, or a value that skips it
# -------------------------------------------------------------
#
# The first derivative goes through the compiled backward; the penalty's
# gradient would have to differentiate that backward. AOTAutograd attaches an
# error node to it, and a second pass that reaches the node raises, by
# ``.backward()`` or by :func:`torch.autograd.grad`.

compiled = torch.compile(critic, backend="aot_eager")
messages = []
for second_pass in (lambda: penalty(compiled).backward(), lambda: penalty_grads(compiled)):
    try:
        second_pass()
    except RuntimeError as error:
        messages.append(str(error))
print("RuntimeError:", messages[0])
expected = "torch.compile with aot_autograd does not currently support double backward"
assert messages == [expected, expected]

# %%
# Like
# :func:`@once_differentiable <torch.autograd.function.once_differentiable>`
# (:ref:`lesson-untracked-backward`), the error node hangs off the compiled
# backward's results, not off the inputs. When the compiled part is one term
# among others, :func:`torch.autograd.grad` with explicit inputs never reaches
# it: for :math:`h(x) = e^{x} + x^2`, with the exponential compiled, it returns
# :math:`h''(x) = 2` instead of :math:`e^{x} + 2`, with no error.

compiled_exp = torch.compile(torch.exp, backend="aot_eager")
x = torch.tensor([0.0, 1.0], dtype=torch.float64, requires_grad=True)
(grad,) = torch.autograd.grad((compiled_exp(x) + x**2).sum(), x, create_graph=True)
(second,) = torch.autograd.grad(grad.sum(), x)
print("h''(x):", second, "expected:", torch.exp(x).detach() + 2)
assert torch.equal(second, torch.full_like(x, 2.0))

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
# Compiling without AOTAutograd (``backend="eager"``) runs the captured graph
# with ordinary autograd, so nothing complains, and for built-in operations the
# result is right. But a custom Function's backward, as Dynamo captures it,
# returns a result cut off from ``x`` and from the incoming gradient, as if
# both were detached: the penalty's gradients come out wrong, and the first
# layer's bias and the last weight get none at all.
#
# The same happens when the inner gradient is computed with
# :func:`torch.func.grad` inside the compiled function.


class SoftplusModule(nn.Module):
    def forward(self, x):
        return nn.functional.softplus(x)


twin = nn.Sequential(nn.Linear(2, 16), SoftplusModule(), nn.Linear(16, 1, bias=False))
twin = twin.double()
twin.load_state_dict(critic.state_dict())
torch._dynamo.reset()
builtin = penalty_grads(torch.compile(twin, backend="eager"))
dynamo_only = penalty_grads(torch.compile(critic, backend="eager"))


def functional_penalty(params, x_hat):
    def score(x):
        return torch.func.functional_call(critic, params, (x,)).sum()

    grad = torch.func.grad(score)(x_hat)
    return ((grad.norm(dim=1) - 1) ** 2).mean()


params = dict(critic.named_parameters())
x_hat = mix * real + (1 - mix) * fake
inner = torch.autograd.grad(
    torch.compile(functional_penalty, backend="aot_eager")(params, x_hat),
    list(params.values()),
    allow_unused=True,
)
assert torch.allclose(penalty(critic), functional_penalty(params, x_hat))


def same(grads):
    return all(g is not None and torch.allclose(g, e) for g, e in zip(grads, eager))


for name, grads in (
    ("built-in softplus, backend='eager'", builtin),
    ("custom Function, backend='eager'", dynamo_only),
    ("custom Function, torch.func.grad", inner),
):
    print(f"{name:35} gradients equal eager mode: {same(grads)}")
assert same(builtin) and not same(dynamo_only) and not same(inner)
for grads in (dynamo_only, inner):
    assert grads[0] is not None and grads[1] is None and grads[2] is None

# %%
# Summary
# -------
#
# * A backward compiled by AOTAutograd (every backend but ``"eager"``) cannot
#   be differentiated: a second pass that reaches it raises, and
#   :func:`torch.autograd.grad` with explicit inputs can pass it by with a
#   wrong value.
# * With a custom Function inside, ``backend="eager"`` and
#   :func:`torch.func.grad` inside the compiled function give wrong second
#   derivatives without a word on this build's PyTorch: the Function's backward
#   comes out detached.
# * Compile what is differentiated once; run the path that is differentiated
#   twice in eager mode, and check the step against eager mode.
#
# Next, :ref:`lesson-cost`: what double backward costs.
