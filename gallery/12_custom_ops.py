r"""
.. _lesson-custom-ops:

Today: custom operators with torch.library
==========================================

``torch.library.custom_op`` turns a Python function into a PyTorch operator:
the way to wrap code PyTorch cannot see (NumPy, a C++ or CUDA kernel) so that
``torch.compile`` and the rest of PyTorch treat it as one opaque operation.
Its gradient is registered with ``register_autograd``, and everything the
patterns taught holds: double backward works exactly when that backward is
made of operations autograd can differentiate. This lesson builds one, breaks
it, repairs it, and tests it with ``torch.library.opcheck``.
"""

# %%
# A sine computed by NumPy
# ------------------------
#
# Three pieces make an operator with a gradient:
#
# * the implementation, decorated with :func:`~torch.library.custom_op`, whose
#   type hints become the operator's schema (``mutates_args=()`` says it
#   changes no input);
# * :func:`~torch.library.register_fake`: what the output looks like (shape,
#   dtype, device), computed without data, so that :func:`torch.compile` can
#   trace through it;
# * ``register_autograd(backward, setup_context=...)``, with the
#   ``setup_context(ctx, inputs, output)`` and ``backward`` of a
#   :class:`torch.autograd.Function` in the newer style (these exact parameter
#   names: they are passed by keyword).

import warnings

import numpy as np
import torch

# sphinx_gallery_thumbnail_path = "_static/thumbs/12_custom_ops.svg"


@torch.library.custom_op("dbw::numpy_sin", mutates_args=())
def numpy_sin(x: torch.Tensor) -> torch.Tensor:
    return torch.as_tensor(np.sin(x.numpy(force=True)), device=x.device)


@numpy_sin.register_fake
def _(x):
    return torch.empty_like(x)


def save_input(ctx, inputs, output):
    (x,) = inputs
    ctx.save_for_backward(x)


def sin_backward(ctx, grad_out):
    (x,) = ctx.saved_tensors
    return grad_out * torch.cos(x)


numpy_sin.register_autograd(sin_backward, setup_context=save_input)

# %%
# The backward multiplies by ``torch.cos(x)`` of the saved input: pattern 1
# (:ref:`lesson-saving-inputs`). Autograd records it, so double backward works
# although the forward is NumPy.

from torch.autograd import gradcheck, gradgradcheck

torch.manual_seed(0)
x = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
assert gradcheck(numpy_sin, (x,)) and gradgradcheck(numpy_sin, (x,))
(grad_x,) = torch.autograd.grad(numpy_sin(x).sum(), x, create_graph=True)
(second,) = torch.autograd.grad(grad_x.sum(), x)
print("gradcheck and gradgradcheck pass; second derivative is -sin(x):", end=" ")
print(torch.allclose(second, -torch.sin(x)))
assert torch.allclose(second, -torch.sin(x))

# %%
# A backward that leaves PyTorch
# ------------------------------
#
# If the backward calls another NumPy operator, ``numpy_cos``, that has no
# gradient of its own, the second derivative is lost, as in
# :ref:`lesson-untracked-backward`. One thing is better than with a
# :class:`torch.autograd.Function`: an operator without a registered gradient
# is never silently treated as a constant. The second backward pass stops at
# it, whichever way it is asked for.


@torch.library.custom_op("dbw::numpy_cos", mutates_args=())
def numpy_cos(x: torch.Tensor) -> torch.Tensor:
    return torch.as_tensor(np.cos(x.numpy(force=True)), device=x.device)


@numpy_cos.register_fake
def _(x):
    return torch.empty_like(x)


@torch.library.custom_op("dbw::numpy_sin_untracked", mutates_args=())
def numpy_sin_untracked(x: torch.Tensor) -> torch.Tensor:
    return numpy_sin(x)


@numpy_sin_untracked.register_fake
def _(x):
    return torch.empty_like(x)


numpy_sin_untracked.register_autograd(
    lambda ctx, grad_out: grad_out * numpy_cos(ctx.saved_tensors[0]), setup_context=save_input
)

assert gradcheck(numpy_sin_untracked, (x,))


def second_passes():
    """Three ways to ask for the second derivative."""
    yield lambda grad: grad.sum().backward()
    yield lambda grad: torch.autograd.grad(grad.sum(), x)
    yield lambda grad: torch.autograd.grad(grad.sum(), x, allow_unused=True)


messages = []
for second_pass in second_passes():
    (grad_x,) = torch.autograd.grad(numpy_sin_untracked(x).sum(), x, create_graph=True)
    try:
        second_pass(grad_x)
    except RuntimeError as error:
        messages.append(str(error))
print("RuntimeError:", messages[0])
assert len(messages) == 3 and all("no autograd formula was registered" in m for m in messages)

# %%
# The cure: the inner operator gets a gradient too
# ------------------------------------------------
#
# As in pattern 4, the operator used by the backward gets its own gradient,
# :math:`\cos'(x) = -\sin(x)`. Written with ``numpy_sin``, which has a
# gradient, every higher derivative is covered.


def cos_backward(ctx, grad_out):
    (x,) = ctx.saved_tensors
    return -grad_out * numpy_sin(x)


numpy_cos.register_autograd(cos_backward, setup_context=save_input)

assert gradgradcheck(numpy_sin_untracked, (x,))
(grad_x,) = torch.autograd.grad(numpy_sin_untracked(x).sum(), x, create_graph=True)
(second,) = torch.autograd.grad(grad_x.sum(), x, create_graph=True)
(third,) = torch.autograd.grad(second.sum(), x)
print("second and third derivatives right:", end=" ")
print(torch.allclose(second, -torch.sin(x)) and torch.allclose(third, -torch.cos(x)))
assert torch.allclose(second, -torch.sin(x)) and torch.allclose(third, -torch.cos(x))

# %%
# Testing an operator: opcheck
# ----------------------------
#
# :func:`torch.library.opcheck` tests what :func:`~torch.autograd.gradcheck`
# cannot see: that the schema matches what the function does, that the fake
# implementation agrees with the real one, that the gradient is registered the
# right way, and that the operator survives the tracing :func:`torch.compile`
# does. Run it beside :func:`~torch.autograd.gradcheck` and
# :func:`~torch.autograd.gradgradcheck`; each check it ran reports ``SUCCESS``.

results = torch.library.opcheck(numpy_sin, (x,))
for name, result in results.items():
    print(f"{name:28} {result}")
assert set(results.values()) == {"SUCCESS"}

# %%
# An operator whose fake implementation gets the shape wrong passes
# :func:`~torch.autograd.gradcheck` (the real computation and its gradient are
# right) but fails :func:`~torch.library.opcheck`:


@torch.library.custom_op("dbw::numpy_sin_bad_fake", mutates_args=())
def numpy_sin_bad_fake(x: torch.Tensor) -> torch.Tensor:
    return numpy_sin(x)


@numpy_sin_bad_fake.register_fake
def _(x):
    return x.new_empty(x.shape[:-1])  # wrong: drops the last dimension


numpy_sin_bad_fake.register_autograd(sin_backward, setup_context=save_input)
assert gradcheck(numpy_sin_bad_fake, (x,))
try:
    torch.library.opcheck(numpy_sin_bad_fake, (x.detach(),))
    error = None
except Exception as raised:  # OpCheckError, which torch.library does not export
    error = raised
    print(f"{type(error).__name__}:", str(error).split(" (scroll up")[0])
assert type(error).__name__ == "OpCheckError"
assert "test_faketensor failed" in str(error) and "Shapes" in str(error)

# %%
# custom_op or autograd.Function?
# -------------------------------
#
# .. list-table::
#    :header-rows: 1
#
#    * -
#      - :class:`torch.autograd.Function`
#      - :func:`torch.library.custom_op`
#    * - What it wraps
#      - any Python code, run eagerly
#      - code PyTorch cannot see (NumPy, C++ or CUDA kernels), as one operator
#    * - :func:`torch.compile`
#      - traced into, with the limits of :ref:`lesson-torch-compile`
#      - one opaque operator (needs :func:`~torch.library.register_fake`)
#    * - :mod:`torch.func`
#      - yes, with ``setup_context`` and a vmap rule
#      - ``grad`` and ``jacrev`` refuse it; ``jvp`` and ``jacfwd`` silently
#        give a zero tangent
#    * - Double backward
#      - ``backward`` in PyTorch operations
#      - ``backward`` in operators that have a gradient
#    * - A backward that leaves PyTorch
#      - silently constant, or an error
#      - an error if it calls an operator without a gradient; silently constant
#        if it calls NumPy itself
#    * - Tests
#      - :func:`~torch.autograd.gradcheck`, :func:`~torch.autograd.gradgradcheck`
#      - the same, plus :func:`~torch.library.opcheck`
#
# The :mod:`torch.func` row, checked on this build's PyTorch:

try:
    torch.func.grad(lambda t: numpy_sin(t).sum())(x.detach())
    message = ""
except RuntimeError as error:
    message = str(error).split(". ")[0]
    print("torch.func.grad:", message)
ones = torch.ones_like(x)
with warnings.catch_warnings():
    # PyTorch's own deprecation note when forward mode first loads (lesson 08)
    warnings.filterwarnings("ignore", message="`torch.jit.script` is deprecated")
    _, tangent = torch.func.jvp(numpy_sin, (x.detach(),), (ones,))
print("torch.func.jvp tangent is zero:", bool((tangent == 0).all()), "| cos(x) is not")
assert "must override the setup_context staticmethod" in message
assert torch.equal(tangent, torch.zeros_like(x)) and not torch.allclose(tangent, torch.cos(x))

# %%
# Summary
# -------
#
# * :func:`~torch.library.custom_op` + :func:`~torch.library.register_fake` +
#   :func:`~torch.library.register_autograd` make an operator with a gradient,
#   opaque to :func:`torch.compile`.
# * Its double backward works when its backward uses operations with
#   gradients; an operator without one stops the second pass with an error.
# * Test with :func:`~torch.autograd.gradcheck`,
#   :func:`~torch.autograd.gradgradcheck` and :func:`~torch.library.opcheck`.
#
# Next, :ref:`lesson-torch-compile`: what happens to double backward under
# :func:`torch.compile`.
