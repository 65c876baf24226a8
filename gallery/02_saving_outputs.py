r"""
.. _lesson-saving-outputs:

Pattern 2: saving the outputs
=============================

Some derivatives are easiest to write with the function's own result: the
exponential is its own derivative. A Function for it saves its *output*. This
lesson shows that an output is as safe to save as an input, and cheaper than
computing the result again.
"""

# %%
# An exponential that saves its output
# ------------------------------------

import torch


class MyExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        result = torch.exp(x)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_out):
        (result,) = ctx.saved_tensors
        return grad_out * result


# %%
# Both derivatives equal :math:`e^{x}`:

x = torch.tensor([-1.0, 0.0, 2.0], dtype=torch.float64, requires_grad=True)
out = MyExp.apply(x)
(grad_x,) = torch.autograd.grad(out.sum(), x, create_graph=True)
(grad_grad_x,) = torch.autograd.grad(grad_x.sum(), x, retain_graph=True)
print("first derivative: ", grad_x)
print("second derivative:", grad_grad_x)
assert torch.allclose(grad_x, torch.exp(x))
assert torch.allclose(grad_grad_x, torch.exp(x))

# %%
# Why it works: an output has a grad_fn
# -------------------------------------
#
# What ``backward`` reads from ``ctx.saved_tensors`` is the output with its
# ``grad_fn``, ``MyExpBackward``. So the recorded ``grad_out * result`` points
# to ``MyExpBackward``, and the second backward pass calls ``MyExp.backward``
# again: the second derivative is :math:`e^{x}` because the first one was.

saved = out.grad_fn.saved_tensors[0]
print("saved output's grad_fn:", type(saved.grad_fn).__name__)
below = [type(node).__name__ for node, _ in grad_x.grad_fn.next_functions if node]
print("grad_x.grad_fn:", type(grad_x.grad_fn).__name__, "->", below)
assert saved.grad_fn is out.grad_fn
assert any(node is out.grad_fn for node, _ in grad_x.grad_fn.next_functions)

# %%
# Saving the output costs no extra memory
# ---------------------------------------
#
# The saved tensor shares the output's memory, which the caller usually keeps
# anyway. Saving ``x`` instead and computing ``torch.exp(x)`` again in
# ``backward`` would also work, at the cost of a second exponential in every
# backward pass; :ref:`lesson-saving-intermediates` measures that trade-off.

print("same memory as the output:", saved.data_ptr() == out.data_ptr())
assert saved.data_ptr() == out.data_ptr()

# %%
# Checks and graph
# ----------------

from torch.autograd import gradcheck, gradgradcheck

torch.manual_seed(0)
inputs = (torch.randn(4, 3, dtype=torch.float64, requires_grad=True),)
assert gradcheck(MyExp.apply, inputs) and gradgradcheck(MyExp.apply, inputs)
print("gradcheck and gradgradcheck pass")

# %%
# From ``x``, a path runs to ``MyExpBackward``, which leads both to ``out``
# and, through ``MulBackward0``, to ``grad_x``. The orange ``result`` is the
# saved output.

from torchviz import make_dot

make_dot((grad_x, x, out), params={"x": x, "grad_x": grad_x, "out": out})

# %%
# Summary
# -------
#
# * Save the output when the derivative is easiest to write with it. It keeps
#   its ``grad_fn``, so double backward works as for an input.
# * The second backward pass runs the Function's own ``backward`` again.
# * Saving the output reuses forward's work and its memory.
#
# Next, :ref:`lesson-saving-intermediates`: values that are neither inputs nor
# outputs.

# %%
# Exercise
# --------
#
# Write ``Sigmoid``, a Function for the logistic sigmoid
# :math:`\sigma(x) = 1 / (1 + e^{-x})`, whose derivative
# :math:`\sigma(x)(1 - \sigma(x))` is easiest written with the output. Then
# run ``check_sigmoid(Sigmoid)``: it returns without a word when your Function
# is right and saves its output, and raises an error that says what is wrong
# otherwise. A solution is below, for when you are done.


def check_sigmoid(function):
    """Raise unless ``function`` is the sigmoid, saves its output, and has both derivatives."""
    for shape in [(), (3,), (2, 3)]:
        x = torch.randn(shape, dtype=torch.float64, requires_grad=True)
        out = function.apply(x)
        assert out.shape == x.shape and torch.allclose(out, torch.sigmoid(x)), shape
        saved = out.grad_fn.saved_tensors
        assert len(saved) == 1 and saved[0].grad_fn is out.grad_fn, "save the output only"
        assert gradcheck(function.apply, (x,)) and gradgradcheck(function.apply, (x,))


# sphinx_gallery_start_ignore
# Hidden on the page: the build runs the check on the solution, and on a broken copy.
import os
import runpy

here = os.path.dirname(check_sigmoid.__code__.co_filename)
prove = runpy.run_path(os.path.join(here, "solutions", "prove.py"))["prove"]
prove(check_sigmoid, "Sigmoid")
# sphinx_gallery_end_ignore
