r"""
.. _lesson-error-index-function:

Error index: writing a Function
===============================

The messages a reader meets while writing a Function: what ``backward``
returns and what ``ctx`` saves, changes in place, and forward mode; each with
its cause, its fix, and the lesson that explains it.

The messages met while computing second derivatives and checking them, and
the symptoms of a second derivative that is silently wrong, are in
:ref:`lesson 15 <lesson-error-index>`; those of a custom operator, and of the
rules that :mod:`torch.func` and ``vmap`` need, in :ref:`lesson 17
<lesson-error-index-ops>`; those of PyTorch's own operators that have no
second derivative in :ref:`lesson 18 <lesson-builtin-operators>`. As in
lesson 15, every message that heads an entry was printed when the page was
built: paste one into the search box to land on its entry.

.. contents:: On this page
   :local:
"""

# %%
# Each example runs through the helper of :ref:`lesson 15
# <lesson-error-index>`, defined again here so that this page runs on its own.

import warnings

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


# %%
# What backward returns and what ctx saves
# ----------------------------------------
#
# ``returned an incorrect number of gradients``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``backward`` must return one value per input of ``forward``
# (extra ``None`` values at the end are accepted, an extra tensor is not).
# **Fix:** return ``None`` for inputs that are not tensors or need no
# gradient. :ref:`Lesson 06 <lesson-extending-rules>` (For a custom
# operator's ``backward``, the message counts one more: :ref:`lesson 17
# <lesson-error-index-ops>`.)


class Scale(Function):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        return factor * x

    @staticmethod
    def backward(ctx, grad_out):
        return ctx.factor * grad_out, None  # None for factor


class ScaleMissingNone(Scale):
    @staticmethod
    def backward(ctx, grad_out):
        return ctx.factor * grad_out  # missing: None for factor


message = message_of(RuntimeError, lambda: ScaleMissingNone.apply(x, 2.0).sum().backward())
assert "incorrect number of gradients (expected 2, got 1)" in message
assert torch.equal(torch.autograd.grad(Scale.apply(x, 2.0).sum(), x)[0], torch.full_like(x, 2.0))

# %%
# ``returned a gradient different than None at position 2, but the corresponding forward input was not a Variable``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``backward`` returned a tensor for an input of ``forward`` that
# is not a tensor (a number, a flag): below, a zero for ``factor``. Positions
# count from 1. **Fix:** return ``None`` there, as ``Scale`` does.
# :ref:`Lesson 06 <lesson-extending-rules>`


class ScaleZeroForFactor(Scale):
    @staticmethod
    def backward(ctx, grad_out):
        return ctx.factor * grad_out, torch.zeros(())  # wrong: factor is a number


message = message_of(RuntimeError, lambda: ScaleZeroForFactor.apply(x, 2.0).sum().backward())
assert "returned a gradient different than None at position 2" in message
assert torch.equal(torch.autograd.grad(Scale.apply(x, 2.0).sum(), x)[0], torch.full_like(x, 2.0))

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
# ``not enough values to unpack (expected 1, got 0)``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** a method unpacked ``ctx.saved_tensors`` and found nothing saved
# for it. A common cause: ``forward`` (or ``setup_context``) never called
# :meth:`~torch.autograd.function.FunctionCtx.save_for_backward` (below), or
# called it only on some of its paths. Another, in a Function with forward
# mode: inside ``jvp``, ``ctx.saved_tensors`` holds only what was passed to
# ``ctx.save_for_forward``; inside ``backward``, only what was passed to
# ``ctx.save_for_backward`` (both below). **Fix:** save what ``backward``
# reads on every path through ``forward``, as ``Cube`` does; for a Function
# with both methods, call both, as ``CubeJvp`` does in the entries on forward
# mode. :ref:`Lesson 01 <lesson-saving-inputs>`,
# :ref:`lesson 08 <lesson-forward-mode>`


class CubeSavesNothing(Cube):
    @staticmethod
    def forward(ctx, x):
        return x**3  # wrong: saves nothing, and backward reads ctx.saved_tensors


message = message_of(ValueError, lambda: CubeSavesNothing.apply(x).sum().backward())
assert message == "not enough values to unpack (expected 1, got 0)"
assert torch.allclose(torch.autograd.grad(Cube.apply(x).sum(), x)[0], 3 * x**2)  # Cube saves x

import torch.autograd.forward_ad as fwAD


class CubeForgotSaveForForward(Cube):
    @staticmethod
    def jvp(ctx, x_tangent):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * x_tangent


def tangent_of(function, *extra):
    """The tangent of ``function.apply(x, *extra)`` in forward mode, x's tangent all ones."""
    with warnings.catch_warnings(), fwAD.dual_level():
        # PyTorch's own deprecation note when forward mode first loads (lesson 8)
        warnings.filterwarnings(
            "ignore", message="`torch.jit.script` is (deprecated|not supported)"
        )
        dual = fwAD.make_dual(x.detach(), torch.ones(3, dtype=torch.float64))
        return fwAD.unpack_dual(function.apply(dual, *extra)).tangent


message = message_of(ValueError, lambda: tangent_of(CubeForgotSaveForForward))
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
# ``Legacy autograd function with non-static forward method is deprecated``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** the Function was instantiated and called, ``Cube()(x)``, as
# code written for old releases of PyTorch does (PyTorch also warns that a
# Function should not be instantiated). **Fix:** call ``Cube.apply(x)``, with
# ``forward`` and ``backward`` as staticmethods.
# :ref:`Lesson 01 <lesson-saving-inputs>`

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # "should not be instantiated"
    message = message_of(RuntimeError, lambda: Cube()(x))
assert message.startswith("Legacy autograd function with non-static forward method is deprecated")
assert torch.allclose(Cube.apply(x), x**3)

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
# ``backward not multiplied by grad_output``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``backward`` returned the derivative itself, not multiplied by
# the incoming gradient. :func:`~torch.autograd.gradcheck` says so when the
# output has one element, as a sum or a loss has; with more elements, the
# same mistake gives a Jacobian mismatch. **Fix:** multiply by ``grad_out``.
# :ref:`Lesson 01 <lesson-saving-inputs>`


class CubeSum(Cube):
    @staticmethod
    def forward(ctx, x):
        return Cube.forward(ctx, x).sum()  # one number


class CubeSumForgetsGradOut(CubeSum):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 3 * x**2  # the bug: not multiplied by grad_out


message = message_of(GradcheckError, lambda: gradcheck(CubeSumForgetsGradOut.apply, (x,)))
assert message == "backward not multiplied by grad_output"
assert gradcheck(CubeSum.apply, (x,))  # Cube's backward: 3 * x**2 * grad_out

# %%
# ``An input that has been returned as-is as output is being saved for backward``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** a Function written with ``setup_context`` returned one of its
# inputs itself (an identity, or a shortcut such as :math:`x^1` below) and
# saved it, or the output, for ``backward``. **Fix:** return a view of it,
# ``x.view_as(x)``, as the message says (or write ``forward`` with ``ctx``,
# which accepts it). :ref:`Lesson 06 <lesson-extending-rules>`


class Power(Function):
    """x**n, with a shortcut for n == 1."""

    @staticmethod
    def forward(x, n):
        return x if n == 1 else x**n  # wrong: x itself when n == 1

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, ctx.n = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return ctx.n * x ** (ctx.n - 1) * grad_out, None


class PowerFixed(Power):
    @staticmethod
    def forward(x, n):
        return x.view_as(x) if n == 1 else x**n  # a view of x


message = message_of(RuntimeError, lambda: Power.apply(x, 1))
assert message.startswith("An input that has been returned as-is as output is being saved")
assert torch.equal(torch.autograd.grad(PowerFixed.apply(x, 1).sum(), x)[0], torch.ones_like(x))

# %%
# ``unsupported operand type(s) for *: 'NoneType' and 'Tensor'``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# The message names the operator, and the types of its two operands in their
# order: ``'NoneType'`` is the gradient's, first in ``grad_out * ...`` and
# last in ``... * grad_out`` (both below). **Cause:** after
# ``ctx.set_materialize_grads(False)``, an incoming gradient was ``None`` (any
# output, in any pass) and ``backward`` did arithmetic with it;
# :func:`~torch.autograd.gradcheck` hits it through ``check_undefined_grad``.
# **Fix:** handle ``None``: return ``None`` for the inputs whose gradient
# would come only from it. :ref:`Lesson 06 <lesson-extending-rules>`


class CubeNoMaterialize(Cube):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return Cube.forward(ctx, x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * (3 * x**2)  # wrong when grad_out is None


class CubeNoMaterializeLast(CubeNoMaterialize):
    @staticmethod
    def backward(ctx, grad_out):
        return Cube.backward(ctx, grad_out)  # 3 * x**2 * grad_out: None last


class CubeNoMaterializeFixed(CubeNoMaterialize):
    @staticmethod
    def backward(ctx, grad_out):
        if grad_out is None:  # no gradient flows in: none flows out
            return None
        return Cube.backward(ctx, grad_out)


message = message_of(TypeError, lambda: gradcheck(CubeNoMaterialize.apply, (x,)))
assert message == "unsupported operand type(s) for *: 'NoneType' and 'Tensor'"
message = message_of(TypeError, lambda: gradcheck(CubeNoMaterializeLast.apply, (x,)))
assert message == "unsupported operand type(s) for *: 'Tensor' and 'NoneType'"
assert gradcheck(CubeNoMaterializeFixed.apply, (x,))

# %%
# Changes in place
# ----------------
#
# ``one of the variables needed for gradient computation has been modified by an inplace operation``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** a tensor that an operation saved for its backward was changed in
# place before that backward ran: a tensor a built-in operation saved (an
# in-place activation, ``+=``, an optimizer step between the forward and the
# backward), or one that a Function saved with
# :meth:`~torch.autograd.function.FunctionCtx.save_for_backward`, as below.
# The message gives the tensor's type and shape, the operation whose output
# it now is (``Mul`` below: the in-place ``mul_`` that changed it, not the
# Function that saved it), and its version. **Fix:** change a copy, or make
# the change after the backward pass (or before the operation that saves
# it). :ref:`Lesson 06 <lesson-extending-rules>`


def change_saved_input():
    y = x.clone()
    out = Cube.apply(y)
    y.mul_(2)
    out.sum().backward()


message = message_of(RuntimeError, change_saved_input)
assert "[torch.DoubleTensor [3]], which is output 0 of Mul, is at version 1;" in message

# %%
# ``a leaf Variable that requires grad is being used in an in-place operation``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** an in-place operation on a leaf that requires grad, while
# autograd records: most often a parameter update written without
# ``torch.no_grad()``. On part of such a leaf (``w[0] = 0``), the message
# begins "a view of a leaf Variable" (both below). A ``backward`` that changes
# its incoming gradient in place meets it when that gradient is such a leaf,
# as the ``grad_outputs`` of :func:`~torch.autograd.gradgradcheck` are
# (:ref:`lesson 15 <lesson-error-index>`, "Backward is not reentrant").
# **Fix:** make the update under ``torch.no_grad()``; in ``backward``,
# compute a new tensor (:ref:`rule 3 of lesson 06 <lesson-extending-rules>`).

weight = torch.ones(3, dtype=torch.float64, requires_grad=True)
(weight * x.detach()).sum().backward()  # weight.grad is x


def step():
    weight.sub_(0.1 * weight.grad)  # wrong: autograd records it (so would -=)


def zero_first():
    weight[0] = 0  # wrong: changes a view of weight


message = message_of(RuntimeError, step)
assert message == "a leaf Variable that requires grad is being used in an in-place operation."
message = message_of(RuntimeError, zero_first)
assert message.startswith("a view of a leaf Variable that requires grad is being used")
with torch.no_grad():
    step()
    zero_first()
assert torch.allclose(weight[1:], 1 - 0.1 * x[1:]) and weight[0] == 0

# %%
# ``unsupported operation: more than one element of the written-to tensor refers to a single memory location``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** an in-place operation wrote to a tensor whose elements share
# memory, such as an expanded one. In a Function, a common cause: ``backward``
# changed its incoming gradient in place, and that gradient came from
# ``.sum()``, whose gradient is one number expanded to the output's shape.
# After ``.mean()``, whose gradient is a tensor of its own, the same
# ``backward`` raises nothing (both below), so the mistake can go unseen;
# under :func:`~torch.autograd.gradgradcheck` it meets the message of the
# entry above. **Fix:** compute a new tensor, ``3 * x**2 * grad_out``, as
# ``Cube`` does (:ref:`rule 3 of lesson 06 <lesson-extending-rules>`).


class CubeGradInPlace(Cube):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out.mul_(3 * x**2)  # wrong: changes the incoming gradient


message = message_of(RuntimeError, lambda: CubeGradInPlace.apply(x).sum().backward())
assert "more than one element of the written-to tensor refers to a single memory" in message
(after_mean,) = torch.autograd.grad(CubeGradInPlace.apply(x).mean(), x)  # no error
assert torch.allclose(after_mean, x**2)  # 3 x**2 / 3
assert torch.allclose(torch.autograd.grad(Cube.apply(x).sum(), x)[0], 3 * x**2)  # the fix

# %%
# ``a leaf Variable that requires grad has been used in an in-place operation``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** a Function marked a leaf that requires grad with
# :meth:`~torch.autograd.function.FunctionCtx.mark_dirty`: below,
# ``ExpInPlace`` of lesson 06. **Fix:** apply it to a non-leaf
# (``x.clone()``). An ordinary in-place operation on such a leaf says "is
# being used" instead (two entries above).
# :ref:`Lesson 06 <lesson-extending-rules>`


class ExpInPlace(Function):
    @staticmethod
    def forward(ctx, x):
        x.exp_()
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)  # x now holds the output
        return x

    @staticmethod
    def backward(ctx, grad_out):
        (result,) = ctx.saved_tensors
        return grad_out * result


message = message_of(RuntimeError, lambda: ExpInPlace.apply(torch.ones(3, requires_grad=True)))
assert "a leaf Variable that requires grad has been used in an in-place operation" in message
leaf = torch.full((3,), 2.0, dtype=torch.float64, requires_grad=True)
(grad,) = torch.autograd.grad(ExpInPlace.apply(leaf.clone()).sum(), leaf)  # the fix
assert torch.allclose(grad, leaf.exp())

# %%
# ``Some elements marked as dirty during the forward method were not returned as output``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``forward`` marked an input with ``mark_dirty`` but returned
# another tensor. **Fix:** return the input changed in place itself.
# :ref:`Lesson 06 <lesson-extending-rules>`


class ExpInPlaceCopy(ExpInPlace):
    @staticmethod
    def forward(ctx, x):
        x.exp_()
        ctx.mark_dirty(x)
        return x.clone()  # wrong: not the tensor marked


message = message_of(RuntimeError, lambda: ExpInPlaceCopy.apply(x.clone()))
assert "marked as dirty during the forward method were not returned as output" in message
assert torch.allclose(ExpInPlace.apply(x.clone()), x.exp())  # returns x itself

# %%
# Forward mode
# ------------
#
# ``You must implement the jvp function for custom autograd.Function to use it with forward mode AD``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** forward mode, :func:`torch.func.jvp`, ``jacfwd`` or ``hessian``
# met a Function without a ``jvp`` staticmethod. **Fix:** add one, as
# ``CubeJvp`` does below (it saves ``x`` for both passes).
# :ref:`Lesson 08 <lesson-forward-mode>`, :ref:`lesson 09 <lesson-torch-func>`

message = message_of(NotImplementedError, lambda: tangent_of(Cube))
assert "You must implement the jvp function" in message


class CubeJvp(Cube):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        return x**3

    @staticmethod
    def jvp(ctx, x_tangent):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * x_tangent


assert torch.allclose(tangent_of(CubeJvp), 3 * x.detach() ** 2)

# %%
# ``Function's jvp returned an invalid number of forward gradients``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``jvp`` returned one tangent per input of ``forward``, as
# ``backward`` returns one gradient per input (below, a ``None`` for
# ``factor``); ``jvp`` returns one tangent per output. **Fix:** return one
# tangent for each output of ``forward``.
# :ref:`Lesson 08 <lesson-forward-mode>`


class ScaleJvpPerInput(Scale):
    @staticmethod
    def jvp(ctx, x_tangent, factor_tangent):
        return ctx.factor * x_tangent, None  # wrong: one output, so one tangent


class ScaleJvp(Scale):
    @staticmethod
    def jvp(ctx, x_tangent, factor_tangent):
        return ctx.factor * x_tangent


message = message_of(RuntimeError, lambda: tangent_of(ScaleJvpPerInput, 2.0))
assert "jvp returned an invalid number of forward gradients (expected 1 but got 2)" in message
assert torch.equal(tangent_of(ScaleJvp, 2.0), torch.full((3,), 2.0, dtype=torch.float64))

# %%
# ``Trying to set a forward gradient that has a different size than that of the original Tensor``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``jvp`` returned a tangent whose shape is not its output's, as
# when a reduction's ``jvp`` forgets to reduce (below: the tangent has the
# input's shape, ``[3]``, and the mean is a scalar). The message gives both
# sizes. **Fix:** return a tangent of the output's shape.
# :ref:`Lesson 08 <lesson-forward-mode>`


class MeanJvp(MeanFixed):
    @staticmethod
    def jvp(ctx, x_tangent):
        return x_tangent / ctx.shape.numel()  # wrong: the input's shape


class MeanJvpFixed(MeanFixed):
    @staticmethod
    def jvp(ctx, x_tangent):
        return x_tangent.sum() / ctx.shape.numel()  # the output's shape, ()


message = message_of(RuntimeError, lambda: tangent_of(MeanJvp))
assert "Tensor is of size [] while the given forward gradient is of size [3]" in message
assert torch.equal(tangent_of(MeanJvpFixed), torch.tensor(1.0, dtype=torch.float64))

# %%
# ``Jacobian computed with forward mode mismatch for output 0 with respect to input 0``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** :func:`~torch.autograd.gradcheck` with ``check_forward_ad=True``
# found a wrong ``jvp``: the tangent it returns is not the derivative applied
# to the input's tangent. **Fix:** correct the ``jvp``.
# :ref:`Lesson 08 <lesson-forward-mode>`


class CubeWrongJvp(CubeJvp):
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
assert check_forward_ad(CubeJvp)

# %%
# Next, :ref:`lesson 17 <lesson-error-index-ops>`: the messages of a custom
# operator, and of the rules that :mod:`torch.func` and ``vmap`` need.
