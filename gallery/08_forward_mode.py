r"""
.. _lesson-forward-mode:

Beyond: forward-mode AD and Hessian-vector products
===================================================

Everything so far used reverse mode: ``backward`` takes the gradient of
the output and returns a vector-Jacobian product. PyTorch also has a
forward mode. It pushes a direction through the computation together with
the values, and gives a Jacobian-vector product at the end of the forward
pass. A custom Function takes part in forward mode only if it has a ``jvp``
staticmethod.

Forward mode becomes really useful when it is combined with reverse mode.
Running the backward pass inside forward mode gives a Hessian-vector product
for a small multiple of the cost of one gradient. This only works if autograd can
follow what ``backward`` does, which is the same condition as for double
backward.

You will learn:

* how dual tensors carry a direction through the forward pass;
* how to write the ``jvp`` staticmethod and what it needs from ``ctx``;
* how to test forward mode with ``gradcheck`` and ``gradgradcheck``;
* how to compute Hessian-vector products "forward over reverse", and check
  them against two other methods.
"""

# %%
# Dual tensors: a value and a direction
# -------------------------------------
#
# In forward mode, each tensor can carry a second tensor of the same shape,
# its *tangent*. The pair is called a dual tensor. Think of the tangent as a
# small change of the value: if :math:`x` moves in the direction :math:`v`,
# then :math:`f(x)` moves in the direction :math:`J_f(x) \, v`, where
# :math:`J_f` is the Jacobian of :math:`f`. Every PyTorch operation knows how
# to update the tangent, so the Jacobian-vector product (JVP) is ready as
# soon as the output is.
#
# The tools live in ``torch.autograd.forward_ad``:
#
# * ``dual_level()`` is a context manager; dual tensors only exist inside it;
# * ``make_dual(x, v)`` attaches the tangent ``v`` to ``x``;
# * ``unpack_dual(y)`` returns the value (``primal``) and the ``tangent``.
#
# For :math:`\sin`, the Jacobian is diagonal with :math:`\cos(x)` on the
# diagonal, so the tangent of the output is :math:`\cos(x) \cdot v`.

import torch
import torch.autograd.forward_ad as fwAD

torch.manual_seed(0)
x = torch.randn(4, dtype=torch.float64)
v = torch.randn(4, dtype=torch.float64)

with fwAD.dual_level():
    x_dual = fwAD.make_dual(x, v)
    y_dual = torch.sin(x_dual)
    y, y_tangent = fwAD.unpack_dual(y_dual)

print("value:  ", y)
print("tangent:", y_tangent)
assert torch.allclose(y, torch.sin(x))
assert torch.allclose(y_tangent, torch.cos(x) * v)

# %%
# A Function with a ``jvp``
# -------------------------
#
# Our example is the smooth function :math:`f(x) = x \sin(x)`. Its first and
# second derivatives are
#
# .. math::
#
#    f'(x) = \sin(x) + x \cos(x), \quad f''(x) = 2 \cos(x) - x \sin(x).
#
# The class has three staticmethods:
#
# * ``forward`` computes :math:`f(x)`. It saves ``x`` twice: with
#   ``ctx.save_for_backward`` for ``backward``, and with
#   ``ctx.save_for_forward`` for ``jvp``. These are two separate stores.
# * ``backward`` multiplies the incoming gradient by :math:`f'(x)`. It uses
#   only PyTorch operations on the saved input, so, as in
#   :ref:`lesson-saving-inputs`, it supports double backward.
# * ``jvp`` receives one tangent per input of ``forward`` and returns one
#   tangent per output. Here the tangent of the output is :math:`f'(x)`
#   times the tangent of the input. Inside ``jvp``, ``ctx.saved_tensors``
#   holds what ``forward`` passed to ``save_for_forward``.


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
# Running it in forward mode
# --------------------------
#
# Inside a dual level, ``XSin.apply`` accepts a dual tensor. PyTorch calls
# ``jvp`` with the tangent of the input and attaches what it returns to the
# output, as the output's tangent.

with fwAD.dual_level():
    out_dual = XSin.apply(fwAD.make_dual(x, v))
    out, out_tangent = fwAD.unpack_dual(out_dual)

print("f(x):      ", out)
print("J_f(x) @ v:", out_tangent)
assert torch.allclose(out, x * torch.sin(x))
assert torch.allclose(out_tangent, xsin_prime(x) * v)

# %%
# Checking the JVP against reverse mode
# -------------------------------------
#
# :math:`f` acts on each element separately, so its Jacobian is diagonal and
# therefore symmetric. The vector-Jacobian product :math:`v^\top J` that
# reverse mode computes is then the same vector as :math:`J v`. Passing ``v``
# as the output gradient of ``torch.autograd.grad`` gives it.

x_leaf = x.clone().requires_grad_()
(vjp,) = torch.autograd.grad(XSin.apply(x_leaf), x_leaf, grad_outputs=v)
print("v^T J:", vjp)
assert torch.allclose(vjp, out_tangent)

# %%
# For a function that mixes the elements, the two products differ, so we
# compare with the Jacobian itself. Take :math:`g(x) = A f(x)` with a
# rectangular matrix :math:`A`. Its JVP in forward mode combines our ``jvp``
# with the built-in rule for the matrix product. We compare it with two
# results from reverse mode:
#
# * ``torch.autograd.functional.jacobian`` builds the full Jacobian, one
#   backward pass per output; we multiply it by ``v``;
# * ``torch.autograd.functional.jvp`` gets :math:`J v` without forward mode,
#   by differentiating a backward pass a second time (the "double backward
#   trick"). It differentiates the result of backward with respect to the
#   incoming gradient, so it relies on autograd recording what
#   ``XSin.backward`` does.

from torch.autograd.functional import jacobian
from torch.autograd.functional import jvp as jvp_by_double_backward

A = torch.randn(3, 4, dtype=torch.float64)


def g(x):
    return A @ XSin.apply(x)


with fwAD.dual_level():
    jvp_forward = fwAD.unpack_dual(g(fwAD.make_dual(x, v))).tangent

jvp_jacobian = jacobian(g, x) @ v
_, jvp_double = jvp_by_double_backward(g, x, v)

print("forward mode:          ", jvp_forward)
print("Jacobian times v:      ", jvp_jacobian)
print("double backward trick: ", jvp_double)
assert torch.allclose(jvp_forward, jvp_jacobian)
assert torch.allclose(jvp_forward, jvp_double)

# %%
# A backward marked ``once_differentiable`` records nothing. For such a
# Function, ``torch.autograd.functional.jvp`` silently returns zeros. Only
# with ``strict=True`` does it raise an error; we print its first sentence.

from torch.autograd.function import once_differentiable


class XSinOnce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sin(x)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * xsin_prime(x)


_, jvp_once = jvp_by_double_backward(XSinOnce.apply, x, v)
print("double backward trick, once_differentiable:", jvp_once)
assert torch.equal(jvp_once, torch.zeros_like(x))

try:
    jvp_by_double_backward(XSinOnce.apply, x, v, strict=True)
except RuntimeError as error:
    strict_message = str(error).split(". ")[0]
    print("RuntimeError:", strict_message)
assert "independent of entry 0 in the grad_outputs" in strict_message

# %%
# What forward mode needs from a Function
# ---------------------------------------
#
# A Function without a ``jvp`` works in reverse mode as before, but PyTorch
# refuses to run it on a dual tensor. It does not guess a rule from
# ``backward``.


class XSinNoJvp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sin(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * xsin_prime(x)


with fwAD.dual_level():
    x_dual = fwAD.make_dual(x, v)
    try:
        XSinNoJvp.apply(x_dual)
    except NotImplementedError as error:
        message = str(error)

print(message)
assert "implement the jvp function" in message

# %%
# A second requirement, after having a ``jvp``, is easy to forget: saving with
# ``save_for_forward``. ``save_for_backward`` does not fill the store that
# ``jvp`` reads. If ``forward`` only calls ``save_for_backward``, then
# ``ctx.saved_tensors`` is empty inside ``jvp``, and unpacking it fails with a
# plain Python ``ValueError``.


class XSinForgotSaveForForward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sin(x)

    # backward and jvp are the same as in XSin.
    backward = staticmethod(XSin.backward)
    jvp = staticmethod(XSin.jvp)


with fwAD.dual_level():
    x_dual = fwAD.make_dual(x, v)
    try:
        XSinForgotSaveForForward.apply(x_dual)
    except ValueError as error:
        message = str(error)

print(message)
assert "expected 1, got 0" in message

# %%
# Testing forward mode: gradcheck and gradgradcheck
# -------------------------------------------------
#
# ``gradcheck`` tests ``jvp`` when you pass ``check_forward_ad=True``: it
# compares the JVPs with finite differences, in the same way as it compares
# ``backward`` (``check_backward_ad=True``, the default).
#
# ``gradgradcheck`` can test two ways of getting second derivatives:
#
# * ``check_rev_over_rev=True`` (the default) differentiates the backward
#   pass in reverse mode, which is classic double backward;
# * ``check_fwd_over_rev=True`` differentiates the backward pass in forward
#   mode. This is exactly what the Hessian-vector products below do.
#
# As always, the inputs are ``float64``.

from torch.autograd import gradcheck, gradgradcheck

inputs = (torch.randn(3, 2, dtype=torch.float64, requires_grad=True),)

first_ok = gradcheck(XSin.apply, inputs, check_forward_ad=True, check_backward_ad=True)
second_ok = gradgradcheck(XSin.apply, inputs, check_fwd_over_rev=True, check_rev_over_rev=True)
print("gradcheck (forward and reverse):", first_ok)
print("gradgradcheck (forward over reverse, reverse over reverse):", second_ok)
assert first_ok and second_ok

# %%
# Hessian-vector products, forward over reverse
# ---------------------------------------------
#
# Let :math:`L` be a scalar function with gradient :math:`\nabla L(x)` and
# Hessian :math:`H(x)`. The Hessian is the Jacobian of the gradient, so the
# JVP of the gradient in the direction :math:`v` is the Hessian-vector
# product:
#
# .. math::
#
#    H(x) \, v = \frac{\partial}{\partial \epsilon} \nabla L(x + \epsilon v),
#
# with the derivative taken at :math:`\epsilon = 0`.
#
# In code: make ``x`` dual with tangent ``v``, compute the gradient with an
# ordinary reverse-mode ``torch.autograd.grad``, and read the tangent of the
# gradient. The gradient is computed by the operations of the backward pass,
# including ``XSin.backward``; forward mode follows them as they run.
#
# Our test function is :math:`L(x) = \sum_i f(Ax)_i^2`, with the matrix
# ``A`` from above.


def loss(x):
    return (XSin.apply(A @ x) ** 2).sum()


def hvp_forward_over_reverse(fn, x, v):
    with fwAD.dual_level():
        x_dual = fwAD.make_dual(x.detach().requires_grad_(), v)
        (grad,) = torch.autograd.grad(fn(x_dual), x_dual)
        grad_value, grad_tangent = fwAD.unpack_dual(grad)
    return grad_value, grad_tangent


x = torch.randn(4, dtype=torch.float64)
v = torch.randn(4, dtype=torch.float64)
grad_value, hv_forward = hvp_forward_over_reverse(loss, x, v)
print("gradient:           ", grad_value)
print("H v, fwd over rev:  ", hv_forward)

# %%
# Why it works, and what it does not need
# ---------------------------------------
#
# Three things happen in that call:
#
# * In the forward pass, ``XSin.jvp`` gives the tangent of
#   :math:`y = f(Ax)`. The backward of the square multiplies by :math:`2y`,
#   so it needs the tangent of :math:`y`.
# * ``XSin.backward`` computes :math:`f'(Ax)` from the saved input. That
#   input is a dual tensor, so ``sin``, ``cos`` and the products carry its
#   tangent. This is why ``backward`` must be written with PyTorch operations.
# * We never passed ``create_graph=True``. Forward mode does not record a
#   graph; it updates the tangents while the operations run. So the gradient
#   has a tangent but no ``grad_fn``.

assert hv_forward is not None
assert grad_value.grad_fn is None
print("gradient has a grad_fn:", grad_value.grad_fn is not None)

# %%
# Checking against reverse over reverse
# -------------------------------------
#
# The classic way is reverse over reverse: compute the gradient with
# ``create_graph=True``, take its dot product with ``v``, and differentiate
# that scalar. ``torch.autograd.functional.hvp`` packages a similar double
# backward. We also compare with the Hessian written by hand. With
# :math:`u = Ax` and :math:`y = f(u)`:
#
# .. math::
#
#    H = A^\top \operatorname{diag}\left( 2 f'(u)^2 + 2 f(u) f''(u) \right) A.

from torch.autograd.functional import hvp

x_leaf = x.clone().requires_grad_()
(grad,) = torch.autograd.grad(loss(x_leaf), x_leaf, create_graph=True)
(hv_reverse,) = torch.autograd.grad(grad @ v, x_leaf)

_, hv_functional = hvp(loss, x, v)

u = A @ x
curvature = 2 * xsin_prime(u) ** 2 + 2 * (u * torch.sin(u)) * (2 * torch.cos(u) - u * torch.sin(u))
hv_by_hand = A.T @ (curvature * (A @ v))

print("H v, rev over rev:  ", hv_reverse)
print("H v, functional.hvp:", hv_functional)
print("H v, by hand:       ", hv_by_hand)
assert torch.allclose(hv_forward, hv_reverse)
assert torch.allclose(hv_forward, hv_functional)
assert torch.allclose(hv_forward, hv_by_hand)

# %%
# Forward over reverse has a practical advantage. Reverse over reverse keeps
# the whole graph of the first backward pass in memory until the second one
# runs. Forward over reverse runs one forward pass and one backward pass, each
# carrying a tangent, and records no extra graph.
#
# When the backward pass leaves PyTorch
# -------------------------------------
#
# What if ``backward`` computes :math:`f'(x)` with NumPy? Reverse mode still
# gets the right first derivative. Forward mode, however, cannot see inside
# NumPy, so the factor :math:`f'(u)` arrives without a tangent. The rest of
# the backward pass (the square and the matrix product) is still PyTorch, so
# a tangent does come out, and PyTorch does not complain. But the term with
# :math:`f''` is missing, and what comes out is
#
# .. math::
#
#    A^\top \operatorname{diag}\left( 2 f'(u)^2 \right) A \, v
#
# instead of :math:`H v`: a silently wrong Hessian-vector product.

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
        return grad_out * torch.from_numpy(np.asarray(np.sin(x_np) + x_np * np.cos(x_np)))

    jvp = staticmethod(XSin.jvp)


def loss_numpy(x):
    return (XSinNumpyBackward.apply(A @ x) ** 2).sum()


grad_value_np, hv_numpy = hvp_forward_over_reverse(loss_numpy, x, v)
hv_without_second_derivative = A.T @ (2 * xsin_prime(u) ** 2 * (A @ v))
print("gradient:             ", grad_value_np)
print("H v (wrong):          ", hv_numpy)
print("H v (correct):        ", hv_forward)
print("A^T diag(2 f'^2) A v: ", hv_without_second_derivative)
assert torch.allclose(grad_value_np, grad_value)
assert not torch.allclose(hv_numpy, hv_forward)
assert torch.allclose(hv_numpy, hv_without_second_derivative)

# %%
# ``gradgradcheck`` with only the forward-over-reverse check turned on finds
# the problem. With ``raise_exception=False`` it returns ``False`` instead of
# raising. The call also turns off ``check_undefined_grad``, which
# ``gradgradcheck`` only accepts together with ``check_rev_over_rev``.

ok = gradgradcheck(
    XSinNumpyBackward.apply,
    inputs,
    check_fwd_over_rev=True,
    check_rev_over_rev=False,
    check_undefined_grad=False,
    raise_exception=False,
)
print("gradgradcheck (forward over reverse only):", ok)
assert ok is False

# %%
# The cure is the one for double backward: keep ``backward`` in PyTorch
# operations, or wrap the untracked code in a second Function that has its own
# ``backward`` and ``jvp``.
#
# Summary
# -------
#
# * Forward mode carries a tangent next to each value and returns the
#   Jacobian-vector product at the end of the forward pass. Use
#   ``dual_level``, ``make_dual`` and ``unpack_dual``.
# * A custom Function needs a ``jvp`` staticmethod for forward mode. It gets
#   one tangent per input and returns one per output. Save what it needs with
#   ``ctx.save_for_forward``, not only ``ctx.save_for_backward``.
# * Test it with ``gradcheck(..., check_forward_ad=True)`` and
#   ``gradgradcheck(..., check_fwd_over_rev=True)`` in ``float64``.
# * Computing a gradient inside a dual level gives a Hessian-vector product,
#   with no ``create_graph=True``. It is correct only if ``backward`` uses
#   PyTorch operations; otherwise part of it is silently missing.
#
# Next, :ref:`lesson-torch-func` shows what a Function needs to work with
# ``torch.func`` transforms such as ``vmap``, ``grad`` and ``hessian``.
