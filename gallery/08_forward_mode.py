r"""
.. _lesson-forward-mode:

Beyond: forward-mode AD and Hessian-vector products
===================================================

Reverse mode, everything so far, computes vector-Jacobian products in
``backward``. Forward mode pushes a direction through the computation with the
values and gives a Jacobian-vector product at the end of the forward pass; a
custom Function takes part only if it has a ``jvp`` staticmethod, and the
result is right only if that ``jvp`` is. Combined, "forward over reverse"
gives Hessian-vector products. It runs a Function's ``jvp`` in the forward
pass and its ``backward`` in the backward pass, and either one, if wrong, can
spoil the result: it needs a correct ``jvp``, and a ``backward`` that
computes a correct vector-Jacobian product with operations that forward mode
can follow.
"""

# %%
# Dual tensors
# ------------
#
# In forward mode a tensor carries a *tangent* of the same shape: a direction
# :math:`v` in which :math:`x` moves. Every operation updates the tangent, so
# :math:`f(x)` comes out with the tangent :math:`J_f(x)\,v`.
# ``torch.autograd.forward_ad`` provides ``dual_level()`` (dual tensors exist
# only inside it), ``make_dual(x, v)`` and ``unpack_dual(y)``.
#
# The first :func:`~torch.autograd.forward_ad.make_dual` of a process (and so
# the first ``jvp``, ``jacfwd`` or ``hessian`` of :mod:`torch.func`, which call
# it) imports the decompositions that forward mode uses for a few operators
# with no forward-mode formula of their own, such as the backward of softmax or
# of layer norm. PyTorch compiles them with ``torch.jit.script``, which warns
# that it is deprecated (on Python 3.14 and later, that it is not supported).
# The note is about PyTorch's code, not yours. torch 2.13 issues it as a
# ``DeprecationWarning``, which Python shows only when asked
# (``python -W default``, pytest). This lesson silences exactly these two
# messages.

import warnings

import torch

# sphinx_gallery_thumbnail_path = "_static/thumbs/08_forward_mode.svg"
import torch.autograd.forward_ad as fwAD

torch.manual_seed(0)
x = torch.randn(4, dtype=torch.float64)
v = torch.randn(4, dtype=torch.float64)

with warnings.catch_warnings(), fwAD.dual_level():
    warnings.filterwarnings("ignore", message="`torch.jit.script` is (deprecated|not supported)")
    y, y_tangent = fwAD.unpack_dual(torch.sin(fwAD.make_dual(x, v)))
print("tangent of sin(x):", y_tangent)
assert torch.allclose(y_tangent, torch.cos(x) * v)

# %%
# A Function with a ``jvp``
# -------------------------
#
# Take :math:`f(x) = x \sin x`, with :math:`f'(x) = \sin x + x \cos x`. ``jvp``
# receives one tangent per input and returns one per output, here :math:`f'(x)`
# times the input's tangent. Inside ``jvp``, ``ctx.saved_tensors`` holds what
# ``forward`` passed to ``ctx.save_for_forward``, a store separate from
# :meth:`~torch.autograd.function.FunctionCtx.save_for_backward`.


def xsin_prime(x):
    """The derivative of x * sin(x), written with PyTorch operations."""
    return torch.sin(x) + x * torch.cos(x)


class XSin(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        return x * torch.sin(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * xsin_prime(x)

    @staticmethod
    def jvp(ctx, x_tangent):
        (x,) = ctx.saved_tensors
        return x_tangent * xsin_prime(x)


# %%
# When an input carries a tangent, ``XSin.apply`` calls ``jvp`` and attaches
# its result to the output. For :math:`g(x) = A f(x)`, with a rectangular
# :math:`A`, the tangent equals the Jacobian, built by reverse mode, times
# :math:`v`.

from torch.autograd.functional import jacobian

A = torch.randn(3, 4, dtype=torch.float64)


def g(x):
    return A @ XSin.apply(x)


with fwAD.dual_level():
    jvp_forward = fwAD.unpack_dual(g(fwAD.make_dual(x, v))).tangent
print("forward mode:    ", jvp_forward)
print("Jacobian times v:", jacobian(g, x) @ v)
assert torch.allclose(jvp_forward, jacobian(g, x) @ v)

# %%
# Without a ``jvp``, a Function refuses dual tensors with a
# ``NotImplementedError``. With a ``jvp`` but without ``save_for_forward``,
# ``ctx.saved_tensors`` is empty inside ``jvp``, and the error is a bare
# ``ValueError`` from unpacking it:


class XSinNoJvp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sin(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * (torch.sin(x) + x * torch.cos(x))


with fwAD.dual_level():
    try:
        XSinNoJvp.apply(fwAD.make_dual(x, v))
        no_jvp = ""
    except NotImplementedError as error:
        no_jvp = str(error)
print("no jvp:", no_jvp)
assert "implement the jvp function" in no_jvp


class XSinForgotSaveForForward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sin(x)

    backward = staticmethod(XSin.backward)
    jvp = staticmethod(XSin.jvp)


with fwAD.dual_level():
    try:
        XSinForgotSaveForForward.apply(fwAD.make_dual(x, v))
        message = ""
    except ValueError as error:
        message = str(error)
print("ValueError:", message)
assert message == "not enough values to unpack (expected 1, got 0)"

# %%
# ``gradcheck(..., check_forward_ad=True)`` tests ``jvp`` against finite
# differences. ``gradgradcheck(..., check_fwd_over_rev=True)`` runs the
# Function and its ``backward`` on dual tensors, with ``create_graph=True`` as
# double backward does, and tests the tangent of ``backward``'s result;
# ``check_rev_over_rev=True``, the default, is classic double backward. The
# first check tests ``jvp``; the second tests ``backward``, and sees ``jvp``
# only through the outputs that ``backward`` uses. A section below shows that
# one does not replace the other.

from torch.autograd import gradcheck, gradgradcheck

inputs = (torch.randn(3, dtype=torch.float64, requires_grad=True),)
assert gradcheck(XSin.apply, inputs, check_forward_ad=True)
assert gradgradcheck(XSin.apply, inputs, check_fwd_over_rev=True)
print("gradcheck (forward AD) and gradgradcheck (forward over reverse) pass")

# %%
# Hessian-vector products, forward over reverse
# ---------------------------------------------
#
# The Hessian :math:`H` of a scalar :math:`L(x)` is the matrix of its second
# derivatives. With :math:`n` inputs (the parameters of a model, say) it has
# :math:`n^2` entries, too many to store for a large model, and many methods
# need only its product with a vector, :math:`Hv`: Newton-CG optimizers,
# estimates of the curvature of a loss (its eigenvalue of largest magnitude,
# by power iteration), influence functions.
#
# :math:`H` is the Jacobian of the gradient, so :math:`Hv` is the tangent of
# the gradient in the direction :math:`v`. Make ``x`` dual, take an ordinary
# reverse-mode gradient, and read its tangent; no ``create_graph=True`` is
# needed. The forward pass runs ``XSin.jvp``; the backward pass runs
# ``XSin.backward``, and forward mode follows its operations as they run, with
# tangents on both the saved ``x`` and the incoming gradient. Both methods
# feed :math:`Hv`: ``jvp`` through the tangents of every later value, the
# incoming gradient included, and ``backward`` through the tangent of the
# result it computes from them. The test loss is
# :math:`L(x) = \sum_i f(Ax)_i^2`, checked against
# :func:`torch.autograd.functional.hvp`, which uses reverse mode only
# (:ref:`lesson 10 <lesson-second-derivatives>` computes :math:`Hv` by double
# backward).

from torch.autograd.functional import hvp


def loss(x):
    return (XSin.apply(A @ x) ** 2).sum()


def hvp_forward_over_reverse(fn, x, v):
    with fwAD.dual_level():
        x_dual = fwAD.make_dual(x.detach().requires_grad_(), v)
        (grad,) = torch.autograd.grad(fn(x_dual), x_dual)
        primal, tangent = fwAD.unpack_dual(grad)
        # a gradient that does not depend on x carries no tangent: Hv = 0
        return primal, torch.zeros_like(primal) if tangent is None else tangent


x = torch.randn(4, dtype=torch.float64)
v = torch.randn(4, dtype=torch.float64)
grad, hv = hvp_forward_over_reverse(loss, x, v)
_, hv_reference = hvp(loss, x, v)
print("H v, forward over reverse:", hv)
print("H v, functional.hvp:      ", hv_reference)
assert torch.allclose(hv, hv_reference)

# %%
# A wrong ``jvp`` gives a wrong :math:`Hv`
# ----------------------------------------
#
# ``XSinWrongJvp`` keeps ``XSin``'s ``forward`` and ``backward``; its ``jvp``
# forgets the term :math:`x \cos x`. Every reverse-mode check passes. So does
# ``gradgradcheck(..., check_fwd_over_rev=True)``: this ``backward`` uses only
# the saved input, whose tangent the check itself supplies, so the tangent
# that ``jvp`` gives the output never reaches what it compares. In the loss
# above, the incoming gradient :math:`2 f(Ax)` carries that tangent, and
# :math:`Hv` comes out wrong, without any error. The check that catches it is
# ``gradcheck(..., check_forward_ad=True)``. The forward-over-reverse check
# catches a wrong ``jvp`` only where ``backward`` computes with the value of
# the saved output, as ``ExpWrongJvp``'s ``grad_out * y`` does: its ``jvp``
# doubles the tangent, and the check fails. A ``backward`` that uses the
# output only through a mask (``y > 0``) hides a wrong ``jvp`` from it too:
# ``ReLUWrongJvp`` passes it.

from torch.autograd.gradcheck import GradcheckError


class XSinWrongJvp(XSin):
    @staticmethod
    def jvp(ctx, x_tangent):
        (x,) = ctx.saved_tensors
        return x_tangent * torch.sin(x)  # the mistake: x cos(x) is missing


def loss_wrong_jvp(x):
    return (XSinWrongJvp.apply(A @ x) ** 2).sum()


_, hv_wrong = hvp_forward_over_reverse(loss_wrong_jvp, x, v)
print("H v, wrong jvp:", hv_wrong)
assert not torch.allclose(hv_wrong, hv_reference)
assert gradcheck(XSinWrongJvp.apply, inputs)
assert gradgradcheck(XSinWrongJvp.apply, inputs, check_fwd_over_rev=True)
try:
    gradcheck(XSinWrongJvp.apply, inputs, check_forward_ad=True)
    message = ""
except GradcheckError as error:
    message = str(error)
print("gradcheck, forward AD:", message.splitlines()[0])
assert message.startswith("Jacobian computed with forward mode mismatch")


class ExpWrongJvp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.exp(x)
        ctx.save_for_backward(y)
        ctx.save_for_forward(y)
        return y

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return grad_out * y

    @staticmethod
    def jvp(ctx, x_tangent):
        (y,) = ctx.saved_tensors
        return 2 * x_tangent * y  # the mistake: the factor 2


assert gradgradcheck(ExpWrongJvp.apply, inputs)
try:
    gradgradcheck(ExpWrongJvp.apply, inputs, check_fwd_over_rev=True)
    message = ""
except GradcheckError as error:
    message = str(error)
print("ExpWrongJvp, forward over reverse:", message.splitlines()[0])
assert message.startswith("Jacobian computed with forward mode mismatch")


class ReLUWrongJvp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.relu(x)
        ctx.save_for_backward(y)
        ctx.save_for_forward(y)
        return y

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return grad_out * (y > 0)  # y only as a mask

    @staticmethod
    def jvp(ctx, x_tangent):
        (y,) = ctx.saved_tensors
        return 2 * x_tangent * (y > 0)  # the mistake: the factor 2


away_from_kink = (torch.tensor([-1.5, 0.7, 2.0], dtype=torch.float64, requires_grad=True),)
assert gradgradcheck(ReLUWrongJvp.apply, away_from_kink, check_fwd_over_rev=True)
try:
    gradcheck(ReLUWrongJvp.apply, away_from_kink, check_forward_ad=True)
    message = ""
except GradcheckError as error:
    message = str(error)
assert message.startswith("Jacobian computed with forward mode mismatch")

# %%
# When the backward leaves PyTorch
# --------------------------------
#
# A ``backward`` that computes :math:`f'(x)` with NumPy leaves no graph
# (:ref:`lesson 05 <lesson-untracked-backward>`), and forward mode cannot see
# inside it either: :math:`f'(Ax)` arrives with no tangent. The gradient is
# right, and the rest of the backward pass is PyTorch, so a tangent still comes
# out, without any error, but the terms with :math:`f''` are missing:
# :math:`A^\top \operatorname{diag}(2 f'(Ax)^2) A\,v` instead of :math:`Hv`.

import numpy as np


class XSinNumpyBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        return x * torch.sin(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        x_np = x.detach().numpy()
        return grad_out * torch.as_tensor(np.sin(x_np) + x_np * np.cos(x_np))

    jvp = staticmethod(XSin.jvp)


def loss_numpy(x):
    return (XSinNumpyBackward.apply(A @ x) ** 2).sum()


grad_np, hv_np = hvp_forward_over_reverse(loss_numpy, x, v)
u = A @ x
without_f2 = A.T @ (2 * xsin_prime(u) ** 2 * (A @ v))
print("H v, NumPy backward:", hv_np)
assert torch.allclose(grad_np, grad)
assert not torch.allclose(hv_np, hv) and torch.allclose(hv_np, without_f2)

# %%
# Marking this ``backward``
# :func:`@once_differentiable <torch.autograd.function.once_differentiable>`
# does not help here: the mark acts only under ``create_graph=True``
# (:ref:`lesson 05 <lesson-untracked-backward>`), which this product does not
# use, so the same wrong :math:`Hv` comes out, again without any error.

from torch.autograd.function import once_differentiable


class XSinNumpyOnce(XSinNumpyBackward):
    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        return XSinNumpyBackward.backward(ctx, grad_out)


def loss_once(x):
    return (XSinNumpyOnce.apply(A @ x) ** 2).sum()


_, hv_once = hvp_forward_over_reverse(loss_once, x, v)
print("H v, marked:        ", hv_once)
assert torch.equal(hv_once, hv_np)

# %%
# The forward-over-reverse check of :func:`~torch.autograd.gradgradcheck`
# finds both, where ``XSin`` passed, and where
# ``gradcheck(..., check_forward_ad=True)`` passes them: their ``jvp`` is
# right, and only their ``backward`` is out of forward mode's reach. Run alone, with
# ``check_rev_over_rev=False``, it needs ``check_undefined_grad=False`` as
# well: that check, which calls ``backward`` with undefined gradients
# (:ref:`lesson 11 <lesson-diagnosing>`), requires ``check_rev_over_rev``, and
# without it the call stops with an ``AssertionError``. The cure is lesson 05's:
# the NumPy part becomes a second Function. Here that Function is called on
# dual tensors, so it needs a ``jvp`` of its own, in both of its inputs, as
# :ref:`lesson 09 <lesson-torch-func>`'s ``TanhGradWithJvp`` has.

for function in (XSinNumpyBackward, XSinNumpyOnce):
    try:
        gradgradcheck(
            function.apply,
            inputs,
            check_fwd_over_rev=True,
            check_rev_over_rev=False,
            check_undefined_grad=False,
        )
        message = ""
    except GradcheckError as error:
        message = str(error)
    print(f"{function.__name__}, forward over reverse:", message.splitlines()[0])
    assert message.startswith("Jacobian computed with forward mode mismatch")
    assert gradcheck(function.apply, inputs, check_forward_ad=True)  # the jvp is right
try:
    gradgradcheck(XSin.apply, inputs, check_fwd_over_rev=True, check_rev_over_rev=False)
    message = ""
except AssertionError as error:
    message = str(error)
print("AssertionError:", message)
assert message == "Setting check_undefined_grad=True requires check_rev_over_rev to be True"

# %%
# Summary
# -------
#
# * Forward mode carries a tangent with each value: ``dual_level``,
#   :func:`~torch.autograd.forward_ad.make_dual`, ``unpack_dual``.
# * A Function takes part through a ``jvp`` staticmethod that reads what
#   ``forward`` passed to ``ctx.save_for_forward``.
# * The gradient with respect to ``x = make_dual(x, v)``, computed inside
#   the dual level, carries :math:`Hv` as its tangent. Trust it only
#   if every Function on the way has a correct ``jvp`` and a ``backward`` that
#   computes a correct vector-Jacobian product with operations that forward
#   mode can follow; ``once_differentiable`` does not guard it.
# * Test both: ``gradcheck(..., check_forward_ad=True)`` for the ``jvp`` and
#   ``gradgradcheck(..., check_fwd_over_rev=True)`` for the ``backward``.
#
# Next, :ref:`lesson 09 <lesson-torch-func>`: what ``vmap``, ``grad`` and
# ``hessian`` need from a Function.
