r"""
.. _lesson-saving-intermediates:

Pattern 3: saving intermediate results
======================================

Sometimes backward needs values that forward computed on the way, which are
neither inputs nor outputs. Reusing them saves work, but it is also the
easiest way to break double backward: autograd did not record how forward
computed them, so it cannot differentiate through them.

This lesson shows the safe way to reuse such intermediate results: return
them from forward as extra outputs, save those outputs, and hide them from
the user with a small wrapper function.

You will learn:

* why an intermediate computed in forward is a constant to autograd;
* how to turn intermediates into extra outputs that autograd can track;
* why backward must then handle a gradient for every output, including the
  ones that the user never sees.
"""

# %%
# The hyperbolic sine and its derivative
# --------------------------------------
#
# The hyperbolic sine is built from two exponentials, and so is its
# derivative, the hyperbolic cosine:
#
# .. math::
#
#    \sinh(x) = \frac{e^{x} - e^{-x}}{2}, \quad
#    \frac{d}{dx} \sinh(x) = \cosh(x) = \frac{e^{x} + e^{-x}}{2}
#
# Forward has to compute :math:`e^{x}` and :math:`e^{-x}` anyway. Backward
# needs the same two values, so it is natural to keep them instead of
# computing them again.
#
# Why a plain intermediate is not enough
# --------------------------------------
#
# Autograd records nothing inside ``forward``. The two exponentials that
# forward computes have no ``grad_fn``: to autograd they are plain numbers,
# with no link to ``x``. If backward uses them, the first derivative is still
# right, because the numbers are right. But under ``create_graph=True`` the
# recorded graph treats them as constants, so the second derivative misses
# their dependence on ``x`` and comes out wrong.
#
# The next lesson, :ref:`lesson-ctx-mistake`, shows this mistake live. Here
# we write the correct version.
#
# The fix: return the intermediates as outputs
# --------------------------------------------
#
# Outputs do get a ``grad_fn``, as :ref:`lesson-saving-outputs` showed. So
# forward returns three tensors: the result and the two exponentials. It
# saves the two exponentials, which are now outputs, with
# ``ctx.save_for_backward``.
#
# Backward now receives one gradient per output: ``grad_out``,
# ``grad_exp_pos`` and ``grad_exp_neg``. It must add the contribution of each
# output, using :math:`\frac{d}{dx} e^{x} = e^{x}` and
# :math:`\frac{d}{dx} e^{-x} = -e^{-x}`:
#
# .. math::
#
#    \frac{\partial L}{\partial x} = g_{\sinh} \cdot \frac{e^{x} + e^{-x}}{2}
#    + g_{+} \cdot e^{x} - g_{-} \cdot e^{-x}
#
# where :math:`g_{\sinh}`, :math:`g_{+}` and :math:`g_{-}` are the incoming
# gradients of the three outputs.
#
# An output that nothing used gets a gradient of zeros. By default, autograd
# fills in zeros for such outputs (see ``ctx.set_materialize_grads``), so
# backward can always add the three terms without checking for ``None``.

import torch


class MySinh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        exp_pos = torch.exp(x)
        exp_neg = torch.exp(-x)
        ctx.save_for_backward(exp_pos, exp_neg)
        return (exp_pos - exp_neg) / 2, exp_pos, exp_neg

    @staticmethod
    def backward(ctx, grad_out, grad_exp_pos, grad_exp_neg):
        exp_pos, exp_neg = ctx.saved_tensors
        grad_x = grad_out * (exp_pos + exp_neg) / 2
        grad_x = grad_x + grad_exp_pos * exp_pos
        grad_x = grad_x - grad_exp_neg * exp_neg
        return grad_x


# %%
# A wrapper that hides the extra outputs
# --------------------------------------
#
# Users want a sinh, not three tensors. A small function calls the Function
# and returns only the main output. The two exponentials stay alive as saved
# tensors, and they keep their ``grad_fn``.


def my_sinh(x):
    out, _exp_pos, _exp_neg = MySinh.apply(x)
    return out


# %%
# Comparing with PyTorch's own sinh
# ---------------------------------
#
# The first derivative of :math:`\sinh` is :math:`\cosh`, and the second
# derivative is :math:`\sinh` again. We compare all three with
# ``torch.sinh`` and ``torch.cosh``. (The second call passes
# ``retain_graph=True`` only so that the graph can be drawn later.)

x = torch.tensor([-1.5, 0.0, 0.5, 2.0], dtype=torch.float64, requires_grad=True)
out = my_sinh(x)

(grad_x,) = torch.autograd.grad(out.sum(), x, create_graph=True)
(grad_grad_x,) = torch.autograd.grad(grad_x.sum(), x, retain_graph=True)
print("sinh(x):          ", out.detach())
print("first derivative: ", grad_x.detach())
print("cosh(x):          ", torch.cosh(x).detach())
print("second derivative:", grad_grad_x)

assert torch.allclose(out, torch.sinh(x))
assert torch.allclose(grad_x, torch.cosh(x))
assert torch.allclose(grad_grad_x, torch.sinh(x))

# %%
# Why the extra terms matter
# --------------------------
#
# The user never touches the two exponentials, so do their gradients matter?
# We can watch what arrives at the Function's node. A hook registered with
# ``register_prehook`` on ``MySinhBackward`` sees the three incoming
# gradients before backward runs. ``None`` means that nothing used that
# output.

watched_out, _, _ = MySinh.apply(x)
arrivals = []
watched_out.grad_fn.register_prehook(lambda grads: arrivals.append(grads))

(watched_grad,) = torch.autograd.grad(watched_out.sum(), x, create_graph=True)
(watched_second,) = torch.autograd.grad(watched_grad.sum(), x)
for pass_name, grads in zip(["first pass", "second pass"], arrivals):
    print(pass_name)
    for name, grad in zip(["grad_out", "grad_exp_pos", "grad_exp_neg"], grads):
        print(f"  {name}:", grad)

assert len(arrivals) == 2
first_pass, second_pass = arrivals
assert first_pass[1] is None and first_pass[2] is None
assert second_pass[0] is None
assert torch.allclose(second_pass[1], torch.full_like(x, 0.5))
assert torch.allclose(second_pass[2], torch.full_like(x, 0.5))

# %%
# In the first pass only ``out`` was used, so only ``grad_out`` arrives. In
# the second pass it is the other way round: the second pass differentiates
# ``grad_x``, which backward computed from the two saved exponentials, so the
# gradient arrives through exactly those two outputs. Autograd replaced each
# ``None`` with zeros before it called ``MySinh.backward``, which is why that
# backward could multiply them without checking.
#
# Here is a version that ignores the gradients of the extra outputs. It keeps
# ``MySinh.forward`` and only replaces backward.


class ForgetfulSinh(MySinh):
    @staticmethod
    def backward(ctx, grad_out, grad_exp_pos, grad_exp_neg):
        exp_pos, exp_neg = ctx.saved_tensors
        return grad_out * (exp_pos + exp_neg) / 2


forgetful_out, _, _ = ForgetfulSinh.apply(x)
(forgetful_grad,) = torch.autograd.grad(forgetful_out.sum(), x, create_graph=True)
(forgetful_second,) = torch.autograd.grad(forgetful_grad.sum(), x)
print("first derivative: ", forgetful_grad.detach())
print("second derivative:", forgetful_second)

assert torch.allclose(forgetful_grad, torch.cosh(x))
assert torch.equal(forgetful_second, torch.zeros_like(x))

# %%
# The first derivative is still right, but the second derivative is zero
# everywhere instead of :math:`\sinh(x)`. In the second pass, all of the
# gradient arrives through the two exponentials, and this backward throws it
# away.
#
# Checking it: gradcheck and gradgradcheck
# ----------------------------------------
#
# We check the wrapper ``my_sinh``, which is what users call, in double
# precision.

from torch.autograd import gradcheck, gradgradcheck

torch.manual_seed(0)
inputs = (torch.randn(4, 3, dtype=torch.float64, requires_grad=True),)

first_ok = gradcheck(my_sinh, inputs)
second_ok = gradgradcheck(my_sinh, inputs)
print("gradcheck:", first_ok)
print("gradgradcheck:", second_ok)
assert first_ok and second_ok

# %%
# The checks also accept ``MySinh.apply`` itself, with all three outputs. Then
# they test the extra terms of backward directly, as if a user did use the
# two exponentials.

first_ok = gradcheck(MySinh.apply, inputs)
second_ok = gradgradcheck(MySinh.apply, inputs)
print("gradcheck, all outputs:", first_ok)
print("gradgradcheck, all outputs:", second_ok)
assert first_ok and second_ok

# %%
# The graph
# ---------
#
# The graph is drawn from ``grad_x``, ``x`` and ``out``. The nodes that lead
# into ``grad_x`` are the operations of backward, including the two products
# with the (zero) gradients of the extra outputs. They all lead to
# ``MySinhBackward``, the node shared by all three outputs, with the two
# saved exponentials (orange) attached to it, and from there to the leaf
# ``x`` (blue). So ``grad_x`` depends on ``x`` through the saved outputs.

from torchviz import make_dot

graph = make_dot((grad_x, x, out), params={"x": x, "grad_x": grad_x, "out": out})
graph.comment = (
    "Autograd graph of grad_x, x and out: the operations that computed grad_x "
    "lead to MySinhBackward, which holds the two saved exponentials and leads "
    "back to the leaf x."
)
graph

# %%
# As in the earlier lessons, the claim is checked in code: the graph of
# ``grad_x`` reaches ``x``, and it passes through the node of ``out``.


def reaches(fn, leaf):
    """True if the backward graph under ``fn`` accumulates into ``leaf``."""
    if fn is None:
        return False
    if getattr(fn, "variable", None) is leaf:
        return True
    return any(reaches(next_fn, leaf) for next_fn, _ in fn.next_functions)


def passes_through(fn, node):
    """True if the backward graph under ``fn`` contains ``node``."""
    if fn is None:
        return False
    if fn is node:
        return True
    return any(passes_through(next_fn, node) for next_fn, _ in fn.next_functions)


print("grad_x depends on x:", reaches(grad_x.grad_fn, x))
print("through MySinhBackward:", passes_through(grad_x.grad_fn, out.grad_fn))
assert reaches(grad_x.grad_fn, x)
assert passes_through(grad_x.grad_fn, out.grad_fn)
assert type(out.grad_fn).__name__ == "MySinhBackward"

# %%
# Summary
# -------
#
# * Values computed inside forward are not tracked. Used in backward, they
#   act as constants, and the second derivative comes out wrong.
# * The fix is to return them as extra outputs and save those outputs. An
#   output has a ``grad_fn`` that leads back to the input.
# * Backward then receives one gradient per output and must add the
#   contribution of every output, even those the user never sees. The second
#   backward pass sends its gradient through exactly those outputs.
# * A small wrapper such as ``my_sinh`` returns only the main output.
#
# Next, :ref:`lesson-ctx-mistake` shows what happens when the intermediates
# are kept on ``ctx`` instead, and how the checks catch it.
