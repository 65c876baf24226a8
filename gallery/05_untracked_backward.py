r"""
.. _lesson-untracked-backward:

Pattern 4: a backward autograd cannot track
===========================================

Sometimes both passes of a Function run in code that autograd cannot see: a
NumPy or SciPy routine, or a C++ extension. The first derivative is then
still right, because you wrote ``backward`` by hand. But a second backward
pass has nothing to walk through, since the work inside ``backward`` left no
graph behind.

This lesson builds such a Function with real NumPy, shows how its second
derivative fails (sometimes loudly, sometimes silently), and then repairs it:
the backward becomes a custom Function of its own, with its own hand-written
backward.

You will learn:

* what goes wrong when ``backward`` leaves PyTorch;
* how ``once_differentiable`` makes a Function say that it has no second
  derivative, and where that protection ends;
* how to write the backward as a second Function so that double backward
  works.
"""

# %%
# A cube computed with NumPy
# --------------------------
#
# Take :math:`f(x) = x^3`, with :math:`f'(x) = 3x^2`. Both passes below leave
# PyTorch: they turn the tensors into NumPy arrays, compute there, and turn
# the result back into a tensor of the same dtype. NumPy cannot work on a
# tensor that requires grad, so ``detach()`` comes first.
#
# For a gradient ``g`` that arrives from the loss, ``backward`` returns
# :math:`3x^2 \cdot g`.

import numpy as np
import torch


class CubeNumpy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        x_np = x.detach().numpy()
        return torch.as_tensor(np.power(x_np, 3), dtype=x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        x_np = x.detach().numpy()
        g_np = grad_out.detach().numpy()
        return torch.as_tensor(3 * np.square(x_np) * g_np, dtype=x.dtype)


# %%
# The first derivative is right
# -----------------------------
#
# The backward is a correct formula, so the gradient matches :math:`3x^2`, and
# ``gradcheck`` agrees.

from torch.autograd import gradcheck, gradgradcheck

x = torch.tensor([-1.0, 0.5, 2.0], dtype=torch.float64, requires_grad=True)
out = CubeNumpy.apply(x)
print("out:", out)

(grad_x,) = torch.autograd.grad(out.sum(), x, create_graph=True)
print("grad_x:", grad_x)
assert torch.allclose(grad_x, 3 * x**2)

torch.manual_seed(0)
inputs = (torch.randn(4, dtype=torch.float64, requires_grad=True),)
first_ok = gradcheck(CubeNumpy.apply, inputs)
print("gradcheck:", first_ok)
assert first_ok

# %%
# The second derivative is lost
# -----------------------------
#
# We asked for ``create_graph=True``, yet ``grad_x`` has no ``grad_fn`` and
# does not require grad. The numbers were made by NumPy, so autograd recorded
# nothing; to autograd, ``grad_x`` is a constant. Differentiating it again is
# an error.

print("grad_x.requires_grad:", grad_x.requires_grad)
print("grad_x.grad_fn:", grad_x.grad_fn)
assert not grad_x.requires_grad and grad_x.grad_fn is None

try:
    torch.autograd.grad(grad_x.sum(), x)
except RuntimeError as error:
    lost_message = str(error)
    print("RuntimeError:", lost_message)
assert "does not require grad and does not have a grad_fn" in lost_message

# %%
# ``gradgradcheck`` fails too. It sees that the gradient does not depend on the
# input at all, while finite differences say it should. It raises a
# ``GradcheckError`` (a kind of ``RuntimeError``); we print the first line of
# its message.

from torch.autograd.gradcheck import GradcheckError

try:
    gradgradcheck(CubeNumpy.apply, inputs)
except GradcheckError as error:
    numpy_check_line = str(error).splitlines()[0]
    print("GradcheckError:", numpy_check_line)
assert numpy_check_line.startswith("Numerical gradient for function expected")

# %%
# Worse: a second derivative that is silently wrong
# -------------------------------------------------
#
# An error is the good case. In a real model, the cube is one part among
# many, and the gradient is a sum of pieces that autograd did track and
# pieces that it did not. Then the untracked pieces simply count as zero.
#
# Take :math:`h(x) = x^3 + x^2`, where only the cube goes through NumPy. The
# true second derivative is :math:`h''(x) = 6x + 2`. Autograd sees only the
# :math:`x^2` part and returns :math:`2`, with no error and no warning.

h_out = CubeNumpy.apply(x) + x**2
(grad_h,) = torch.autograd.grad(h_out.sum(), x, create_graph=True)
(second_h,) = torch.autograd.grad(grad_h.sum(), x)
print("computed h''(x):", second_h)
print("true h''(x):    ", 6 * x.detach() + 2)

assert torch.allclose(grad_h, 3 * x**2 + 2 * x)  # first derivative: right
assert torch.equal(second_h, torch.full_like(x, 2.0))  # only the x^2 part
assert not torch.allclose(second_h, 6 * x + 2)

# %%
# Saying so: ``once_differentiable``
# ----------------------------------
#
# A Function whose backward cannot be differentiated should declare it.
# Decorate ``backward`` with ``once_differentiable`` (from
# ``torch.autograd.function``). The decorator runs ``backward`` without
# recording anything. When the incoming gradient itself requires grad, it
# passes detached copies of the results through a special node that raises an
# error when a later backward pass runs it.

from torch.autograd.function import once_differentiable


class CubeOnce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        x_np = x.detach().numpy()
        return torch.as_tensor(np.power(x_np, 3), dtype=x.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        x_np = x.detach().numpy()
        g_np = grad_out.detach().numpy()
        return torch.as_tensor(3 * np.square(x_np) * g_np, dtype=x.dtype)


# %%
# Here the cube feeds a ``tanh``, and a gradient penalty (the squared norm of
# the gradient, as in WGAN-GP) is differentiated with ``.backward()``. This
# second backward pass now stops with a message that names the problem.

y = torch.tanh(CubeOnce.apply(x))
(grad_y,) = torch.autograd.grad(y.sum(), x, create_graph=True)
penalty = grad_y.pow(2).sum()

try:
    penalty.backward()
except RuntimeError as error:
    once_message = str(error)
    print("RuntimeError:", once_message)
assert "marked with @once_differentiable" in once_message

# %%
# Where the protection ends
# -------------------------
#
# ``penalty.backward()`` walks the whole graph, so it runs the error node. A
# call that names its inputs does not: the error node hangs off the detached
# copies, not off ``x``. ``torch.autograd.grad(penalty, x)`` never reaches it
# and raises PyTorch's generic error that ``x`` "appears to not have been
# used in the graph". With ``allow_unused=True`` it returns ``None``, with no
# error at all.

y = torch.tanh(CubeOnce.apply(x))
(grad_y,) = torch.autograd.grad(y.sum(), x, create_graph=True)
penalty = grad_y.pow(2).sum()

try:
    torch.autograd.grad(penalty, x)
except RuntimeError as error:
    unused_message = str(error)
    print("RuntimeError:", unused_message)
assert "appears to not have been used in the graph" in unused_message

(penalty_grad,) = torch.autograd.grad(penalty, x, allow_unused=True)
print("with allow_unused=True:", penalty_grad)
assert penalty_grad is None

# %%
# The marker can only guard a gradient that carries a graph. In
# :math:`h(x) = x^3 + x^2` the gradient that reaches the cube is a constant
# (the ones from ``sum``), so the marker adds no error node, and the second
# derivative is just as silently wrong as before:

h_out = CubeOnce.apply(x) + x**2
(grad_h,) = torch.autograd.grad(h_out.sum(), x, create_graph=True)
(second_h,) = torch.autograd.grad(grad_h.sum(), x)
print("computed h''(x) with the marker:", second_h)
assert torch.equal(second_h, torch.full_like(x, 2.0))

# %%
# So ``once_differentiable`` documents the limit and turns many mistakes into
# a clear error, but the test to rely on is ``gradgradcheck``. It fails for
# the marked Function too. It also names its inputs, so it never runs the
# error node either: the second derivatives it computes (the "analytical"
# side of its message) are all zero.

try:
    gradgradcheck(CubeOnce.apply, inputs)
except GradcheckError as error:
    once_check_message = str(error)
    once_check_line = once_check_message.splitlines()[0]
    print("GradcheckError:", once_check_line)
assert once_check_line.startswith("Jacobian mismatch for output 0")
all_zero = str(torch.zeros(4, 4, dtype=torch.float64))
assert "analytical:" + all_zero in once_check_message

# %%
# The cure: the backward is a Function too
# ----------------------------------------
#
# Autograd cannot look inside NumPy, but it can call a ``backward`` that we
# write. So we wrap the backward computation in a second custom Function.
# Its forward computes :math:`b(g, x) = 3x^2 \cdot g` in NumPy. Its own
# backward receives a gradient :math:`\bar{b}` for that result and returns
# one gradient for each of its two inputs:
#
# .. math::
#
#    \frac{\partial b}{\partial g} \cdot \bar{b} = 3x^2 \cdot \bar{b}
#    \quad\text{and}\quad
#    \frac{\partial b}{\partial x} \cdot \bar{b} = 6x \cdot g \cdot \bar{b}
#
# In the code, :math:`\bar{b}` is called ``gg``. The cube's own ``backward``
# then only calls ``CubeBackward.apply(grad_out, x)``.


class CubeBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, grad_out, x):
        ctx.save_for_backward(grad_out, x)
        x_np = x.detach().numpy()
        g_np = grad_out.detach().numpy()
        return torch.as_tensor(3 * np.square(x_np) * g_np, dtype=x.dtype)

    @staticmethod
    def backward(ctx, gg):
        grad_out, x = ctx.saved_tensors
        return 3 * x**2 * gg, 6 * x * grad_out * gg


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        x_np = x.detach().numpy()
        return torch.as_tensor(np.power(x_np, 3), dtype=x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return CubeBackward.apply(grad_out, x)


# %%
# The NumPy work still happens in ``forward`` methods only, where autograd
# never looks anyway. What autograd records under ``create_graph=True`` is a
# single node, ``CubeBackwardBackward`` (the node of the Function
# ``CubeBackward``), which becomes the ``grad_fn`` of ``grad_x``.
#
# ``CubeBackward.backward`` is written with PyTorch operations on saved
# inputs. That is a choice: had we written it in NumPy as well, we would need
# a third Function to get a third derivative, and so on. With PyTorch
# operations at this level, the chain ends here: autograd tracks every
# derivative from the third on by itself.
#
# First and second derivatives
# ----------------------------
#
# The gradient now has a ``grad_fn``, and both derivatives match
# :math:`3x^2` and :math:`6x`.

out = Cube.apply(x)
(grad_x,) = torch.autograd.grad(out.sum(), x, create_graph=True)
(grad_grad_x,) = torch.autograd.grad(grad_x.sum(), x, create_graph=True)
print("grad_x:", grad_x)
print("grad_x.grad_fn:", type(grad_x.grad_fn).__name__)
print("second derivative:", grad_grad_x)

assert torch.allclose(grad_x, 3 * x**2)
assert torch.allclose(grad_grad_x, 6 * x)

# %%
# The example that was silently wrong now gives :math:`h''(x) = 6x + 2`, and
# the gradient penalty that used to stop with an error runs.

h_out = Cube.apply(x) + x**2
(grad_h,) = torch.autograd.grad(h_out.sum(), x, create_graph=True)
(second_h,) = torch.autograd.grad(grad_h.sum(), x)
print("h''(x):", second_h)
assert torch.allclose(second_h, 6 * x + 2)

y = torch.tanh(Cube.apply(x))
(grad_y,) = torch.autograd.grad(y.sum(), x, create_graph=True)
(grad_penalty,) = torch.autograd.grad(grad_y.pow(2).sum(), x)

# the same penalty with PyTorch's own x**3, for comparison
y_ref = torch.tanh(x**3)
(grad_y_ref,) = torch.autograd.grad(y_ref.sum(), x, create_graph=True)
(grad_penalty_ref,) = torch.autograd.grad(grad_y_ref.pow(2).sum(), x)
same = torch.allclose(grad_penalty, grad_penalty_ref)
print("penalty gradient matches PyTorch's own x**3:", same)
assert same

# %%
# Third derivatives
# -----------------
#
# Because ``CubeBackward.backward`` uses PyTorch operations, one more
# derivative is tracked as well. The third derivative of :math:`x^3` is
# :math:`6` everywhere.

(third,) = torch.autograd.grad(grad_grad_x.sum(), x)
print("third derivative:", third)
assert torch.allclose(third, torch.full_like(x, 6.0))

# %%
# Checking it: gradcheck and gradgradcheck
# ----------------------------------------
#
# Both checks pass for ``Cube``, in ``float64``. ``CubeBackward`` is a Function
# in its own right, so we check it too, with respect to both of its inputs:
# its ``gradgradcheck`` covers the third derivative of the cube.

first_ok = gradcheck(Cube.apply, inputs)
second_ok = gradgradcheck(Cube.apply, inputs)
print("gradcheck:", first_ok)
print("gradgradcheck:", second_ok)
assert first_ok and second_ok

backward_inputs = (
    torch.randn(4, dtype=torch.float64, requires_grad=True),  # grad_out
    torch.randn(4, dtype=torch.float64, requires_grad=True),  # x
)
inner_first_ok = gradcheck(CubeBackward.apply, backward_inputs)
inner_second_ok = gradgradcheck(CubeBackward.apply, backward_inputs)
print("gradcheck (CubeBackward):", inner_first_ok)
print("gradgradcheck (CubeBackward):", inner_second_ok)
assert inner_first_ok and inner_second_ok

# %%
# The graph
# ---------
#
# Autograd names the node of a Function by adding ``Backward`` to the class
# name. So ``CubeBackward`` in the picture is the node of ``Cube``, and
# ``CubeBackwardBackward`` is the node of our second Function,
# ``CubeBackward``.
#
# Arrows follow the backward graph. ``grad_x`` (its ``grad_fn`` is
# ``CubeBackwardBackward``) leads through ``AccumulateGrad`` back to the leaf
# ``x``, the same leaf that ``out`` came from. With ``CubeNumpy``, ``grad_x``
# had no node at all.
#
# Lines without arrowheads connect the node of a custom Function to the
# tensors it saved, drawn in orange. ``CubeBackward`` saved ``x``, and
# ``CubeBackwardBackward`` saved ``x`` and the incoming gradient: the
# unnamed box, which holds the ones that ``sum`` passed down.

from torchviz import make_dot

names = {"x": x, "grad_x": grad_x, "out": out}
graph = make_dot((grad_x, x, out), params=names)
graph.comment = (
    "Autograd graph of grad_x, x and out: grad_x comes from a "
    "CubeBackwardBackward node that leads back to the leaf x, which also "
    "feeds the CubeBackward node of out."
)
graph

# %%
# The lesson checks what the graph shows: the node of ``grad_x`` is
# ``CubeBackwardBackward``, and it reaches ``x``.


def reaches(fn, leaf):
    """True if the backward graph under ``fn`` accumulates into ``leaf``."""
    if fn is None:
        return False
    if getattr(fn, "variable", None) is leaf:
        return True
    return any(reaches(next_fn, leaf) for next_fn, _ in fn.next_functions)


print("grad_x.grad_fn:", type(grad_x.grad_fn).__name__)
print("grad_x depends on x:", reaches(grad_x.grad_fn, x))
assert type(grad_x.grad_fn).__name__ == "CubeBackwardBackward"
assert reaches(grad_x.grad_fn, x)

# %%
# Summary
# -------
#
# * Code outside PyTorch (NumPy, SciPy, C++ extensions) leaves no graph. A
#   ``backward`` written with it gives a correct first derivative and no
#   second one.
# * The failure may be an error, or a silently wrong second derivative when
#   tracked and untracked pieces are added together.
# * Mark such a ``backward`` with ``once_differentiable``. It turns many of
#   these mistakes into a clear error, but not all of them: only a backward
#   pass that runs its error node raises. ``.backward()`` does;
#   ``torch.autograd.grad`` with explicit inputs does not. ``gradgradcheck``
#   failed for both versions, with or without the marker.
# * The cure is to make the backward a custom Function too, with a
#   hand-written backward that returns a gradient for each of its inputs (the
#   incoming gradient and ``x``). Write that innermost backward with PyTorch
#   operations, and third derivatives work as well.
#
# The next lesson, :ref:`lesson-extending-rules`, collects the general rules
# for writing custom Functions, each with a small example.
