r"""
.. _lesson-untracked-backward:

Pattern 4: a backward autograd cannot track
===========================================

When ``backward`` runs NumPy, SciPy or a C++ extension, the first derivative
is still right: you wrote it. But it leaves no graph, so there is no second
derivative. This lesson shows how that fails, loudly or silently, what
``once_differentiable`` does and does not catch, and the cure: the backward
becomes a Function of its own.
"""

# %%
# A cube computed with NumPy
# --------------------------
#
# :math:`f(x) = x^3` and :math:`f'(x) = 3x^2`, both in NumPy. ``.numpy()``
# refuses a tensor that requires grad while grad mode is on. Grad mode is off
# inside ``forward``, but on inside ``backward`` under ``create_graph=True``,
# so ``backward`` needs ``.detach()``:

import numpy as np
import torch

x = torch.tensor([-1.0, 0.5, 2.0], dtype=torch.float64, requires_grad=True)
with torch.no_grad():
    print("grad mode off:", x.numpy())
try:
    x.numpy()
except RuntimeError as error:
    print("grad mode on: ", error)
    numpy_error = str(error)
assert "Can't call numpy() on Tensor that requires grad" in numpy_error


class CubeNumpy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.as_tensor(np.power(x.detach().numpy(), 3))

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        result = 3 * np.square(x.detach().numpy()) * grad_out.detach().numpy()
        return torch.as_tensor(result)


# %%
# The first derivative is right; the second is lost
# -------------------------------------------------
#
# Even with ``create_graph=True``, ``grad_x`` has no ``grad_fn``: NumPy made
# it. :func:`~torch.autograd.gradcheck` passes and
# :func:`~torch.autograd.gradgradcheck` fails.

from torch.autograd import gradcheck, gradgradcheck
from torch.autograd.gradcheck import GradcheckError

(grad_x,) = torch.autograd.grad(CubeNumpy.apply(x).sum(), x, create_graph=True)
print("grad_x:", grad_x, "grad_fn:", grad_x.grad_fn)
assert torch.allclose(grad_x, 3 * x**2) and grad_x.grad_fn is None

torch.manual_seed(0)
inputs = (torch.randn(4, dtype=torch.float64, requires_grad=True),)
assert gradcheck(CubeNumpy.apply, inputs)
try:
    gradgradcheck(CubeNumpy.apply, inputs)
    message = ""
except GradcheckError as error:
    message = str(error)
    print("gradgradcheck:", message)
assert message == "Numerical gradient for function expected to be zero"

# %%
# Inside a larger computation, the untracked part silently counts as zero.
# For :math:`h(x) = x^3 + x^2`, with only the cube in NumPy, autograd returns
# :math:`h''(x) = 2` instead of :math:`6x + 2`:


def second_derivative(cube, x):
    (grad,) = torch.autograd.grad((cube(x) + x**2).sum(), x, create_graph=True)
    return torch.autograd.grad(grad.sum(), x)[0]


wrong = second_derivative(CubeNumpy.apply, x)
print("h''(x):", wrong, "expected:", 6 * x.detach() + 2)
assert torch.equal(wrong, torch.full_like(x, 2.0))

# %%
# ``once_differentiable``, and where it stops protecting you
# ----------------------------------------------------------
#
# :func:`@once_differentiable <torch.autograd.function.once_differentiable>`
# (from ``torch.autograd.function``) declares that ``backward`` has no
# derivative. It runs ``backward`` without recording, and when the incoming
# gradient requires grad, it attaches its results to an error node that raises
# if a later backward pass runs it.

from torch.autograd.function import once_differentiable


class CubeOnce(CubeNumpy):
    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        return CubeNumpy.backward(ctx, grad_out)


def penalty(cube):
    """A gradient penalty (as in WGAN-GP): the squared norm of a gradient."""
    (grad,) = torch.autograd.grad(torch.tanh(cube(x)).sum(), x, create_graph=True)
    return grad.pow(2).sum()


# %%
# Three ways to ask for the second derivative, three outcomes:
#
# 1. ``.backward()`` walks the whole graph, runs the error node and raises the
#    clear error.
# 2. :func:`torch.autograd.grad` with explicit inputs never reaches the error
#    node, which hangs off the detached results, not off ``x``: it raises a
#    generic error, or, with ``allow_unused=True``, returns ``None``.
# 3. With a constant incoming gradient (the ones from ``sum``), there is
#    nothing to attach an error node to: :math:`h''` is silently wrong again.

try:
    penalty(CubeOnce.apply).backward()
except RuntimeError as error:
    print("1.", error)
    once_error = str(error)
try:
    torch.autograd.grad(penalty(CubeOnce.apply), x)
except RuntimeError as error:
    print("2.", error)
    unused_error = str(error)
missing = torch.autograd.grad(penalty(CubeOnce.apply), x, allow_unused=True)[0]
print("2. with allow_unused=True:", missing)
print("3. h''(x):", second_derivative(CubeOnce.apply, x))

assert "marked with @once_differentiable" in once_error
assert "appears to not have been used in the graph" in unused_error
assert missing is None
assert torch.equal(second_derivative(CubeOnce.apply, x), torch.full_like(x, 2.0))

# %%
# So the marker documents the limit and turns many mistakes into a clear error,
# but the test to rely on is :func:`~torch.autograd.gradgradcheck`, which fails
# for the marked Function too (it calls :func:`torch.autograd.grad` with
# explicit inputs, like case 2, so the error node never runs).

try:
    gradgradcheck(CubeOnce.apply, inputs)
    message = ""
except GradcheckError as error:
    message = str(error)
print("gradgradcheck:", message.splitlines()[0])
assert message.startswith("Jacobian mismatch for output 0 with respect to input 0")

# %%
# The cure: the backward is a Function too
# ----------------------------------------
#
# Autograd cannot look inside NumPy, but it can call a ``backward`` that we
# write. So the backward computation :math:`b(g, x) = 3x^2 g` becomes a second
# Function, whose own backward returns a gradient for each of its inputs,
# given the gradient :math:`\bar{b}` of its result:
#
# .. math::
#
#    \bar{g} = 3x^2 \, \bar{b}, \quad \bar{x} = 6x \, g \, \bar{b}


class CubeGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, grad_out, x):
        ctx.save_for_backward(grad_out, x)
        result = 3 * np.square(x.detach().numpy()) * grad_out.detach().numpy()
        return torch.as_tensor(result)

    @staticmethod
    def backward(ctx, grad_b):
        grad_out, x = ctx.saved_tensors
        return 3 * x**2 * grad_b, 6 * x * grad_out * grad_b


class Cube(CubeNumpy):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return CubeGrad.apply(grad_out, x)


# %%
# NumPy still runs in the forward pass and in the first backward pass, inside
# ``forward`` methods, where autograd never looks. What ``create_graph=True``
# records is one node, ``CubeGradBackward``: autograd names a Function's node
# after its class, plus ``Backward``. Its backward uses PyTorch operations on
# saved inputs, so third and higher derivatives are tracked by autograd itself.

(grad_x,) = torch.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
(grad2,) = torch.autograd.grad(grad_x.sum(), x, create_graph=True)
(grad3,) = torch.autograd.grad(grad2.sum(), x)
print("grad_x.grad_fn:", type(grad_x.grad_fn).__name__)
print("derivatives:", grad_x.tolist(), grad2.tolist(), grad3.tolist())
print("h''(x):", second_derivative(Cube.apply, x))
assert type(grad_x.grad_fn).__name__ == "CubeGradBackward"
assert torch.allclose(grad2, 6 * x) and torch.allclose(grad3, torch.full_like(x, 6.0))
assert torch.allclose(second_derivative(Cube.apply, x), 6 * x + 2)

# the gradient penalty now runs, and matches PyTorch's own cube
(ours,) = torch.autograd.grad(penalty(Cube.apply), x)
(reference,) = torch.autograd.grad(penalty(lambda t: t**3), x)
assert torch.allclose(ours, reference)

# %%
# Both Functions pass both checks. ``CubeGrad`` is checked with respect to both
# of its inputs; its :func:`~torch.autograd.gradgradcheck` covers the cube's
# third derivative.

assert gradcheck(Cube.apply, inputs) and gradgradcheck(Cube.apply, inputs)
pair = tuple(torch.randn(4, dtype=torch.float64, requires_grad=True) for _ in range(2))
assert gradcheck(CubeGrad.apply, pair) and gradgradcheck(CubeGrad.apply, pair)
print("Cube and CubeGrad pass gradcheck and gradgradcheck")

# %%
# In the graph, ``CubeGradBackward`` saved ``x`` and the incoming
# ``grad_out``, and leads back to ``x``.

from torchviz import make_dot

out = Cube.apply(x)
(grad_x,) = torch.autograd.grad(out.sum(), x, create_graph=True)
make_dot((grad_x, x, out), params={"x": x, "grad_x": grad_x, "out": out})

# %%
# Summary
# -------
#
# * Code outside PyTorch leaves no graph: the first derivative is right, the
#   second is an error or, mixed with tracked code, silently wrong.
# * :func:`~torch.autograd.function.once_differentiable` makes ``.backward()``
#   raise a clear error, but :func:`torch.autograd.grad` with explicit inputs
#   raises a generic one (or returns ``None`` with ``allow_unused=True``), and
#   a constant incoming gradient gets no error node at all. Rely on
#   :func:`~torch.autograd.gradgradcheck`.
# * The cure is a second Function for the backward, with a hand-written
#   backward of its own in PyTorch operations.
#
# Next, :ref:`lesson-extending-rules`: the general rules for writing
# Functions.

# %%
# Exercise
# --------
#
# Write ``ExpNumpy``, an exponential whose forward and backward both compute
# in NumPy, with a backward that is a second Function, as ``Cube`` is. Then
# run ``check_exp_numpy(ExpNumpy)``: it returns without a word when both
# derivatives are right and the gradient comes from your second Function, and
# raises an error that says what is wrong otherwise. A solution is below, for
# when you are done.


def check_exp_numpy(function):
    """Raise unless ``function`` is exp, with a backward that is itself a Function."""
    for shape in [(), (3,), (2, 3)]:
        x = torch.randn(shape, dtype=torch.float64, requires_grad=True)
        out = function.apply(x)
        assert out.shape == x.shape and torch.allclose(out, torch.exp(x)), shape
        (grad,) = torch.autograd.grad(out.sum(), x, create_graph=True)
        backward_node = torch.autograd.function.BackwardCFunction
        assert isinstance(grad.grad_fn, backward_node), "backward is not a Function"
        assert gradcheck(function.apply, (x,)) and gradgradcheck(function.apply, (x,))


# sphinx_gallery_start_ignore
# Hidden on the page: the build runs the check on the solution, and on a broken copy.
import os
import runpy

here = os.path.dirname(check_exp_numpy.__code__.co_filename)
prove = runpy.run_path(os.path.join(here, "solutions", "prove.py"))["prove"]
prove(check_exp_numpy, "ExpNumpy")
# sphinx_gallery_end_ignore
