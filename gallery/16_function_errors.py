r"""
.. _lesson-error-index-function:

Error index: writing a Function
===============================

The messages a reader meets while writing a Function or a custom operator:
what ``backward`` returns and what ``ctx`` saves, changes in place, forward
mode, and the rules that :mod:`torch.func` and ``vmap`` need; each with its
cause, its fix, and the lesson that explains it.

The messages met while computing second derivatives and checking them, and
the symptoms of a second derivative that is silently wrong, are in
:ref:`lesson 15 <lesson-error-index>`.

Every message on this page is printed by a minimal example that ran when the
page was built, so it is the exact text of the PyTorch that built it. Paste a
message into the search box to land on its entry.

.. contents:: On this page
   :local:
"""

# %%
# Each example runs through the helper of :ref:`lesson 15
# <lesson-error-index>`, defined again here: it expects one exception type,
# prints the message, and fails the build if the example raised nothing. Two
# entries also use lesson 15's custom operator ``numpy_square``.

import warnings

import numpy as np
import torch

# sphinx_gallery_thumbnail_path = "_static/thumbs/16_function_errors.svg"
from torch.autograd import Function, gradcheck, gradgradcheck
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


@torch.library.custom_op("dbw_errors::numpy_square", mutates_args=())
def numpy_square(t: torch.Tensor) -> torch.Tensor:
    return torch.as_tensor(np.square(t.numpy(force=True)), device=t.device)


@numpy_square.register_fake
def _(t):
    return torch.empty_like(t)


def keep_input(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


# %%
# Writing the Function
# --------------------
#
# ``returned an incorrect number of gradients``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``backward`` must return one value per input of ``forward``.
# **Fix:** return ``None`` for inputs that are not tensors or need no
# gradient. :ref:`Lesson 06 <lesson-extending-rules>`


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
# ``save_for_backward can only save variables, but argument 1 is of type int``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``save_for_backward`` was given something that is not a tensor
# (or ``None``). **Fix:** keep numbers and other non-tensors as attributes of
# ``ctx``, as ``Scale`` above keeps ``factor``.
# :ref:`Lesson 06 <lesson-extending-rules>`


class ScaleSavesNumber(Scale):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.save_for_backward(x, factor)  # wrong: factor is a number
        return factor * x


message = message_of(TypeError, lambda: ScaleSavesNumber.apply(x, 2))
assert message == "save_for_backward can only save variables, but argument 1 is of type int"

# %%
# ``You must implement either the backward or vjp method``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** a backward pass reached a Function that defines no ``backward``
# (often a misspelled name, such as ``backwards`` below, or a ``backward``
# defined outside the class or indented into ``forward``). **Fix:** define
# ``backward`` in the class, as ``Cube`` does.
# :ref:`Lesson 06 <lesson-extending-rules>`


class CubeWithoutBackward(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backwards(ctx, grad_out):  # misspelled: autograd looks for backward
        return Cube.backward(ctx, grad_out)


message = message_of(NotImplementedError, lambda: CubeWithoutBackward.apply(x).sum().backward())
assert "You must implement either the backward or vjp method" in message
assert torch.allclose(torch.autograd.grad(Cube.apply(x).sum(), x)[0], 3 * x**2)

# %%
# ``returned an invalid gradient at index 0 - got ... but expected shape compatible with ...``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``backward`` returned, for that input, a gradient of a shape
# that autograd cannot sum to the input's shape: most often the output's
# shape, for an input of another shape, as when a reduction forgets to expand
# its gradient. A gradient of a shape that the input broadcasts to is summed
# to the input's shape instead, with no message. **Fix:** return a gradient
# of the input's shape. :ref:`Lesson 06 <lesson-extending-rules>`


class Mean(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.shape = x.shape
        return x.mean()

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out / ctx.shape.numel()  # wrong: the output's shape, ()


message = message_of(RuntimeError, lambda: Mean.apply(x).backward())
assert "returned an invalid gradient at index 0" in message
assert "expected shape compatible with [3]" in message


class MeanFixed(Mean):
    @staticmethod
    def backward(ctx, grad_out):
        return (grad_out / ctx.shape.numel()).expand(ctx.shape)  # the input's shape


assert gradcheck(MeanFixed.apply, (x,)) and gradgradcheck(MeanFixed.apply, (x,))

# %%
# ``setup_context() got an unexpected keyword argument 'inputs'`` (or ``'output'``)
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# The message names your function, and the first parameter it lacks:
# ``'output'`` if only the last one was renamed. **Cause:** the ``setup_context`` given to
# :func:`~torch.library.register_autograd` renames its parameters;
# PyTorch passes them by keyword, as ``ctx``, ``inputs`` and ``output``. It
# fails at the first call whose input requires grad, not at registration.
# **Fix:** name them ``ctx, inputs, output``. :ref:`Lesson 12 <lesson-custom-ops>`


@torch.library.custom_op("dbw_errors::square", mutates_args=())
def square(t: torch.Tensor) -> torch.Tensor:
    return t**2


def setup_context(ctx, inp, out):  # wrong: renamed
    ctx.save_for_backward(*inp)


square.register_autograd(lambda ctx, g: 2 * ctx.saved_tensors[0] * g, setup_context=setup_context)
message = message_of(TypeError, lambda: square(x))
assert message == "setup_context() got an unexpected keyword argument 'inputs'"
square.register_autograd(lambda ctx, g: 2 * ctx.saved_tensors[0] * g, setup_context=keep_input)
assert torch.allclose(torch.autograd.grad(square(x).sum(), x)[0], 2 * x)

# %%
# ``one of the variables needed for gradient computation has been modified by an inplace operation``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** a tensor that an operation saved for its backward was changed in
# place before that backward ran: a tensor a built-in operation saved (an
# in-place activation, ``+=``, an optimizer step between the forward and the
# backward), or one that a Function saved with
# :meth:`~torch.autograd.function.FunctionCtx.save_for_backward`, as below.
# The message names the tensor and its version. **Fix:** change a copy, or
# make the change after the backward pass (or before the operation that
# saves it). :ref:`Lesson 06 <lesson-extending-rules>`


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
# a non-leaf (``x.clone()``). An ordinary in-place operation on such a leaf
# says "is being used" instead, and has the same fix, or
# ``torch.no_grad()`` around an update that autograd must not record.
# :ref:`Lesson 06 <lesson-extending-rules>`


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
# ``Some elements marked as dirty during the forward method were not returned as output``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``forward`` marked an input with ``mark_dirty`` but returned
# another tensor. **Fix:** return the input changed in place itself.
# :ref:`Lesson 06 <lesson-extending-rules>`


class CubeInPlaceCopy(CubeInPlace):
    @staticmethod
    def forward(ctx, x):
        ctx.mark_dirty(x)
        return x.pow_(3).clone()  # wrong: not the tensor marked


message = message_of(RuntimeError, lambda: CubeInPlaceCopy.apply(x.clone()))
assert "marked as dirty during the forward method were not returned as output" in message

# %%
# ``unsupported operand type(s) for *: 'Tensor' and 'NoneType'``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# Or ``'int' and 'NoneType'``, when the product starts with a number, or
# another operator. **Cause:** after ``ctx.set_materialize_grads(False)``, an
# incoming gradient was ``None`` (any output, in any pass) and ``backward``
# did arithmetic with it; :func:`~torch.autograd.gradcheck` hits it through
# ``check_undefined_grad``. **Fix:** handle ``None``.
# :ref:`Lesson 06 <lesson-extending-rules>`


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
# **Cause:** inside ``jvp``, ``ctx.saved_tensors`` holds only what was passed
# to ``ctx.save_for_forward``; inside ``backward``, only what was passed to
# ``ctx.save_for_backward``. **Fix:** call the one the failing method needs;
# for a Function with both methods, call both.
# :ref:`Lesson 08 <lesson-forward-mode>`

import torch.autograd.forward_ad as fwAD


class CubeForgotSaveForForward(Cube):
    @staticmethod
    def jvp(ctx, x_tangent):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * x_tangent


def dual_cube(function):
    with warnings.catch_warnings(), fwAD.dual_level():
        # PyTorch's own deprecation note when forward mode first loads (lesson 8)
        warnings.filterwarnings(
            "ignore", message="`torch.jit.script` is (deprecated|not supported)"
        )
        function.apply(fwAD.make_dual(x.detach(), torch.ones(3, dtype=torch.float64)))


message = message_of(ValueError, lambda: dual_cube(CubeForgotSaveForForward))
assert message == "not enough values to unpack (expected 1, got 0)"


class CubeForgotSaveForBackward(Function):
    @staticmethod
    def forward(x):
        return x**3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_forward(*inputs)  # wrong: backward reads save_for_backward's

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * grad_out


message = message_of(ValueError, lambda: CubeForgotSaveForBackward.apply(x).sum().backward())
assert message == "not enough values to unpack (expected 1, got 0)"

# %%
# ``You must implement the jvp function for custom autograd.Function to use it with forward mode AD``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** forward mode, :func:`torch.func.jvp`, ``jacfwd`` or ``hessian``
# met a Function without a ``jvp`` staticmethod. **Fix:** add one.
# :ref:`Lesson 09 <lesson-torch-func>`

message = message_of(NotImplementedError, lambda: dual_cube(Cube))
assert "You must implement the jvp function" in message

# %%
# ``Jacobian computed with forward mode mismatch for output 0 with respect to input 0``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** :func:`~torch.autograd.gradcheck` with ``check_forward_ad=True``
# found a wrong ``jvp``: the tangent it returns is not the derivative applied
# to the input's tangent. **Fix:** correct the ``jvp``.
# :ref:`Lesson 08 <lesson-forward-mode>`


class CubeWrongJvp(CubeForgotSaveForForward):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_forward(x)
        return Cube.forward(ctx, x)

    @staticmethod
    def jvp(ctx, x_tangent):
        (x,) = ctx.saved_tensors
        return 2 * x**2 * x_tangent  # wrong: 3 * x**2


def check_forward_ad(function):
    with warnings.catch_warnings():
        # PyTorch's own deprecation note when forward mode first loads (lesson 8)
        warnings.filterwarnings(
            "ignore", message="`torch.jit.script` is (deprecated|not supported)"
        )
        return gradcheck(function.apply, (x,), check_forward_ad=True)


message = message_of(GradcheckError, lambda: check_forward_ad(CubeWrongJvp))
assert message.startswith("Jacobian computed with forward mode mismatch for output 0")

# %%
# ``it must override the setup_context staticmethod``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** a :mod:`torch.func` transform met a Function whose ``forward``
# takes ``ctx``, or ``grad``, ``vjp``, ``jacrev`` or ``hessian`` met a
# :func:`torch.library.custom_op`. **Fix:** for a Function, split ``forward``
# and ``setup_context`` (:ref:`lesson 06 <lesson-extending-rules>`). A custom
# operator cannot pass these transforms: write that part as a Function
# (:ref:`lesson 12 <lesson-custom-ops>` says what of :mod:`torch.func` it
# works with).

message = message_of(RuntimeError, lambda: torch.func.grad(lambda t: Cube.apply(t).sum())(x))
assert "it must override the setup_context staticmethod" in message

# %%
# ``torch.func.{grad, vjp, jacrev, hessian} don't yet support saved tensor hooks``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** one of these four transforms ran under
# ``torch.autograd.graph.saved_tensors_hooks`` (or a context manager built on
# it, such as ``torch.autograd.graph.save_on_cpu``). **Fix:** leave the hooks
# out of the transformed code, or compute the derivative with
# :func:`torch.autograd.grad`. :ref:`Lesson 14 <lesson-cost>`

with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
    message = message_of(RuntimeError, lambda: torch.func.grad(lambda t: t.pow(3).sum())(x))
    assert "don't yet support saved tensor hooks" in message
    assert torch.allclose(torch.autograd.grad(x.pow(3).sum(), x)[0], 3 * x**2)

# %%
# ``During a grad (vjp, jvp, grad, etc) transform, the function provided attempted to call in-place operation``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** the function given to a :mod:`torch.func` transform changed in
# place a tensor it did not create (a buffer, a running total captured from
# outside). **Fix:** make the function pure: return the new value instead of
# writing it in place. :ref:`Lesson 09 <lesson-torch-func>`

total = torch.zeros(3, dtype=torch.float64)


def cube_sum_counted(t):
    total.add_(t)  # wrong: changes a captured tensor in place
    return t.pow(3).sum()


message = message_of(RuntimeError, lambda: torch.func.grad(cube_sum_counted)(x.detach()))
assert "attempted to call in-place operation (aten::add_.Tensor)" in message

# %%
# ``You tried to vmap over ..., but it does not have vmap support``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``vmap``, ``jacfwd`` or ``hessian`` batched a Function without a
# vmap rule. **Fix:** ``generate_vmap_rule = True``, or a ``vmap``
# staticmethod. :ref:`Lesson 09 <lesson-torch-func>`


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
# ``Cannot access data pointer of Tensor that doesn't have storage``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** code that reads a tensor's memory (NumPy, ``.numpy()``, a
# kernel of your own) ran on a batched tensor of ``vmap`` (or of ``jacfwd``
# or ``hessian``, which run the function under it), which has no storage:
# most often the ``forward`` of a Function with ``generate_vmap_rule = True``.
# **Fix:** a ``vmap`` staticmethod that calls the Function on the whole
# batch.
# :ref:`Lesson 09 <lesson-torch-func>`
#
# **Another cause,** with no ``vmap`` at all: :func:`torch.func.grad`,
# ``vjp`` or ``jacrev`` ran a Function whose ``backward`` uses NumPy; under
# these transforms, the tensors ``backward`` receives have no storage either.
# A ``vmap`` rule does not help there. **Fix:** pattern 4 (:ref:`lesson 05
# <lesson-untracked-backward>`) written with ``setup_context``: the NumPy
# code in the ``forward`` of a second Function, which the transforms call
# with ordinary tensors. Both are shown after the first case.


class NumpyCube(NewCube):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.as_tensor(x.numpy(force=True) ** 3, device=x.device)


class NumpyCubeVmap(NumpyCube):
    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, x):
        return NumpyCubeVmap.apply(x), in_dims[0]  # elementwise: the batch stays put


batch = torch.rand(4, 3, dtype=torch.float64)
message = message_of(RuntimeError, lambda: torch.func.vmap(NumpyCube.apply)(batch))
assert message == "Cannot access data pointer of Tensor that doesn't have storage"
assert torch.allclose(torch.func.vmap(NumpyCubeVmap.apply, in_dims=1)(batch), batch.T**3)


class CubeNumpyBackward(NewCube):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return torch.as_tensor(3 * x.numpy(force=True) ** 2 * grad_out.numpy(force=True))


class CubeBackwardInNumpy(Function):
    """The fix, pattern 4: b(g, x) = 3 x**2 g, computed by NumPy in a forward."""

    @staticmethod
    def forward(x, grad_out):
        return torch.as_tensor(3 * x.numpy(force=True) ** 2 * grad_out.numpy(force=True))

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, grad_grad):
        x, grad_out = ctx.saved_tensors
        return 6 * x * grad_out * grad_grad, 3 * x**2 * grad_grad


class CubeNumpyBackwardFixed(NewCube):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return CubeBackwardInNumpy.apply(x, grad_out)


def func_grad(function):
    return torch.func.grad(lambda t: function.apply(t).sum())


point = x.detach()
message = message_of(RuntimeError, lambda: func_grad(CubeNumpyBackward)(point))
assert message == "Cannot access data pointer of Tensor that doesn't have storage"
assert torch.allclose(func_grad(CubeNumpyBackwardFixed)(point), 3 * point**2)
second = torch.func.grad(lambda t: func_grad(CubeNumpyBackwardFixed)(t).sum())(point)
assert torch.allclose(second, 6 * point)

# %%
# ``There is a performance drop because we have not yet implemented the batching rule for ...``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# A warning, written from C++ to the standard error at each call. **Cause:**
# ``vmap`` ran a :func:`torch.library.custom_op` that has no vmap rule, so it
# called the operator once for each element of the batch. **Fix:**
# :func:`~torch.library.register_vmap`. :ref:`Lesson 12 <lesson-custom-ops>`,
# which also shows how to read that stream.

import os
import tempfile


def stderr_of(action):
    """What C++ writes to the standard error while ``action`` runs."""
    with tempfile.TemporaryFile(mode="w+") as captured:
        saved_fd = os.dup(2)
        os.dup2(captured.fileno(), 2)
        try:
            action()
        finally:
            os.dup2(saved_fd, 2)
            os.close(saved_fd)
        captured.seek(0)
        return captured.read()


said = stderr_of(lambda: torch.func.vmap(numpy_square)(batch))
print("Warning:", said[said.index("There is") :].split(". ")[0])
assert "not yet implemented the batching rule for dbw_errors::numpy_square" in said
numpy_square.register_vmap(lambda info, in_dims, t: (numpy_square(t), in_dims[0]))
assert not stderr_of(lambda: torch.func.vmap(numpy_square)(batch))

# %%
# ``has both generate_vmap_rule=True and an overridden vmap staticmethod``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** a Function (often a subclass, which inherits the attribute) has
# both kinds of vmap rule. **Fix:** keep one: set
# ``generate_vmap_rule = False``, or delete the ``vmap`` staticmethod.
# :ref:`Lesson 09 <lesson-torch-func>`


class NumpyCubeBothRules(NumpyCubeVmap):
    generate_vmap_rule = True


message = message_of(RuntimeError, lambda: torch.func.vmap(NumpyCubeBothRules.apply)(batch))
assert "has both generate_vmap_rule=True and an overridden vmap" in message

# %%
# Next, :ref:`lesson 17 <lesson-builtin-operators>`: the built-in operators whose
# own backward has no derivative, so that double backward stops inside PyTorch.
