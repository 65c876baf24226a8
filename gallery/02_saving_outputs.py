r"""
.. _lesson-saving-outputs:

Pattern 2: saving the outputs
=============================

Some functions have a derivative that is easiest to write with their own
result. The exponential is the classic case: the derivative of
:math:`e^{x}` is :math:`e^{x}` again. A custom Function for it should save
its *output* for backward, not its input.

This lesson shows that an output is just as safe to save as an input. An
output has a ``grad_fn`` that leads back to the inputs, so when backward uses
it, autograd can follow the link, and double backward works with no extra
code.

You will learn:

* how to save an output with ``ctx.save_for_backward``;
* why the second derivative then goes through the Function's own backward
  again;
* why saving the output is cheaper than computing the exponential a second
  time in backward.
"""

# %%
# An exponential that saves its output
# ------------------------------------
#
# Take :math:`f(x) = e^{x}`, so :math:`f'(x) = e^{x} = f(x)`. Forward
# computes the result once and saves it. Backward multiplies the incoming
# gradient by that saved result: it does not need ``x`` at all.

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
# First and second derivatives
# ----------------------------
#
# As in :ref:`lesson-saving-inputs`, ``torch.autograd.grad`` with
# ``create_graph=True`` gives a first derivative that can be differentiated
# again. For the exponential, both derivatives equal the output. (The second
# call passes ``retain_graph=True`` only so that the graph is still there to
# be drawn at the end of this lesson.)
#
# .. math::
#
#    \frac{d}{dx} e^{x} = e^{x}, \quad \frac{d^2}{dx^2} e^{x} = e^{x}

x = torch.tensor([-1.0, 0.0, 2.0], dtype=torch.float64, requires_grad=True)
out = MyExp.apply(x)

(grad_x,) = torch.autograd.grad(out.sum(), x, create_graph=True)
(grad_grad_x,) = torch.autograd.grad(grad_x.sum(), x, retain_graph=True)
print("out:              ", out)
print("first derivative: ", grad_x)
print("second derivative:", grad_grad_x)

assert torch.allclose(out, torch.exp(x))
assert torch.allclose(grad_x, torch.exp(x))
assert torch.allclose(grad_grad_x, torch.exp(x))

# %%
# Why it works: outputs have a grad_fn
# ------------------------------------
#
# When forward returns, autograd makes the Function's backward the
# ``grad_fn`` of the output. Here that node is called ``MyExpBackward``. The
# tensor that backward reads from ``ctx.saved_tensors`` is an alias of that
# output: a new tensor object that shares its memory and its ``grad_fn``, so
# it keeps this link.
#
# Under ``create_graph=True``, backward's multiplication ``grad_out * result``
# is recorded. Its node, ``MulBackward0``, points to the output's node,
# ``MyExpBackward``. When the second backward pass walks back from
# ``grad_x``, it reaches ``MyExpBackward`` and calls ``MyExp.backward``
# again. That is how the second derivative comes out as :math:`e^{x}`.

print("out.grad_fn:   ", type(out.grad_fn).__name__)
print("grad_x.grad_fn:", type(grad_x.grad_fn).__name__)
next_nodes = [type(fn).__name__ for fn, _ in grad_x.grad_fn.next_functions if fn]
print("grad_x.grad_fn points to:", next_nodes)

assert type(out.grad_fn).__name__ == "MyExpBackward"
assert any(fn is out.grad_fn for fn, _ in grad_x.grad_fn.next_functions)

# %%
# Saving the output saves work
# ----------------------------
#
# Backward could also save ``x`` and compute ``torch.exp(x)`` a second time.
# That gives the same numbers and also supports double backward, but it runs
# the exponential again on every backward pass and allocates a new tensor
# for the result.
#
# Saving the output avoids both. ``ctx.save_for_backward`` keeps a reference
# to the result, not a copy: the saved tensor uses the same memory as
# ``out``. The output usually stays alive anyway, because the code after the
# Function uses it, so saving it often costs no extra memory at all.

new_out = MyExp.apply(x)
(saved,) = new_out.grad_fn.saved_tensors
print("saved tensor equals the output:", torch.equal(saved, new_out))
print("same memory as the output:", saved.data_ptr() == new_out.data_ptr())

assert torch.equal(saved, new_out)
assert saved.data_ptr() == new_out.data_ptr()

# %%
# Checking it: gradcheck and gradgradcheck
# ----------------------------------------
#
# ``gradcheck`` tests ``backward`` against finite differences, and
# ``gradgradcheck`` tests the graph that ``backward`` records. Both run in
# double precision, on a random input that requires grad.

from torch.autograd import gradcheck, gradgradcheck

torch.manual_seed(0)
inputs = (torch.randn(4, 3, dtype=torch.float64, requires_grad=True),)

first_ok = gradcheck(MyExp.apply, inputs)
second_ok = gradgradcheck(MyExp.apply, inputs)
print("gradcheck:", first_ok)
print("gradgradcheck:", second_ok)
assert first_ok and second_ok

# %%
# The graph
# ---------
#
# The graph below is drawn from ``grad_x``, ``x`` and ``out``. Follow the
# arrows back from ``grad_x``: its ``MulBackward0`` node leads to
# ``MyExpBackward``, which is ``out``'s own node, and from there to the leaf
# ``x`` (blue). The orange box attached to ``MyExpBackward`` is the saved
# output. So ``grad_x`` depends on ``out``, and through ``out`` on ``x``.

from torchviz import make_dot

graph = make_dot((grad_x, x, out), params={"x": x, "grad_x": grad_x, "out": out})
graph.comment = (
    "Autograd graph of grad_x, x and out: grad_x comes from a MulBackward0 node "
    "that leads to MyExpBackward, the node of the saved output out, which "
    "leads back to the leaf x."
)
graph

# %%
# The lesson checks the graph in code too. The helper ``reaches`` walks the
# backward graph from a node and reports whether it arrives at a given leaf
# tensor.


def reaches(fn, leaf):
    """True if the backward graph under ``fn`` accumulates into ``leaf``."""
    if fn is None:
        return False
    if getattr(fn, "variable", None) is leaf:
        return True
    return any(reaches(next_fn, leaf) for next_fn, _ in fn.next_functions)


print("grad_x depends on x:", reaches(grad_x.grad_fn, x))
assert reaches(grad_x.grad_fn, x)
assert any(fn is out.grad_fn for fn, _ in grad_x.grad_fn.next_functions)

# %%
# Summary
# -------
#
# * When the derivative is easiest to write with the result, save the output
#   with ``ctx.save_for_backward``.
# * An output has a ``grad_fn``: the Function's own backward node. Backward's
#   use of it is tracked like the use of an input, so double backward works.
# * The second backward pass goes through ``MyExpBackward`` again, which is
#   why the second derivative of :math:`e^{x}` is right.
# * Saving the output reuses work that forward already did; computing it
#   again in backward would cost time and memory.
#
# Next, :ref:`lesson-saving-intermediates` deals with a harder case: a
# backward that needs values that are neither inputs nor outputs.
