r"""
.. _lesson-ctx-mistake:

The mistake: intermediates kept on ctx
======================================

There is a shorter way to write the sinh of the previous lesson: keep the two
exponentials as attributes of ``ctx``. The first derivative is right,
``gradcheck`` passes, and PyTorch does not warn. The second derivative is
wrong. This lesson runs the mistake live: which check catches it, what its
message says, and what a wrong second derivative looks like in real code.
"""

# %%
# The same sinh, written the wrong way
# ------------------------------------

import torch


class SinhOnCtx(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        exp_pos = torch.exp(x)
        exp_neg = torch.exp(-x)
        ctx.exp_pos = exp_pos  # the mistake: untracked values kept on ctx
        ctx.exp_neg = exp_neg
        return (exp_pos - exp_neg) / 2

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * (ctx.exp_pos + ctx.exp_neg) / 2


# %%
# The first derivative is right, and nothing warns
# ------------------------------------------------

import warnings

from torch.autograd import gradcheck, gradgradcheck
from torch.autograd.gradcheck import GradcheckError

x = torch.tensor([-1.5, 0.0, 0.5, 2.0], dtype=torch.float64, requires_grad=True)
torch.manual_seed(0)
inputs = (torch.randn(3, dtype=torch.float64, requires_grad=True),)

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    (grad_x,) = torch.autograd.grad(SinhOnCtx.apply(x).sum(), x, create_graph=True)
    first_ok = gradcheck(SinhOnCtx.apply, inputs)
print("first derivative equals cosh(x):", torch.allclose(grad_x, torch.cosh(x)))
print("gradcheck:", first_ok, "| warnings:", len(caught))
assert torch.allclose(grad_x, torch.cosh(x)) and first_ok and not caught

# %%
# gradgradcheck fails
# -------------------
#
# :func:`~torch.autograd.gradgradcheck` raises
# :exc:`~torch.autograd.gradcheck.GradcheckError`, a subclass of
# ``RuntimeError`` that the module ``torch.autograd.gradcheck`` defines. Output
# gradients of ones (``grad_outputs``) keep the numbers easy to read.

ones = torch.ones(3, dtype=torch.float64, requires_grad=True)
try:
    gradgradcheck(SinhOnCtx.apply, inputs, grad_outputs=(ones,))
    message = ""
except GradcheckError as err:
    message = str(err)
    print(message.rstrip())
print("sinh(input):", torch.sinh(inputs[0]).detach())

assert message.startswith("Jacobian mismatch for output 0 with respect to input 0")
assert "analytical:tensor([[0., 0., 0.]," in message
assert all(f"{v:.4f}" in message for v in torch.sinh(inputs[0]).tolist())

# %%
# The **numerical** Jacobian, from finite differences, has the true second
# derivative :math:`\sinh` on its diagonal (compare the last line). The
# **analytical** one, from the graph that ``backward`` recorded, is zero:
# that graph says the gradient does not depend on the input.
# :ref:`lesson-diagnosing` reads such messages in detail.
#
# Why: the values on ctx are constants
# ------------------------------------
#
# Forward is not recorded, so ``ctx.exp_pos`` and ``ctx.exp_neg`` have no
# ``grad_fn``. ``backward`` computes :math:`g \cdot (c_{+} + c_{-}) / 2` with
# two constants: the right numbers, with no link to ``x``. Here the incoming
# gradient :math:`g` (the ones from ``sum``) does not require grad either, so
# ``grad_x`` has no graph at all, and a second derivative is an error.

ctx = SinhOnCtx.apply(x).grad_fn  # a Function's node is its ctx
print("ctx.exp_pos.requires_grad:", ctx.exp_pos.requires_grad)
try:
    torch.autograd.grad(grad_x.sum(), x)
    error = ""
except RuntimeError as err:
    error = str(err)
    print("RuntimeError:", error)
assert not ctx.exp_pos.requires_grad and grad_x.grad_fn is None
assert "does not require grad and does not have a grad_fn" in error

# %%
# In real code: a silently wrong second derivative
# ------------------------------------------------
#
# Inside a larger computation the incoming gradient depends on ``x``, so
# ``grad_x`` has a graph and the second derivative comes out, wrong. Take
# :math:`L = \frac{1}{2} \sum \sinh(x)^2`:
#
# .. math::
#
#    \frac{\partial L}{\partial x} = \sinh(x) \cosh(x), \quad
#    \frac{\partial^2 L}{\partial x^2} = \cosh(x)^2 + \sinh(x)^2


def second_derivative(sinh, x):
    (grad,) = torch.autograd.grad((sinh(x) ** 2).sum() / 2, x, create_graph=True)
    (grad_grad,) = torch.autograd.grad(grad.sum(), x)
    return grad.detach(), grad_grad


wrong_grad, wrong = second_derivative(SinhOnCtx.apply, x)
true_grad, true = second_derivative(torch.sinh, x)
print("SinhOnCtx: ", wrong)
print("torch.sinh:", true)

assert torch.allclose(wrong_grad, true_grad)
assert torch.allclose(true, torch.cosh(x) ** 2 + torch.sinh(x) ** 2)
assert torch.allclose(wrong, torch.cosh(x).detach() ** 2)
assert not torch.allclose(wrong, true) and torch.allclose(wrong[1], true[1])

# %%
# No error, no warning: the term :math:`\sinh(x)^2`, which comes from
# differentiating :math:`\cosh(x)` inside ``backward``, is missing. At
# :math:`x = 0` it is zero, so that entry is even right. PyTorch's own tracker
# describes this trap in `pytorch/pytorch#58509
# <https://github.com/pytorch/pytorch/issues/58509>`__ and `#76185
# <https://github.com/pytorch/pytorch/issues/76185>`__.
#
# The graph: grad_x is cut off from x
# -----------------------------------
#
# With an incoming gradient ``grad_out`` that requires grad, like the one
# :func:`~torch.autograd.gradgradcheck` supplies, ``grad_x`` gets a graph, but
# it leads only to ``grad_out``: no path reaches ``x``.
# :func:`torch.autograd.grad` with ``allow_unused=True`` says the same in code,
# with ``None`` for ``x``.

from torchviz import make_dot

out = SinhOnCtx.apply(x)
grad_out = torch.ones_like(out, requires_grad=True)
(grad_x,) = torch.autograd.grad(out, x, grad_outputs=grad_out, create_graph=True)
reached = torch.autograd.grad(grad_x.sum(), (grad_out, x), allow_unused=True, retain_graph=True)
print("derivative of grad_x for grad_out:", reached[0])
print("derivative of grad_x for x:", reached[1])
assert reached[0] is not None and reached[1] is None

make_dot((grad_x, x, out), params={"x": x, "grad_out": grad_out, "grad_x": grad_x, "out": out})

# %%
# save_for_backward does not fix it
# ---------------------------------
#
# :meth:`~torch.autograd.function.FunctionCtx.save_for_backward` stores
# tensors; it does not record how they were computed. Saving the exponentials
# without returning them fails the same way.


class SinhSavedIntermediates(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        exp_pos = torch.exp(x)
        exp_neg = torch.exp(-x)
        ctx.save_for_backward(exp_pos, exp_neg)  # saved, but not outputs
        return (exp_pos - exp_neg) / 2

    @staticmethod
    def backward(ctx, grad_out):
        exp_pos, exp_neg = ctx.saved_tensors
        return grad_out * (exp_pos + exp_neg) / 2


assert gradcheck(SinhSavedIntermediates.apply, inputs)
try:
    gradgradcheck(SinhSavedIntermediates.apply, inputs)
    message = ""
except GradcheckError as err:
    message = str(err)
    print("gradcheck passes; gradgradcheck:", message.splitlines()[0])
assert message.startswith("Jacobian mismatch for output 0 with respect to input 0")

# %%
# Summary
# -------
#
# * Intermediates kept on ``ctx``, or saved without being outputs, are
#   constants to autograd.
# * :func:`~torch.autograd.gradcheck` passes and nothing warns; only
#   :func:`~torch.autograd.gradgradcheck` fails.
# * In real code the second derivative is silently wrong.
# * The fix is :ref:`lesson-saving-intermediates`: return them as outputs, or
#   compute them again in ``backward``.
#
# Next, :ref:`lesson-untracked-backward`: a backward that runs outside
# PyTorch.

# %%
# Exercise
# --------
#
# This softplus, :math:`\log(1 + e^{x})`, keeps its derivative, the sigmoid,
# on ``ctx``. Fix it, then run ``check_softplus(SoftplusOnCtx)``: it returns
# without a word when the Function has both derivatives right and keeps no
# tensor on ``ctx``, and raises an error that says what is wrong otherwise. A
# solution is below, for when you are done.


class SoftplusOnCtx(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.sigmoid = torch.sigmoid(x)  # the bug to fix
        return torch.nn.functional.softplus(x)

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * ctx.sigmoid


def check_softplus(function):
    """Raise unless ``function`` is softplus, with both derivatives and no tensor on ctx."""
    for shape in [(), (3,), (2, 3)]:
        x = torch.randn(shape, dtype=torch.float64, requires_grad=True)
        out = function.apply(x)
        expected = torch.nn.functional.softplus(x)
        assert out.shape == x.shape and torch.allclose(out, expected), shape
        kept = [name for name, value in vars(out.grad_fn).items() if torch.is_tensor(value)]
        assert not kept, f"tensors kept on ctx: {kept}"
        assert gradcheck(function.apply, (x,)) and gradgradcheck(function.apply, (x,))


# sphinx_gallery_start_ignore
# Hidden on the page: the build runs the check on the solution, and on a broken copy.
import os
import runpy

here = os.path.dirname(check_softplus.__code__.co_filename)
prove = runpy.run_path(os.path.join(here, "solutions", "prove.py"))["prove"]
prove(check_softplus, "Softplus")
# sphinx_gallery_end_ignore
