r"""
.. _lesson-saving-inputs:

Pattern 1: saving the inputs
============================

The simplest Function that supports double backward needs only its inputs in
``backward``. Save them with ``ctx.save_for_backward`` and the second
derivative comes for free. This lesson shows why, proves it with
``gradcheck`` and ``gradgradcheck``, and explains how to read the graphs drawn
in every lesson.
"""

# %%
# Two facts about custom Functions
# --------------------------------
#
# * **Forward is not recorded.** When ``forward`` returns, the Function's
#   ``backward`` becomes the ``grad_fn`` of the output, and nothing that
#   happened inside ``forward`` is in the graph.
# * **Backward is recorded only when the caller asks.** Under
#   ``create_graph=True``, the operations that ``backward`` runs on tensors
#   that require grad are recorded like any other code, and a second backward
#   pass walks through them.
#
# So double backward works exactly when autograd can follow what ``backward``
# does. Every lesson is a variation on that sentence.
#
# Take :math:`f(x) = x^2`, with :math:`f'(x) = 2x`. Backward needs only the
# input.

import torch


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * 2 * x


# %%
# Both facts, checked. The output's node, ``SquareBackward``, leads straight
# to ``x``: the ``x**2`` inside ``forward`` left no node of its own. The
# gradient has a ``grad_fn`` with ``create_graph=True`` and none without.

x = torch.tensor([-1.0, 0.5, 3.0], dtype=torch.float64, requires_grad=True)
out = Square.apply(x)
below = [type(node).__name__ for node, _ in out.grad_fn.next_functions]
print("out.grad_fn:", type(out.grad_fn).__name__, "->", below)

(plain,) = torch.autograd.grad(out.sum(), x, retain_graph=True)
(grad_x,) = torch.autograd.grad(out.sum(), x, create_graph=True)
print("grad_fn without create_graph:", plain.grad_fn)
print("grad_fn with create_graph:   ", type(grad_x.grad_fn).__name__)

assert below == ["AccumulateGrad"]
assert plain.grad_fn is None and grad_x.grad_fn is not None

# %%
# Differentiating ``grad_x`` again gives :math:`f''(x) = 2`. It works because
# the tensor ``backward`` reads from ``ctx.saved_tensors`` is ``x`` itself, so
# the recorded product ``grad_out * 2 * x`` is linked to ``x``. An input that
# is not a leaf works too: it carries its own ``grad_fn``.

(grad_grad_x,) = torch.autograd.grad(grad_x.sum(), x, retain_graph=True)
print("second derivative:", grad_grad_x)
assert out.grad_fn.saved_tensors[0] is x
assert torch.equal(grad_x, 2 * x)
assert torch.equal(grad_grad_x, torch.full_like(x, 2.0))

y = 3 * x  # not a leaf: d2/dx2 (3x)^2 = 18
(grad_y,) = torch.autograd.grad(Square.apply(y).sum(), x, create_graph=True)
(second,) = torch.autograd.grad(grad_y.sum(), x)
assert torch.equal(second, torch.full_like(x, 18.0))

# %%
# Checking it: gradcheck and gradgradcheck
# ----------------------------------------
#
# :func:`~torch.autograd.gradcheck` compares ``backward`` with finite
# differences; :func:`~torch.autograd.gradgradcheck` does the same for the
# graph that ``backward`` records. Each returns ``True`` or raises
# :exc:`~torch.autograd.gradcheck.GradcheckError`. Run them in ``float64``:
# finite differences divide by a tiny step and magnify rounding errors. The
# same correct Function fails in ``float32``, and PyTorch warns why.

import warnings

from torch.autograd import gradcheck, gradgradcheck
from torch.autograd.gradcheck import GradcheckError

torch.manual_seed(0)
x64 = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
assert gradcheck(Square.apply, (x64,)) and gradgradcheck(Square.apply, (x64,))
print("float64: gradcheck and gradgradcheck pass")

x32 = x64.detach().float().requires_grad_()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        gradcheck(Square.apply, (x32,))
        failed = False
    except GradcheckError as err:
        failed = True
        print("float32:", str(err).splitlines()[0])
warned = [str(w.message) for w in caught if "double precision" in str(w.message)]
print("warning:", warned[0].split(".")[0])
assert failed and warned

# %%
# Reading the graphs
# ------------------
#
# ``torchviz.make_dot`` draws the graph behind the tensors you pass it, and
# ``params`` names them. Every graph on this site uses one legend:
#
# * grey boxes are backward nodes. ``AccumulateGrad`` is the node that adds a
#   gradient into a leaf's ``.grad``;
# * rounded boxes are tensors: **blue** for a leaf that requires grad,
#   **green** for a tensor you passed to ``make_dot``, **orange** for another
#   tensor that a custom Function saved;
# * arrows point the way values were computed, from inputs to results. A
#   backward pass walks them the other way;
# * a dashed line joins a custom Function's node to a tensor it saved.
#
# Below, a path runs from ``x`` through ``MulBackward0`` to ``grad_x``: the
# derivative :math:`2x` written as a graph. It is the path that the second
# derivative above walked.

from torchviz import make_dot

make_dot((grad_x, x, out), params={"x": x, "grad_x": grad_x, "out": out})

# %%
# Summary
# -------
#
# * Forward is not recorded; backward is, under ``create_graph=True``.
# * A saved input keeps its link to the graph, so a ``backward`` built from
#   PyTorch operations on it supports double backward with no extra work.
# * Check with :func:`~torch.autograd.gradcheck` and
#   :func:`~torch.autograd.gradgradcheck`, in ``float64``.
#
# Next, :ref:`lesson-saving-outputs`: the same reasoning when backward needs
# the result of ``forward``.


# %%
# Exercise
# --------
#
# Write ``Log1pSquare``, a Function for :math:`f(x) = \log(1 + x^2)`, whose
# derivative :math:`f'(x) = 2x / (1 + x^2)` needs only the input. Then run
# ``check_log1p_square(Log1pSquare)``: it returns without a word when your
# Function is right, on a scalar, a vector and a batch, to first and second
# order, and raises an error that says what is wrong otherwise. A solution is
# below, for when you are done.


def check_log1p_square(function):
    """Raise unless ``function`` is log(1 + x**2), with both derivatives, on any shape."""
    for shape in [(), (3,), (2, 3)]:
        x = torch.randn(shape, dtype=torch.float64, requires_grad=True)
        out = function.apply(x)
        assert out.shape == x.shape and torch.allclose(out, torch.log1p(x**2)), shape
        assert gradcheck(function.apply, (x,)) and gradgradcheck(function.apply, (x,))


# sphinx_gallery_start_ignore
# Hidden on the page: the build runs the check on the solution, and on a broken copy.
import os
import runpy

here = os.path.dirname(check_log1p_square.__code__.co_filename)
prove = runpy.run_path(os.path.join(here, "solutions", "prove.py"))["prove"]
prove(check_log1p_square, "Log1pSquare")
# sphinx_gallery_end_ignore
