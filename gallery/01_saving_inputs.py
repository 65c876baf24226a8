r"""
.. _lesson-saving-inputs:

Pattern 1: saving the inputs
============================

The simplest custom Function that supports double backward is one whose
backward only needs the inputs of forward. Save them with
``ctx.save_for_backward`` and you are done: the second derivative comes for
free. This lesson shows why, proves it with ``gradcheck`` and
``gradgradcheck``, and draws the graph that autograd records.

You will learn:

* the two facts about custom Functions that decide whether double backward
  works;
* why saving an input is always safe;
* how to test a Function for first and second derivatives.
"""

# %%
# Two facts about custom Functions
# --------------------------------
#
# A subclass of ``torch.autograd.Function`` meets autograd at two moments.
#
# * **During forward, nothing is recorded.** Whatever ``forward`` computes is
#   invisible to autograd. When it returns, and if an input requires grad, the
#   Function's ``backward`` is attached as the ``grad_fn`` of each output.
# * **During backward, operations are recorded if the caller asks for it.**
#   With ``create_graph=True``, every operation that ``backward`` runs on a
#   tensor that requires grad is recorded like any other PyTorch code. That
#   recorded graph is what a second backward pass walks through.
#
# So double backward works exactly when autograd can follow the computation
# inside ``backward``. The rest of these lessons are variations on that one
# sentence.
#
# A square function
# -----------------
#
# Take :math:`f(x) = x^2`. Its derivative :math:`f'(x) = 2x` needs only the
# input, so forward saves ``x`` and backward multiplies the incoming gradient
# by ``2 * x``.

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
# First and second derivatives
# ----------------------------
#
# ``torch.autograd.grad`` with ``create_graph=True`` returns a gradient that is
# itself part of a graph. Differentiating it again gives the second
# derivative, :math:`f''(x) = 2` everywhere.

x = torch.tensor([-1.0, 0.5, 3.0], dtype=torch.float64, requires_grad=True)
out = Square.apply(x)

(grad_x,) = torch.autograd.grad(out.sum(), x, create_graph=True)
print("grad_x:", grad_x)
print("grad_x.grad_fn:", type(grad_x.grad_fn).__name__)

(grad_grad_x,) = torch.autograd.grad(grad_x.sum(), x)
print("second derivative:", grad_grad_x)

assert torch.equal(grad_x, 2 * x)
assert torch.equal(grad_grad_x, torch.full_like(x, 2.0))

# %%
# Why it works
# ------------
#
# The tensor that ``backward`` gets back from ``ctx.saved_tensors`` is ``x``
# itself: a leaf that requires grad. So when ``backward`` computes
# ``grad_out * 2 * x`` under ``create_graph=True``, autograd records the
# multiplication by ``x``. The ``grad_fn`` printed above, ``MulBackward0``, is
# that multiplication.
#
# The same holds when the input is not a leaf: any tensor that is a function
# of something requiring grad carries its own ``grad_fn``, and backward's use
# of it is tracked all the same. Here ``y`` is computed from ``x``, and the
# second derivative of :math:`(3x)^2` is :math:`18`.

y = 3 * x
(grad_y_x,) = torch.autograd.grad(Square.apply(y).sum(), x, create_graph=True)
(second,) = torch.autograd.grad(grad_y_x.sum(), x)
print("d/dx (3x)^2 =", grad_y_x)
print("d2/dx2 (3x)^2 =", second)
assert torch.allclose(second, torch.full_like(x, 18.0))

# The claims of this section, checked: the saved tensor is the input itself,
# and the gradient's grad_fn is a multiplication.
assert out.grad_fn.saved_tensors[0] is x
assert type(grad_x.grad_fn).__name__ == "MulBackward0"

# %%
# Checking it: gradcheck and gradgradcheck
# ----------------------------------------
#
# Two tools compare a Function's analytical derivatives with numerical ones,
# computed by finite differences:
#
# * ``torch.autograd.gradcheck`` checks the first derivative, that is
#   ``backward``;
# * ``torch.autograd.gradgradcheck`` checks the second, that is the graph that
#   ``backward`` records.
#
# Use double precision (``torch.float64``). Finite differences divide by a
# tiny step, which magnifies rounding errors; in single precision the checks
# fail on correct code, as the next cell shows. By default both return
# ``True`` or raise an error that says which derivative disagrees.

from torch.autograd import gradcheck, gradgradcheck

torch.manual_seed(0)
inputs = (torch.randn(4, 3, dtype=torch.float64, requires_grad=True),)

first_ok = gradcheck(Square.apply, inputs)
second_ok = gradgradcheck(Square.apply, inputs)
print("gradcheck:", first_ok)
print("gradgradcheck:", second_ok)
assert first_ok and second_ok

# %%
# The same correct Function, checked in single precision, fails. PyTorch also
# warns that the inputs are not in double precision.

import warnings

from torch.autograd.gradcheck import GradcheckError

single = (inputs[0].detach().float().requires_grad_(),)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        gradcheck(Square.apply, single)
        failed = False
    except GradcheckError as err:
        failed = True
        print("float32 gradcheck:", str(err).splitlines()[0])
print("warned about precision:", any("double precision" in str(w.message) for w in caught))
assert failed
assert any("double precision" in str(w.message) for w in caught)

# %%
# The graph
# ---------
#
# ``torchviz.make_dot`` draws the graph behind a set of tensors. Drawing
# ``grad_x`` together with ``x`` and ``out`` shows that the gradient is not a
# dead end: its ``MulBackward0`` node leads back to the leaf ``x``, the same
# leaf that ``out`` came from through ``SquareBackward``. (torchviz draws the
# outputs you ask for in green and a tensor that a custom Function saved in
# orange; ``x`` is both a leaf and a saved tensor.) That path from ``grad_x``
# to ``x`` is the derivative :math:`2x` written as a graph, and it is what
# ``gradgradcheck`` walked.

from torchviz import make_dot

graph = make_dot((grad_x, x, out), params={"x": x, "grad_x": grad_x, "out": out})
graph.comment = (
    "Autograd graph of grad_x, x and out: grad_x comes from a MulBackward0 "
    "node that leads back to the leaf x, which also feeds SquareBackward and out."
)
graph

# %%
# The lesson tests its own claim: the graph of ``grad_x`` reaches ``x``.


def reaches(fn, leaf):
    """True if the backward graph under ``fn`` accumulates into ``leaf``."""
    if fn is None:
        return False
    if getattr(fn, "variable", None) is leaf:
        return True
    return any(reaches(next_fn, leaf) for next_fn, _ in fn.next_functions)


assert reaches(grad_x.grad_fn, x)
print("grad_x depends on x:", reaches(grad_x.grad_fn, x))

# %%
# Summary
# -------
#
# * Forward is not recorded; backward is, under ``create_graph=True``.
# * An input saved with ``ctx.save_for_backward`` keeps its link to the graph,
#   so a backward written with differentiable PyTorch operations on it
#   supports double backward with no extra work.
# * Prove it with ``gradcheck`` and ``gradgradcheck`` in ``float64``.
#
# Next, see how the same reasoning applies when backward needs the *output*
# of forward instead of its input. For how these pages are built, see
# :doc:`/building`.
