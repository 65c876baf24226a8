r"""
.. _lesson-error-index:

Every error message, with its cause and its fix
===============================================

The messages a reader meets while writing Functions that support double
backward, grouped by what went wrong, each with its cause, its fix, and the
lesson that explains it; and the symptoms of a second derivative that is
silently wrong.

Every message on this page is printed by a minimal example that ran when the
page was built, so it is the exact text of the PyTorch that built it. Paste a
message into the search box to land on its entry.
"""

# %%
# Each example runs through one helper: it expects one exception type,
# prints the message, and fails the build if the example raised nothing.

import warnings

import numpy as np
import torch

# sphinx_gallery_thumbnail_path = "_static/thumbs/15_error_index.svg"
from torch.autograd import Function, gradcheck, gradgradcheck
from torch.autograd.function import once_differentiable
from torch.autograd.gradcheck import GradcheckError


def message_of(expected, action):
    """Run ``action``; print and return the message of the expected exception."""
    try:
        action()
    except expected as error:
        print(f"{type(error).__name__}: {error}".split("\n\n")[0])
        return str(error)
    raise AssertionError(f"no {expected.__name__} was raised")


torch.manual_seed(0)
x = (torch.rand(3, dtype=torch.float64) + 0.5).requires_grad_()


class Cube(Function):
    """A correct cube, and the base of the broken variants below."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * grad_out


def second_derivative(f):
    """d2/dx2 of f at x, by double backward."""
    (grad,) = torch.autograd.grad(f(x).sum(), x, create_graph=True)
    return torch.autograd.grad(grad.sum(), x)[0]


# %%
# The second derivative raises an error
# -------------------------------------
#
# ``trying to differentiate twice a function that was marked with @once_differentiable``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** a second backward pass ran the error node of a ``backward``
# decorated with
# :func:`@once_differentiable <torch.autograd.function.once_differentiable>`.
# **Fix:** write that ``backward`` with PyTorch operations and remove the
# decorator, or wrap its untracked code in a second Function.
# :ref:`lesson-untracked-backward`


class CubeOnce(Cube):
    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        return Cube.backward(ctx, grad_out)


def penalty_backward():
    (grad,) = torch.autograd.grad(torch.tanh(CubeOnce.apply(x)).sum(), x, create_graph=True)
    grad.pow(2).sum().backward()


message = message_of(RuntimeError, penalty_backward)
assert "marked with @once_differentiable" in message

# %%
# ``element 0 of tensors does not require grad and does not have a grad_fn``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** the gradient you differentiate has no graph: its ``backward`` used
# only values autograd cannot follow (tensors kept on ``ctx``, NumPy), and the
# incoming gradient was a constant. **Fix:** save what ``backward`` needs as
# inputs or outputs, or compute it in ``backward`` (:ref:`lesson-ctx-mistake`);
# for code outside PyTorch, a second Function
# (:ref:`lesson-untracked-backward`).


class CubeOnCtx(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.square = x**2  # untracked
        return x**3

    @staticmethod
    def backward(ctx, grad_out):
        return 3 * ctx.square * grad_out


message = message_of(RuntimeError, lambda: second_derivative(CubeOnCtx.apply))
assert "does not require grad and does not have a grad_fn" in message

# %%
# ``The differentiated Tensor at index 0 appears to not have been used in the graph``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** no path leads from what you differentiate to that input. With
# :func:`@once_differentiable <torch.autograd.function.once_differentiable>`,
# :func:`torch.autograd.grad` never reaches the error node, so this generic
# message replaces the clear one. ``allow_unused=True`` turns it into ``None``,
# silently. Older releases of PyTorch say "One of the differentiated Tensors
# appears to not have been used in the graph". **Fix:** as for the first entry
# on this page. :ref:`lesson-untracked-backward`


def penalty_grad():
    (grad,) = torch.autograd.grad(torch.tanh(CubeOnce.apply(x)).sum(), x, create_graph=True)
    torch.autograd.grad(grad.pow(2).sum(), x)


message = message_of(RuntimeError, penalty_grad)
assert "appears to not have been used in the graph" in message

# %%
# ``Trying to backward through ... but no autograd formula was registered``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** the backward of a :func:`torch.library.custom_op` calls another
# custom operator that has no :func:`~torch.library.register_autograd`.
# **Fix:** register a gradient for that operator too. :ref:`lesson-custom-ops`


@torch.library.custom_op("dbw_errors::numpy_square", mutates_args=())
def numpy_square(t: torch.Tensor) -> torch.Tensor:
    return torch.as_tensor(np.square(t.numpy(force=True)))


@numpy_square.register_fake
def _(t):
    return torch.empty_like(t)


@torch.library.custom_op("dbw_errors::cube", mutates_args=())
def cube(t: torch.Tensor) -> torch.Tensor:
    return t**3


@cube.register_fake
def _(t):
    return torch.empty_like(t)


def keep_input(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


cube.register_autograd(
    lambda ctx, g: 3 * numpy_square(ctx.saved_tensors[0]) * g, setup_context=keep_input
)
message = message_of(RuntimeError, lambda: second_derivative(cube))
assert "no autograd formula was registered" in message

# %%
# ``torch.compile with aot_autograd does not currently support double backward``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** the gradient was computed through a compiled function's
# backward, which cannot be differentiated. **Fix:** run the part that is
# differentiated twice in eager mode. :ref:`lesson-torch-compile`

compiled_cube = torch.compile(lambda t: t**3, backend="aot_eager")
message = message_of(RuntimeError, lambda: second_derivative(compiled_cube))
assert message == "torch.compile with aot_autograd does not currently support double backward"

# %%
# ``Can't call numpy() on Tensor that requires grad``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``.numpy()`` on a tensor that requires grad while grad mode is
# on, as it is inside ``backward`` under ``create_graph=True``. **Fix:**
# ``.detach().numpy()``; then the result is untracked, so see pattern 4.
# :ref:`lesson-untracked-backward`


class CubeNumpy(Cube):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return torch.as_tensor(3 * np.square(x.numpy())) * grad_out


assert gradcheck(CubeNumpy.apply, (x,))  # no grad mode in a plain backward
message = message_of(RuntimeError, lambda: second_derivative(CubeNumpy.apply))
assert "Can't call numpy() on Tensor that requires grad" in message

# %%
# gradcheck or gradgradcheck fails
# --------------------------------
#
# ``Jacobian mismatch for output 0 with respect to input 0``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** from :func:`~torch.autograd.gradcheck`, the first derivative is
# wrong: the formula in ``backward``. From
# :func:`~torch.autograd.gradgradcheck` with an all-zero analytical Jacobian,
# ``backward`` used a value cut off from the input (a tensor on ``ctx``, a
# ``.detach()``, part of it under ``torch.no_grad()``,
# :func:`@once_differentiable <torch.autograd.function.once_differentiable>`);
# with a nonzero one, part of ``backward`` is cut off or its formula is wrong.
# **Fix:** save inputs and outputs with
# :meth:`~torch.autograd.function.FunctionCtx.save_for_backward` and compute
# the rest in ``backward`` with PyTorch operations. :ref:`lesson-diagnosing`

message = message_of(GradcheckError, lambda: gradgradcheck(CubeOnCtx.apply, (x,)))
assert message.startswith("Jacobian mismatch for output 0 with respect to input 0")

# %%
# ``Numerical gradient for function expected to be zero``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``backward``'s result has no graph at all: code outside PyTorch,
# a backward run wholly under ``torch.no_grad()``, or one whose result is
# detached.
# **Fix:** for code outside PyTorch, pattern 4, a second Function for the
# backward (:ref:`lesson-untracked-backward`); otherwise remove the
# ``no_grad`` or the ``detach``.


class CubeAllNumpy(Cube):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return torch.as_tensor(3 * np.square(x.detach().numpy()) * grad_out.detach().numpy())


message = message_of(GradcheckError, lambda: gradgradcheck(CubeAllNumpy.apply, (x,)))
assert message == "Numerical gradient for function expected to be zero"

# %%
# ``Backward is not reentrant``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** two runs of ``backward`` on the same input gave different
# results: a nondeterministic backward. **Fix:** make it deterministic, or
# accept the difference with ``nondet_tol``. :ref:`lesson-diagnosing`


class CubeJittery(Cube):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * grad_out * (1 + 1e-12 * torch.randn_like(x))


message = message_of(GradcheckError, lambda: gradcheck(CubeJittery.apply, (x,)))
assert message.startswith("Backward is not reentrant")

# %%
# ``Input #0 requires gradient and is not a double precision floating point``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# A warning, usually followed by a Jacobian mismatch. **Cause:** the checks
# ran in ``float32``, where finite differences are too coarse. **Fix:** check
# in ``float64``. :ref:`lesson-saving-inputs`

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    gradcheck(Cube.apply, (x.float().detach().requires_grad_(),), raise_exception=False)
print("UserWarning:", caught[0].message)
assert caught[0].category is UserWarning
assert "is not a double precision floating point" in str(caught[0].message)

# %%
# ``opcheck(op, ...): test_faketensor failed``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** the fake implementation of a custom operator disagrees with the
# real one about the output's shape, dtype or device. **Fix:** make
# :func:`~torch.library.register_fake` return what the operator returns.
# :ref:`lesson-custom-ops`


@torch.library.custom_op("dbw_errors::bad_fake", mutates_args=())
def bad_fake(t: torch.Tensor) -> torch.Tensor:
    return t**3


@bad_fake.register_fake
def _(t):
    return t.new_empty(())  # wrong: a scalar


try:
    torch.library.opcheck(bad_fake, (x.detach(),))
    error = None
except Exception as raised:  # OpCheckError, which torch.library does not export
    error = raised
    print(f"{type(error).__name__}:", str(error).split(" (scroll up")[0])
assert type(error).__name__ == "OpCheckError" and "test_faketensor failed" in str(error)

# %%
# Writing the Function
# --------------------
#
# ``returned an incorrect number of gradients``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``backward`` must return one value per input of ``forward``.
# **Fix:** return ``None`` for inputs that are not tensors or need no
# gradient. :ref:`lesson-extending-rules`


class Scale(Function):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        return factor * x

    @staticmethod
    def backward(ctx, grad_out):
        return ctx.factor * grad_out  # missing: None for factor


message = message_of(RuntimeError, lambda: Scale.apply(x, 2.0).sum().backward())
assert "incorrect number of gradients (expected 2, got 1)" in message

# %%
# ``one of the variables needed for gradient computation has been modified by an inplace operation``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** a tensor saved with
# :meth:`~torch.autograd.function.FunctionCtx.save_for_backward` was changed in
# place before ``backward`` ran. **Fix:** change a copy, or save after the
# change. :ref:`lesson-extending-rules`


def change_saved_input():
    y = x.clone()
    out = Cube.apply(y)
    y.mul_(2)
    out.sum().backward()


message = message_of(RuntimeError, change_saved_input)
assert "modified by an inplace operation" in message

# %%
# ``a leaf Variable that requires grad has been used in an in-place operation``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** a Function marked a leaf that requires grad with
# :meth:`~torch.autograd.function.FunctionCtx.mark_dirty`. **Fix:** apply it to
# a non-leaf (``x.clone()``). :ref:`lesson-extending-rules`


class CubeInPlace(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.mark_dirty(x)
        return x.pow_(3)

    @staticmethod
    def backward(ctx, grad_out):
        raise NotImplementedError  # never reached


message = message_of(RuntimeError, lambda: CubeInPlace.apply(torch.ones(3, requires_grad=True)))
assert "a leaf Variable that requires grad has been used in an in-place operation" in message

# %%
# ``unsupported operand type(s) for *: 'Tensor' and 'NoneType'``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** after ``ctx.set_materialize_grads(False)``, an incoming gradient
# was ``None`` (any output, in any pass) and ``backward`` did arithmetic with
# it; :func:`~torch.autograd.gradcheck` hits it through
# ``check_undefined_grad``. **Fix:** handle ``None``.
# :ref:`lesson-extending-rules`


class CubeNoMaterialize(Cube):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return Cube.forward(ctx, x)


message = message_of(TypeError, lambda: gradcheck(CubeNoMaterialize.apply, (x,)))
assert "'NoneType'" in message

# %%
# ``not enough values to unpack (expected 1, got 0)``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** inside ``jvp``, ``ctx.saved_tensors`` holds only what ``forward``
# passed to ``ctx.save_for_forward``. **Fix:** call ``save_for_forward`` too.
# :ref:`lesson-forward-mode`

import torch.autograd.forward_ad as fwAD


class CubeForgotSaveForForward(Cube):
    @staticmethod
    def jvp(ctx, x_tangent):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * x_tangent


def dual_cube(function):
    with warnings.catch_warnings(), fwAD.dual_level():
        # PyTorch's own deprecation note when forward mode first loads (lesson 08)
        warnings.filterwarnings("ignore", message="`torch.jit.script` is deprecated")
        function.apply(fwAD.make_dual(x.detach(), torch.ones(3, dtype=torch.float64)))


message = message_of(ValueError, lambda: dual_cube(CubeForgotSaveForForward))
assert message == "not enough values to unpack (expected 1, got 0)"

# %%
# ``You must implement the jvp function for custom autograd.Function to use it with forward mode AD``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** forward mode, :func:`torch.func.jvp`, ``jacfwd`` or ``hessian``
# met a Function without a ``jvp`` staticmethod. **Fix:** add one.
# :ref:`lesson-torch-func`

message = message_of(NotImplementedError, lambda: dual_cube(Cube))
assert "You must implement the jvp function" in message

# %%
# ``it must override the setup_context staticmethod``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** a :mod:`torch.func` transform met a Function whose ``forward``
# takes ``ctx``, or a custom operator. **Fix:** for a Function, split
# ``forward`` and ``setup_context`` (:ref:`lesson-extending-rules`); a custom
# operator cannot take part, so write that part as a Function
# (:ref:`lesson-custom-ops`).

message = message_of(RuntimeError, lambda: torch.func.grad(lambda t: Cube.apply(t).sum())(x))
assert "it must override the setup_context staticmethod" in message

# %%
# ``You tried to vmap over ..., but it does not have vmap support``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``vmap``, ``jacfwd`` or ``hessian`` batched a Function without a
# vmap rule. **Fix:** ``generate_vmap_rule = True``, or a ``vmap``
# staticmethod. :ref:`lesson-torch-func`


class NewCube(Function):
    @staticmethod
    def forward(x):
        return x**3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * grad_out


message = message_of(RuntimeError, lambda: torch.func.vmap(NewCube.apply)(x.detach()))
assert "does not have vmap support" in message

# %%
# Silent symptoms: no message at all
# ----------------------------------
#
# These are worse than any error. Each one is a second derivative that comes
# out wrong while everything runs.
#
# A Hessian, or a second derivative, of zeros
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``backward`` is cut off from the input, and the gradient only
# carries the graph of the incoming gradient. **Fix:** as for the Jacobian
# mismatch above. :ref:`lesson-ctx-mistake`


def hessian_of(function):
    def sum_of_squares(t):
        return (function.apply(t) ** 2).sum() / 2

    return torch.autograd.functional.hessian(sum_of_squares, x.detach())


class CubeDetached(Cube):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 3 * x.detach() ** 2 * grad_out


hessian, true_hessian = hessian_of(CubeDetached), hessian_of(Cube)
print("diagonal of the Hessian, detached:", hessian.diagonal())
print("diagonal of the true Hessian:     ", true_hessian.diagonal())
assert not torch.allclose(hessian, true_hessian)

# %%
# The diagonal is not zero here because the loss squares the cube: the part
# of the Hessian that goes through the cube's second derivative is missing.
# With the cube alone, the Hessian is all zeros:

print(torch.autograd.functional.hessian(lambda t: CubeDetached.apply(t).sum(), x.detach()))
assert (
    torch.count_nonzero(
        torch.autograd.functional.hessian(lambda t: CubeDetached.apply(t).sum(), x.detach())
    )
    == 0
)

# %%
# A gradient of None
# ~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``torch.autograd.grad(..., allow_unused=True)`` found no path to
# that input. **Fix:** for a tensor passed inside a list or dictionary, pass it
# as an argument; for an output marked
# :meth:`~torch.autograd.function.FunctionCtx.mark_non_differentiable`, that is
# the mark working (:ref:`lesson-extending-rules`); behind
# :func:`@once_differentiable <torch.autograd.function.once_differentiable>`,
# see its first entry above.

(grad,) = torch.autograd.grad(torch.tanh(CubeOnce.apply(x)).sum(), x, create_graph=True)
print("second derivative:", torch.autograd.grad(grad.sum(), x, allow_unused=True)[0])
assert torch.autograd.grad(grad.sum(), x, allow_unused=True)[0] is None

# %%
# A second derivative that is wrong but not zero
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** an untracked piece is added to tracked ones, so autograd
# differentiates only the tracked part. **Fix:** pattern 4
# (:ref:`lesson-untracked-backward`). The same symptom comes from a custom
# Function under :func:`torch.compile` with ``backend="eager"``, or under
# :func:`torch.func.grad` inside a compiled function; there the fix is to keep
# that path in eager mode (:ref:`lesson-torch-compile`).


def cube_plus_square(function):
    (grad,) = torch.autograd.grad((function.apply(x) + x**2).sum(), x, create_graph=True)
    return torch.autograd.grad(grad.sum(), x)[0]


print("computed:", cube_plus_square(CubeOnCtx), "true:", cube_plus_square(Cube))
assert torch.equal(cube_plus_square(CubeOnCtx), torch.full_like(x, 2.0))
assert torch.allclose(cube_plus_square(Cube), 6 * x + 2)

# %%
# A tangent of zeros from a custom operator
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** forward mode (:func:`torch.func.jvp`, ``jacfwd``) through a
# :func:`torch.library.custom_op`, which has no forward-mode rule on this
# build's PyTorch: the tangent comes out as zeros instead of an error. **Fix:**
# write that part as a Function with a ``jvp``. :ref:`lesson-custom-ops`

_, tangent = torch.func.jvp(cube, (x.detach(),), (torch.ones(3, dtype=torch.float64),))
print("tangent:", tangent, "expected:", 3 * x.detach() ** 2)
assert torch.equal(tangent, torch.zeros(3, dtype=torch.float64))

# %%
# Back to :doc:`/summary`, or to the lessons: :ref:`lessons`.
