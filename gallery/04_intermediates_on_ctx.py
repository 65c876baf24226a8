r"""
.. _lesson-ctx-mistake:

The mistake: intermediates kept on ctx
======================================

The previous lesson computed :math:`\sinh` with two exponentials and
returned them as extra outputs. There is a shorter way to write the same
Function: keep the exponentials as attributes on ``ctx`` and read them back
in backward. It looks harmless, the first derivative is right, and PyTorch
does not warn. But the second derivative is wrong.

This lesson runs that mistake live, so that you can recognise it: which
checks pass, which check fails and what its message says, what a wrong
second derivative looks like, and what the graph shows.

You will learn:

* why ``gradcheck`` alone cannot catch this mistake, and ``gradgradcheck``
  can;
* how to read the ``gradgradcheck`` failure;
* why the same mistake, in real code, gives wrong numbers instead of an
  error.
"""

# %%
# The same sinh, written the wrong way
# ------------------------------------
#
# Forward computes :math:`e^{x}` and :math:`e^{-x}`, stores them on ``ctx``
# and returns only the result. Backward reads them back to form
# :math:`\cosh(x) = (e^{x} + e^{-x}) / 2`.

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
#
# We compute the first derivative, compare it with ``torch.cosh``, and run
# ``gradcheck``. All of it runs while Python records every warning, and we
# count them.

import warnings

from torch.autograd import gradcheck, gradgradcheck

x = torch.tensor([-1.5, 0.0, 0.5, 2.0], dtype=torch.float64, requires_grad=True)

torch.manual_seed(0)
inputs = (torch.randn(3, dtype=torch.float64, requires_grad=True),)

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out = SinhOnCtx.apply(x)
    (grad_x,) = torch.autograd.grad(out.sum(), x, create_graph=True)
    first_ok = gradcheck(SinhOnCtx.apply, inputs)

print("first derivative:", grad_x)
print("cosh(x):         ", torch.cosh(x).detach())
print("gradcheck:", first_ok)
print("warnings:", len(caught))

assert torch.allclose(out, torch.sinh(x))
assert torch.allclose(grad_x, torch.cosh(x))
assert first_ok
assert len(caught) == 0

# %%
# gradgradcheck fails
# -------------------
#
# ``gradcheck`` only tests the values that backward returns, and those are
# right. ``gradgradcheck`` also tests the graph that backward records, and
# that is where the mistake is.
#
# By default (``raise_exception=True``), ``gradgradcheck`` does not return
# ``False`` when it finds a problem: it raises ``GradcheckError``, a subclass
# of ``RuntimeError``. The class lives
# in the module ``torch.autograd.gradcheck``. (The name
# ``torch.autograd.gradcheck`` also refers to the function, so import the
# class with ``from torch.autograd.gradcheck import GradcheckError``.)
#
# By default ``gradgradcheck`` picks random output gradients. Here we pass
# output gradients of ones with ``grad_outputs``, so that the numbers in the
# message are easy to read. We catch exactly ``GradcheckError`` and print its
# message.

from torch.autograd.gradcheck import GradcheckError

ones = torch.ones(3, dtype=torch.float64, requires_grad=True)

raised = False
try:
    gradgradcheck(SinhOnCtx.apply, inputs, grad_outputs=(ones,))
except GradcheckError as err:
    raised = True
    message = str(err)
    print(message.rstrip())

print("sinh(input):", torch.sinh(inputs[0]).detach())

assert raised
assert "Jacobian mismatch for output 0 with respect to input 0" in message
assert "analytical:tensor([[0., 0., 0.]," in message
assert all(f"{v:.4f}" in message for v in torch.sinh(inputs[0]).tolist())

# %%
# How to read the message: ``gradgradcheck`` treats backward as a function
# of the input and compares two Jacobians of it.
#
# * **numerical** comes from finite differences: it moves each entry of the
#   input a little and watches how the gradient changes. Its diagonal is the
#   true second derivative, :math:`\sinh`, at each entry of the input, as the
#   last printed line confirms.
# * **analytical** is what autograd computed through the graph that
#   backward recorded. It is all zeros: according to that graph, the
#   gradient does not depend on the input at all.
#
# Why: the values on ctx are constants
# ------------------------------------
#
# Forward is not recorded, so ``ctx.exp_pos`` and ``ctx.exp_neg`` have no
# ``grad_fn``. To autograd they are two constants :math:`c_{+}` and
# :math:`c_{-}`, and backward computes ``grad_x`` as
#
# .. math::
#
#    g \cdot \frac{c_{+} + c_{-}}{2}
#
# where :math:`g` is the incoming gradient. The numbers are right, but the
# formula has lost its link to ``x``. In our example :math:`g` is a tensor of
# ones from ``out.sum()``, which does not require grad either. So nothing in
# the computation of ``grad_x`` requires grad, and autograd records nothing.
# (The node ``out.grad_fn`` is the ``ctx`` object, so the stored values can be
# inspected through it.)

stored = [out.grad_fn.exp_pos, out.grad_fn.exp_neg]
print("ctx values have a grad_fn:", [t.grad_fn is not None for t in stored])
print("grad_x.requires_grad:", grad_x.requires_grad)
print("grad_x.grad_fn:", grad_x.grad_fn)

assert all(t.grad_fn is None and not t.requires_grad for t in stored)
assert not grad_x.requires_grad and grad_x.grad_fn is None

# %%
# Asking for the second derivative
# --------------------------------
#
# The second derivative of :math:`\sinh` is :math:`\sinh`. If we ask
# ``torch.autograd.grad`` for it, it raises a ``RuntimeError``, because
# ``grad_x`` is not part of any graph.

raised = False
try:
    torch.autograd.grad(grad_x.sum(), x)
except RuntimeError as err:
    raised = True
    message = str(err)
    print("RuntimeError:", message)

assert raised
assert "does not require grad and does not have a grad_fn" in message

# %%
# In this small example we are lucky: the mistake ends in an error. That
# only happens because nothing at all in the computation of ``grad_x``
# required grad.
#
# In real code: a silently wrong second derivative
# ------------------------------------------------
#
# In a real model, a Function sits in the middle of a larger computation,
# and the gradient that flows into its backward usually depends on ``x``
# too. Then ``grad_x`` does require grad, the second backward runs, and the
# answer is simply wrong.
#
# Take the loss :math:`L = \frac{1}{2} \sum \sinh(x)^2`. Its first and second
# derivatives are
#
# .. math::
#
#    \frac{\partial L}{\partial x} = \sinh(x) \cosh(x), \quad
#    \frac{\partial^2 L}{\partial x^2} = \cosh(x)^2 + \sinh(x)^2
#
# We compute them once with ``SinhOnCtx`` and once with ``torch.sinh``.


def second_derivative(sinh_fn, x):
    loss = (sinh_fn(x) ** 2).sum() / 2
    (grad,) = torch.autograd.grad(loss, x, create_graph=True)
    (grad_grad,) = torch.autograd.grad(grad.sum(), x)
    return grad.detach(), grad_grad


wrong_grad, wrong_second = second_derivative(SinhOnCtx.apply, x)
true_grad, true_second = second_derivative(torch.sinh, x)
print("first derivative, SinhOnCtx: ", wrong_grad)
print("first derivative, torch.sinh:", true_grad)
print("second derivative, SinhOnCtx: ", wrong_second)
print("second derivative, torch.sinh:", true_second)

assert torch.allclose(wrong_grad, true_grad)
assert not torch.allclose(wrong_second, true_second)
assert torch.allclose(true_second, torch.cosh(x) ** 2 + torch.sinh(x) ** 2)
assert torch.allclose(wrong_second, torch.cosh(x).detach() ** 2)
assert torch.allclose(wrong_second[1], true_second[1])  # x = 0: no difference

# %%
# No error and no warning, only a wrong number. ``SinhOnCtx`` gives
# :math:`\cosh(x)^2`: the term :math:`\sinh(x)^2`, which comes from
# differentiating :math:`\cosh(x)` inside backward, is missing, because
# autograd saw :math:`\cosh(x)` as a constant. Where :math:`x = 0`, the
# missing term is zero and the answer happens to be right, which makes the
# mistake even harder to notice.
#
# This is a known class of PyTorch bug reports: a custom Function whose
# gradients are right, used for a Hessian, a gradient penalty or a
# physics-informed loss, and second derivatives that are quietly wrong.
# Of the two checks, only ``gradgradcheck`` catches it.
#
# The graph: grad_x is cut off from x
# -----------------------------------
#
# To draw a graph for ``grad_x``, we do what ``gradgradcheck`` does: we pass
# an output gradient ``grad_out`` that requires grad. Now ``grad_x`` has a
# graph, but it leads only to ``grad_out`` (blue). The leaf ``x`` (blue)
# feeds only ``SinhOnCtxBackward`` and ``out``. No path goes from ``grad_x``
# to ``x``.

from torchviz import make_dot

out = SinhOnCtx.apply(x)
grad_out = torch.ones_like(out, requires_grad=True)
(grad_x,) = torch.autograd.grad(out, x, grad_outputs=grad_out, create_graph=True)

graph = make_dot(
    (grad_x, x, out),
    params={"x": x, "grad_out": grad_out, "grad_x": grad_x, "out": out},
)
graph.comment = (
    "Autograd graph of grad_x, x and out in two separate pieces: grad_x leads "
    "only to the leaf grad_out, while x leads only to SinhOnCtxBackward and out."
)
graph

# %%
# The helper ``reaches`` from :ref:`lesson-saving-inputs` checks the same
# thing in code.


def reaches(fn, leaf):
    """True if the backward graph under ``fn`` accumulates into ``leaf``."""
    if fn is None:
        return False
    if getattr(fn, "variable", None) is leaf:
        return True
    return any(reaches(next_fn, leaf) for next_fn, _ in fn.next_functions)


print("grad_x depends on grad_out:", reaches(grad_x.grad_fn, grad_out))
print("grad_x depends on x:", reaches(grad_x.grad_fn, x))
print("out depends on x:", reaches(out.grad_fn, x))

assert reaches(grad_x.grad_fn, grad_out)
assert not reaches(grad_x.grad_fn, x)
assert reaches(out.grad_fn, x)

# %%
# The same mistake with save_for_backward
# ---------------------------------------
#
# Moving the exponentials into ``ctx.save_for_backward`` does not fix
# anything, as long as forward does not return them. ``save_for_backward``
# stores tensors; it does not record how they were computed. Only an input
# or an output of the Function is linked to ``x`` in the graph.


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


saved = SinhSavedIntermediates.apply(x).grad_fn.saved_tensors
print("saved tensors have a grad_fn:", [t.grad_fn is not None for t in saved])
assert all(t.grad_fn is None and not t.requires_grad for t in saved)

first_ok = gradcheck(SinhSavedIntermediates.apply, inputs)
print("gradcheck:", first_ok)
assert first_ok

raised = False
try:
    gradgradcheck(SinhSavedIntermediates.apply, inputs)
except GradcheckError as err:
    raised = True
    message = str(err)
    print("gradgradcheck failed:", message.splitlines()[0])

assert raised
assert message.startswith("Jacobian mismatch")

# %%
# ``gradcheck`` passes and ``gradgradcheck`` fails with the same Jacobian
# mismatch as before. This time ``gradgradcheck`` ran with its default random
# output gradients, and only the first line of its message is printed; the
# rest is again a pair of matrices, with zeros on the analytical side.
#
# Summary
# -------
#
# * Values computed in forward and kept on ``ctx``, or saved with
#   ``save_for_backward`` without being outputs, have no ``grad_fn``. To
#   autograd they are constants.
# * The first derivative stays right, ``gradcheck`` passes, and nothing
#   warns. The second derivative is wrong.
# * In real code this gives silently wrong numbers, not an error. Always run
#   ``gradgradcheck`` when a Function must support double backward; it
#   raises ``GradcheckError`` with a Jacobian mismatch.
# * The fix is the pattern of :ref:`lesson-saving-intermediates`: return the
#   intermediates as extra outputs, save those, and add their gradients in
#   backward.
#
# Next, :ref:`lesson-untracked-backward` deals with a backward that autograd
# cannot follow at all, because it runs outside PyTorch.
