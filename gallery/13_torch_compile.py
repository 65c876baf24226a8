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
same forward/backward split (AOTAutograd) as the default ``inductor``
backend, where double backward stops, but without generating code, so it runs
on a CPU in a moment.
"""

# %%
# A critic with a custom activation
# ---------------------------------
#
# The critic of a WGAN-GP (:ref:`lesson-second-derivatives`) with a softplus
# written as a Function in the ``setup_context`` style. Its gradient penalty
# differentiates the critic's gradient with respect to its input.

import torch
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
# Through a compiled critic: the error
# ------------------------------------
#
# The first derivative goes through the compiled backward; the penalty's
# gradient would have to differentiate that backward. AOTAutograd refuses,
# whether the second derivative is asked for by ``.backward()`` or by
# ``torch.autograd.grad``.

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
# Two ways to be silently wrong
# -----------------------------
#
# Compiling without AOTAutograd (``backend="eager"``) runs the captured graph
# with ordinary autograd, so nothing complains. For built-in operations that
# is right. But the custom Function's backward, captured by Dynamo, is not
# differentiated again: the penalty's gradients come out wrong, with no error.
#
# Computing the inner gradient with ``torch.func.grad`` inside the compiled
# function is just as quiet: Dynamo replaces the Function's own backward by
# the derivative of its forward (`pytorch/pytorch#193279
# <https://github.com/pytorch/pytorch/issues/193279>`__), and here the
# penalty's gradients differ from eager mode too.

torch._dynamo.reset()
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

for name, grads in (("backend='eager'", dynamo_only), ("torch.func.grad", inner)):
    same = all(g is not None and torch.allclose(g, e) for g, e in zip(grads, eager))
    print(f"{name:16} gradients equal eager mode: {same}")
    assert not same

# %%
# What works: compile what is differentiated once
# -----------------------------------------------
#
# The Wasserstein part of the critic's loss, :math:`D(\mathrm{fake}) -
# D(\mathrm{real})`, is differentiated once: it can go through the compiled
# critic. The penalty is differentiated twice: it goes through the same
# critic in eager mode. Both share the parameters, so one ``backward()``
# trains them, and the step equals a fully eager one.

torch._dynamo.reset()
compiled = torch.compile(critic, backend="aot_eager")


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
# Summary
# -------
#
# * A backward compiled by AOTAutograd (every backend but ``"eager"``) cannot
#   be differentiated: the second pass raises.
# * With a custom Function inside, ``backend="eager"`` and ``torch.func.grad``
#   inside the compiled function give wrong second derivatives without a word
#   on this build's PyTorch.
# * Compile what is differentiated once; run the path that is differentiated
#   twice in eager mode, and check the step against eager mode.
#
# Next, :ref:`lesson-cost`: what double backward costs.
