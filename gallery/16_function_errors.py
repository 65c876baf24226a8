r"""
.. _lesson-error-index-function:

Error index: writing a Function
===============================

The messages a reader meets while writing a Function: what ``backward``
returns and what ``ctx`` saves, changes in place, and forward mode; each with
its cause, its fix, and the lesson that explains it.

The messages met while computing second derivatives and checking them are
in :ref:`lesson 15 <lesson-error-index>`, and the symptoms of a second
derivative that is silently wrong in :ref:`lesson 19
<lesson-error-index-silent>`; those of a custom operator, and of the
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
# What ``backward`` returns and what ``ctx`` saves
# ------------------------------------------------
#
# ``returned an incorrect number of gradients``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``backward`` must return one value per input of ``forward``
# (extra ``None`` values at the end are accepted, an extra tensor is not). A
# list counts as one value: below, a list of two gives "expected 2, got 1",
# as one tensor does. **Fix:** return a tuple, with ``None`` for inputs that
# are not tensors or need no gradient. :ref:`Lesson 06
# <lesson-extending-rules>` (For a custom operator's ``backward``, the
# message counts one more: :ref:`lesson 17 <lesson-error-index-ops>`.)


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


class ScaleReturnsList(Scale):
    @staticmethod
    def backward(ctx, grad_out):
        return [ctx.factor * grad_out, None]  # wrong: a list is one value


message = message_of(RuntimeError, lambda: ScaleMissingNone.apply(x, 2.0).sum().backward())
assert "incorrect number of gradients (expected 2, got 1)" in message
message = message_of(RuntimeError, lambda: ScaleReturnsList.apply(x, 2.0).sum().backward())
assert "incorrect number of gradients (expected 2, got 1)" in message
assert torch.equal(torch.autograd.grad(Scale.apply(x, 2.0).sum(), x)[0], torch.full_like(x, 2.0))

# %%
# ``returned a gradient different than None at position 2, but the corresponding forward input was not a Variable``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``backward`` returned something other than ``None`` (a tensor,
# or a number such as ``0``) for an input of ``forward`` that is not a tensor
# (a number, a flag): below, a zero tensor for ``factor``. Positions count
# from 1 here (the ``argument`` of ``save_for_backward``'s message and the
# ``index`` of the shape message count from 0). **Fix:** return ``None``
# there, as ``Scale`` does. :ref:`Lesson 06 <lesson-extending-rules>`


class ScaleZeroForFactor(Scale):
    @staticmethod
    def backward(ctx, grad_out):
        return ctx.factor * grad_out, torch.zeros(())  # wrong: factor is a number


message = message_of(RuntimeError, lambda: ScaleZeroForFactor.apply(x, 2.0).sum().backward())
assert "returned a gradient different than None at position 2" in message
assert torch.equal(torch.autograd.grad(Scale.apply(x, 2.0).sum(), x)[0], torch.full_like(x, 2.0))

# %%
# ``expected Variable or None (got numpy.ndarray)``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# The message names the type that ``backward`` returned for a tensor input.
# **Cause:** ``backward`` returned, for a tensor input, something that is
# neither a tensor nor ``None``: a NumPy array, from a ``backward`` that
# computes with NumPy and returns its result as it is (below); a Python
# number, ``got float`` or ``got int`` (from ``.item()``, or a constant
# derivative written as a number); for a Function of one input, a list,
# ``got list`` (below). **Fix:** return a tensor:
# ``torch.as_tensor(..., device=x.device)`` for a NumPy result, as
# :ref:`lesson 05 <lesson-untracked-backward>` does, which also says why such
# a ``backward`` has no second derivative; for a number, the tensor it came
# from, or the number multiplied by ``grad_out`` (a constant derivative
# :math:`c` gives ``c * grad_out``); a tuple for a list. The ``backward`` of
# a custom operator of one input meets it too when it returns a list
# (:ref:`lesson 17 <lesson-error-index-ops>`).


class CubeNumpyBackward(Cube):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 3 * x.numpy(force=True) ** 2 * grad_out.numpy(force=True)  # wrong: NumPy's


class CubeNumpyBackwardFixed(Cube):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        grad_x = 3 * x.numpy(force=True) ** 2 * grad_out.numpy(force=True)
        return torch.as_tensor(grad_x, device=x.device)  # a tensor


class CubeReturnsList(Cube):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return [3 * x**2 * grad_out]  # wrong: a list


message = message_of(RuntimeError, lambda: CubeNumpyBackward.apply(x).sum().backward())
assert message == "expected Variable or None (got numpy.ndarray)"
message = message_of(RuntimeError, lambda: CubeReturnsList.apply(x).sum().backward())
assert message == "expected Variable or None (got list)"
assert torch.allclose(torch.autograd.grad(CubeNumpyBackwardFixed.apply(x).sum(), x)[0], 3 * x**2)

# %%
# ``save_for_backward can only save variables, but argument 1 is of type int``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``save_for_backward`` was given something that is not a tensor
# (or ``None``). Positions count from 0. **Fix:** keep numbers and other
# non-tensors as attributes of ``ctx``, as ``Scale`` above keeps ``factor``.
# A ``tuple`` or a ``list`` is most often ``setup_context``'s ``inputs``,
# passed whole (below): unpack it, ``ctx.save_for_backward(*inputs)``, as
# ``NewCube`` does. :ref:`Lesson 06 <lesson-extending-rules>`


class ScaleSavesNumber(Scale):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.save_for_backward(x, factor)  # wrong: factor is a number
        return factor * x


class NewCube(Cube):
    """The cube with ``forward`` and ``setup_context`` apart (lesson 06)."""

    @staticmethod
    def forward(x):
        return x**3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)


class NewCubeSavesTuple(NewCube):
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs)  # wrong: the tuple itself


message = message_of(TypeError, lambda: ScaleSavesNumber.apply(x, 2))
assert message == "save_for_backward can only save variables, but argument 1 is of type int"
message = message_of(TypeError, lambda: NewCubeSavesTuple.apply(x))
assert message == "save_for_backward can only save variables, but argument 0 is of type tuple"
assert torch.allclose(torch.autograd.grad(NewCube.apply(x).sum(), x)[0], 3 * x**2)

# %%
# ``missing a required argument: 'x'``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# The message names the first parameter of ``forward`` left without a
# value. **Cause:** ``apply`` of a Function with a ``setup_context`` got
# fewer arguments than its ``forward`` takes, such as a forgotten ``n`` or
# ``dim``. Another: its ``forward`` still takes ``ctx``: PyTorch then calls
# ``forward`` without ``ctx``, so the inputs fill the parameters from
# ``ctx`` on, and one is left without a value. It is the usual half-done
# move from ``forward(ctx, x)`` to the split of :ref:`lesson 06
# <lesson-extending-rules>`. If the call also passes an optional argument,
# nothing is missing: no error is raised, and ``forward`` runs with every
# input one place off (below, ``x`` is the exponent 3, and the result is the
# number 9). **Fix:** pass what is missing; or drop ``ctx`` from
# ``forward``, as ``NewCube`` does. With ``forward(ctx, ...)`` and no
# ``setup_context``, an argument too few reads
# ``Scale.forward() missing 1 required positional argument: 'factor'``; one
# too many reads ``Cube.forward() takes 2 positional arguments but 3 were
# given``, or ``too many positional arguments`` with ``setup_context`` (all
# below): pass what ``forward`` takes.


class NewCubeKeepsCtx(NewCube):
    @staticmethod
    def forward(ctx, x):  # wrong: with setup_context, forward takes no ctx
        return x**3


message = message_of(TypeError, lambda: NewCubeKeepsCtx.apply(x))
assert message == "missing a required argument: 'x'"


class NewPowerKeepsCtx(Function):
    @staticmethod
    def forward(ctx, x, n=2):  # wrong: with setup_context, forward takes no ctx
        return x**n

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass  # no backward pass here: the error comes first


message = message_of(TypeError, lambda: NewPowerKeepsCtx.apply(x))
assert message == "missing a required argument: 'x'"  # n has a default
print("NewPowerKeepsCtx.apply(x, 3):", NewPowerKeepsCtx.apply(x, 3))  # ctx=x, x=3, n=2
assert NewPowerKeepsCtx.apply(x, 3) == 9  # no error, and not x**3
message = message_of(TypeError, lambda: Scale.apply(x))  # forward(ctx, x, factor)
assert message == "Scale.forward() missing 1 required positional argument: 'factor'"
message = message_of(TypeError, lambda: Cube.apply(x, 2))  # forward(ctx, x)
assert message == "Cube.forward() takes 2 positional arguments but 3 were given"
assert message_of(TypeError, lambda: NewCube.apply(x, 2)) == "too many positional arguments"

# %%
# ``not enough values to unpack (expected 1, got 0)``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** a method unpacked ``ctx.saved_tensors`` into more names than
# were saved for it. The message counts the names, then the tensors saved:
# "expected 1, got 0" when nothing was saved, "expected 2, got 1" when two
# names are unpacked and one tensor was saved (all below). A common cause:
# ``forward`` (or ``setup_context``) never called
# :meth:`~torch.autograd.function.FunctionCtx.save_for_backward`, called it
# only on some of its paths, or left out a tensor. Another, in a Function
# with forward mode: inside ``jvp``, ``ctx.saved_tensors`` holds only what
# was passed to ``ctx.save_for_forward``; inside ``backward``, only what was
# passed to ``ctx.save_for_backward``. **Fix:** save what ``backward``
# reads on every path through ``forward``, as ``Cube`` and ``Mul`` do; for a
# Function with both a ``jvp`` and a ``backward``, call both
# ``save_for_forward`` and ``save_for_backward``, as ``CubeJvp`` does in the
# entries on forward mode. (From :func:`torch.library.custom_op`, the words
# "expected 2, got 1" can also mean an operator's name without a namespace:
# :ref:`lesson 17 <lesson-error-index-ops>`.)
# :ref:`Lesson 01 <lesson-saving-inputs>`,
# :ref:`lesson 08 <lesson-forward-mode>`


class CubeSavesNothing(Cube):
    @staticmethod
    def forward(ctx, x):
        return x**3  # wrong: saves nothing, and backward reads ctx.saved_tensors


message = message_of(ValueError, lambda: CubeSavesNothing.apply(x).sum().backward())
assert message == "not enough values to unpack (expected 1, got 0)"
assert torch.allclose(torch.autograd.grad(Cube.apply(x).sum(), x)[0], 3 * x**2)  # Cube saves x


class Mul(Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, grad_out):
        x, w = ctx.saved_tensors
        return grad_out * w, grad_out * x


class MulSavesOne(Mul):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x)  # wrong: backward also reads w
        return x * w


w = torch.full((3,), 2.0, dtype=torch.float64, requires_grad=True)
message = message_of(ValueError, lambda: MulSavesOne.apply(x, w).sum().backward())
assert message == "not enough values to unpack (expected 2, got 1)"
grad_x, grad_w = torch.autograd.grad(Mul.apply(x, w).sum(), (x, w))  # Mul saves both
assert torch.equal(grad_x, w.detach()) and torch.equal(grad_w, x.detach())

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


def check_forward_ad(function):
    """gradcheck of ``function`` at x, forward mode included."""
    with warnings.catch_warnings():
        # PyTorch's own deprecation note when forward mode first loads (lesson 8)
        warnings.filterwarnings(
            "ignore", message="`torch.jit.script` is (deprecated|not supported)"
        )
        return gradcheck(function.apply, (x,), check_forward_ad=True)


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
# **Cause:** ``backward`` returned, for that input, which requires grad, a
# gradient of a shape that autograd cannot sum to the input's shape: most
# often the output's shape, for an input of another shape, as when a
# reduction forgets to expand its gradient. A gradient of a shape that the
# input broadcasts to is summed to the input's shape instead, with no
# message, and a gradient for an input that does not require grad is
# dropped unchecked, as :ref:`lesson 06 <lesson-extending-rules>` shows.
# **Fix:** return a gradient of the input's shape.


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
# which accepts it). Either way, the output is then a view of the input made
# inside a Function, which later code may not change in place while autograd
# records (:ref:`its entry <error-index-function-view-in-place>`); if the
# code after the Function does, return ``x.clone()`` instead.
# :ref:`Lesson 06 <lesson-extending-rules>`


class Power(Function):
    """x**n for n >= 1 (with n == 0, backward gives nan at 0), with a shortcut for n == 1."""

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


message = message_of(TypeError, lambda: Power.apply(x))  # wrong: n forgotten
assert message == "missing a required argument: 'n'"  # the entry on that message
message = message_of(RuntimeError, lambda: Power.apply(x, 1))
assert message.startswith("An input that has been returned as-is as output is being saved")
assert torch.equal(torch.autograd.grad(PowerFixed.apply(x, 1).sum(), x)[0], torch.ones_like(x))

# %%
# ``unsupported operand type(s) for *: 'NoneType' and 'Tensor'``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# The message names the operator, and the types of its two operands in their
# order. **Cause:** arithmetic with a gradient that is ``None``. Most often,
# outside any Function: a result of ``torch.autograd.grad(...,
# allow_unused=True)`` for an input that the output does not depend on
# (below), or the ``.grad`` of a tensor that is not a leaf, or of a leaf that
# no backward pass reached. **Fix:** find why that gradient is ``None``
# (:ref:`a gradient of None <error-index-none>`); if zero is the right
# gradient there, pass ``materialize_grads=True`` to
# :func:`torch.autograd.grad`, which returns zeros instead (below).

unused = torch.ones(3, dtype=torch.float64, requires_grad=True)
_, grad_unused = torch.autograd.grad(x.sum(), (x, unused), allow_unused=True)
message = message_of(TypeError, lambda: grad_unused * unused)
assert message == "unsupported operand type(s) for *: 'NoneType' and 'Tensor'"
_, grad_unused = torch.autograd.grad(x.sum(), (x, unused), materialize_grads=True)
assert torch.equal(grad_unused * unused, torch.zeros_like(unused))

# %%
# **Another cause,** in a Function: after ``ctx.set_materialize_grads(False)``,
# an incoming gradient was ``None`` (any output, in any pass) and
# ``backward`` did arithmetic with it. ``'NoneType'`` is then the gradient's
# type, first in ``grad_out * ...`` and last in ``... * grad_out`` (both
# below). :func:`~torch.autograd.gradcheck` hits it through
# ``check_undefined_grad``, as :ref:`lesson 11 <lesson-diagnosing>` shows.
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
# The message gives the tensor's type, shape and version and, if the tensor
# has a ``grad_fn``, names an operation, which is not always the one to
# blame. For a saved output, it is the operation that saved it: ``Exp``
# below, a Function that saves its output as in :ref:`lesson 02
# <lesson-saving-outputs>`. For a saved input, it is the tensor's
# ``grad_fn`` when the backward runs: ``Mul`` below, the in-place ``mul_``
# that changed it (a change under ``torch.no_grad()`` leaves the earlier
# ``grad_fn``). A parameter has no ``grad_fn``, so the message names no
# operation; a view of one that was saved, such as the transposed weight
# that ``nn.Linear`` saves, is named ``AsStrided`` after an optimizer step
# (both below). **Fix:** change a copy, or make the change after the
# backward pass (or before the operation that saves it).
# :ref:`Lesson 06 <lesson-extending-rules>`


def change_saved_input():
    y = x.clone()
    out = Cube.apply(y)
    y.mul_(2)
    out.sum().backward()


message = message_of(RuntimeError, change_saved_input)
assert "[torch.DoubleTensor [3]], which is output 0 of Mul, is at version 1;" in message


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        result = x.exp()
        ctx.save_for_backward(result)  # saves its output
        return result

    @staticmethod
    def backward(ctx, grad_out):
        (result,) = ctx.saved_tensors
        return grad_out * result


def change_saved_output():
    out = Exp.apply(x)
    doubled = 2 * out  # keeps Exp in the graph
    out.mul_(2)
    doubled.sum().backward()


message = message_of(RuntimeError, change_saved_output)
assert "[torch.DoubleTensor [3]], which is output 0 of Exp, is at version 1;" in message


def step_between_passes(loss_of, parameters):
    """One backward pass, an optimizer step, then a second pass."""
    loss = loss_of()
    loss.backward(retain_graph=True)
    torch.optim.SGD(parameters, lr=0.1).step()  # changes the parameters in place
    loss.backward()


param = torch.ones(3, dtype=torch.float64, requires_grad=True)
message = message_of(
    RuntimeError, lambda: step_between_passes(lambda: (param * param).sum(), [param])
)
assert "[torch.DoubleTensor [3]] is at version 1;" in message  # no operation
layer = torch.nn.Linear(3, 2, dtype=torch.float64)
inputs = torch.ones(4, 3, dtype=torch.float64, requires_grad=True)  # so addmm saves the weight
message = message_of(
    RuntimeError, lambda: step_between_passes(lambda: layer(inputs).sum(), layer.parameters())
)
assert "[torch.DoubleTensor [3, 2]], which is output 0 of AsStrided," in message

# %%
# .. _error-index-leaf-in-place:
#
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
# After ``.mean()``, whose gradient is a tensor with memory of its own (not
# expanded), the same ``backward`` raises nothing, yet it still changes a
# tensor that autograd may hand to other branches too. In
# ``(CubeGradInPlace.apply(x) + b).mean()``,
# ``torch.autograd.grad(..., (x, b))`` returns a wrong gradient of ``b``,
# with no error, while ``.backward()`` happens to give the right ``b.grad``:
# it copies the gradient of ``b`` before this ``backward`` runs (all below).
# Whether it does depends on the order in which autograd runs the nodes
# (:ref:`rule 3 of lesson 06 <lesson-extending-rules>`). **Fix:** compute a
# new tensor, ``3 * x**2 * grad_out``, as ``Cube`` does.


class CubeGradInPlace(Cube):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out.mul_(3 * x**2)  # wrong: changes the incoming gradient


message = message_of(RuntimeError, lambda: CubeGradInPlace.apply(x).sum().backward())
assert "more than one element of the written-to tensor refers to a single memory" in message
b = torch.ones(3, dtype=torch.float64, requires_grad=True)


def gradient_of_b(cube):
    """The gradient of b in the mean of cube(x) + b: 1/3 for each element."""
    return torch.autograd.grad((cube.apply(x) + b).mean(), (x, b))[1]  # no error


print("gradient of b:", gradient_of_b(CubeGradInPlace), "with Cube:", gradient_of_b(Cube))
assert not torch.allclose(gradient_of_b(CubeGradInPlace), torch.full_like(b, 1 / 3))
(CubeGradInPlace.apply(x) + b).mean().backward()  # the same bug, yet b.grad is right
assert torch.allclose(b.grad, torch.full_like(b, 1 / 3))
assert torch.allclose(gradient_of_b(Cube), torch.full_like(b, 1 / 3))  # the fix
assert torch.allclose(torch.autograd.grad(Cube.apply(x).sum(), x)[0], 3 * x**2)  # the fix

# %%
# ``a leaf Variable that requires grad has been used in an in-place operation``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** a Function marked a leaf that requires grad with
# :meth:`~torch.autograd.function.FunctionCtx.mark_dirty`: below,
# ``ExpInPlace`` of lesson 06. The refusal comes after ``forward`` ran, so
# the leaf already holds the output (below). **Fix:** recreate the leaf,
# then apply the Function to a non-leaf (``x.clone()``). An ordinary
# in-place operation on such a leaf says "is being used" instead
# (:ref:`its entry <error-index-leaf-in-place>`).
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


leaf = torch.full((3,), 2.0, dtype=torch.float64, requires_grad=True)
message = message_of(RuntimeError, lambda: ExpInPlace.apply(leaf))
assert "a leaf Variable that requires grad has been used in an in-place operation" in message
print("the leaf after the error:", leaf.detach())
assert torch.allclose(leaf, torch.full_like(leaf, 2.0).exp())  # already overwritten
leaf = torch.full((3,), 2.0, dtype=torch.float64, requires_grad=True)  # recreated
(grad,) = torch.autograd.grad(ExpInPlace.apply(leaf.clone()).sum(), leaf)  # the fix
assert torch.allclose(grad, leaf.exp())

# %%
# ``Some elements marked as dirty during the forward method were not returned as output``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``forward`` marked an input with ``mark_dirty`` but returned
# another tensor. **Fix:** return the input changed in place itself.
# :ref:`Lesson 06 <lesson-extending-rules>`
#
# **Another cause,** under ``vmap``: a Function with
# ``generate_vmap_rule = True`` meets it even when it returns the input it
# marked (``DoubleInPlace`` below). **Fix:** a ``vmap`` staticmethod that
# calls the Function on the whole batch, as ``DoubleInPlaceVmap`` does
# (:ref:`lesson 17 <lesson-error-index-ops>`).


class ExpInPlaceCopy(ExpInPlace):
    @staticmethod
    def forward(ctx, x):
        x.exp_()
        ctx.mark_dirty(x)
        return x.clone()  # wrong: not the tensor marked


message = message_of(RuntimeError, lambda: ExpInPlaceCopy.apply(x.clone()))
assert "marked as dirty during the forward method were not returned as output" in message
assert torch.allclose(ExpInPlace.apply(x.clone()), x.exp())  # returns x itself


class DoubleInPlace(Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x.mul_(2)  # returns the input it changed

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.mark_dirty(inputs[0])

    @staticmethod
    def backward(ctx, grad_out):
        return 2 * grad_out


class DoubleInPlaceVmap(DoubleInPlace):
    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, x):
        return DoubleInPlaceVmap.apply(x), in_dims[0]  # forward sees the whole batch


rows = torch.ones(2, 3, dtype=torch.float64)
assert torch.equal(DoubleInPlace.apply(rows.clone()), 2 * rows)  # no error without vmap
message = message_of(RuntimeError, lambda: torch.func.vmap(DoubleInPlace.apply)(rows.clone()))
assert "marked as dirty during the forward method were not returned as output" in message
doubled = rows.clone()
assert torch.func.vmap(DoubleInPlaceVmap.apply)(doubled) is doubled  # the input itself
assert torch.equal(doubled, 2 * rows)

# %%
# .. _error-index-function-view-in-place:
#
# ``is a view and is being modified inplace. This view was created inside a custom Function``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# The message begins with the output's position and the Function's name:
# below, "Output 0 of PowerFixed". **Cause:** a Function returned a view of
# an input (``x.view_as(x)``, as the fix of the "returned as-is" entry above
# does, ``x[:2]``, ``x.view(...)``, or the input itself from any ``forward``:
# PyTorch makes it a view; with ``setup_context``, one that is not saved,
# as ``Passed`` below), and later code changed that output in place
# (``mul_``, ``+=``, an activation with ``inplace=True``) while autograd
# recorded: an input required grad, and grad mode was on. Autograd's
# handling of a changed view would override the Function's ``backward``, so
# it refuses. If the Function ran under ``torch.no_grad()`` on an input
# that requires grad and returned a view such as ``x.view_as(x)`` (the
# input itself is then no view), a change made later with grad mode on is
# refused too, with a message that begins "A view was created in no_grad
# mode"; so is a change that brings in a tensor requiring grad when the
# Function ran on inputs that required none.
# **Fix:** clone the output before changing it; or return
# ``x.clone()`` from ``forward``, as ``PowerCloned`` does; or make the
# change out of place, ``y = y * 2`` (all below).


def double_in_place(y):
    y.mul_(2)  # wrong when y is a view made inside a Function
    return y


class PowerCloned(Power):
    @staticmethod
    def forward(x, n):
        return x.clone() if n == 1 else x**n  # a new tensor


class Passed(Function):
    """Returns its input itself and saves nothing: accepted, and a view."""

    @staticmethod
    def forward(x):
        return x

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out


message = message_of(RuntimeError, lambda: double_in_place(PowerFixed.apply(x, 1)))
assert message.startswith("Output 0 of PowerFixed is a view and is being modified inplace.")
assert torch.equal(torch.autograd.grad(Passed.apply(x).sum(), x)[0], torch.ones_like(x))
message = message_of(RuntimeError, lambda: double_in_place(Passed.apply(x)))
assert message.startswith("Output 0 of Passed is a view and is being modified inplace.")
message = message_of(RuntimeError, lambda: torch.relu_(PowerFixed.apply(x, 1)))
assert "This view was created inside a custom Function" in message
with torch.no_grad():
    made_without_grad = PowerFixed.apply(x, 1)
    assert Passed.apply(x)._base is None  # the input itself: no view
message = message_of(RuntimeError, lambda: double_in_place(made_without_grad))
assert message.startswith("A view was created in no_grad mode and is being modified inplace")
assert torch.equal(double_in_place(made_without_grad.clone()), 2 * x)  # the fix
made_from_constants = PowerFixed.apply(x.detach().clone(), 1)  # no input requires grad
message = message_of(RuntimeError, lambda: made_from_constants.mul_(x))
assert message.startswith("A view was created in no_grad mode and is being modified inplace")
assert torch.equal(double_in_place(made_from_constants), 2 * x.detach())  # by 2: allowed
twos = torch.full_like(x, 2.0)
for fixed in (
    lambda: double_in_place(PowerFixed.apply(x, 1).clone()),  # cloned after
    lambda: double_in_place(PowerCloned.apply(x, 1)),  # cloned inside
    lambda: PowerFixed.apply(x, 1) * 2,  # out of place
):
    assert torch.equal(torch.autograd.grad(fixed().sum(), x)[0], twos)

# %%
# Forward mode
# ------------
#
# ``You must implement the jvp function for custom autograd.Function to use it with forward mode AD``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** forward mode met a Function without a ``jvp`` staticmethod: a
# dual tensor of ``torch.autograd.forward_ad``, ``gradcheck`` with
# ``check_forward_ad=True``, or :func:`torch.func.jvp`. ``jacfwd`` and
# ``hessian`` meet it only in a Function written with ``setup_context`` that
# has a vmap rule; without a vmap rule, they stop first at "does not have vmap
# support" (:ref:`lesson 17 <lesson-error-index-ops>`). All below. **Fix:**
# add a ``jvp``, as ``CubeJvp`` does below (it saves ``x`` for both
# passes). That is enough for ``torch.autograd.forward_ad`` and
# ``gradcheck``, not for :mod:`torch.func`,
# which says "it must override the setup_context staticmethod" to a
# ``forward`` that takes ``ctx`` (below): there, write ``forward`` without
# ``ctx`` and a ``setup_context`` that also calls ``save_for_forward``, with a
# vmap rule for ``jacfwd`` and ``hessian``, as ``NewCubeJvp`` does in
# :ref:`lesson 17 <lesson-error-index-ops>`.
# :ref:`Lesson 08 <lesson-forward-mode>`, :ref:`lesson 09 <lesson-torch-func>`


class NewCubeVmap(NewCube):
    generate_vmap_rule = True  # a vmap rule, and still no jvp


ones = torch.ones(3, dtype=torch.float64)
message = message_of(NotImplementedError, lambda: tangent_of(Cube))
assert "You must implement the jvp function" in message
message = message_of(NotImplementedError, lambda: check_forward_ad(Cube))
assert "You must implement the jvp function" in message
message = message_of(NotImplementedError, lambda: torch.func.jvp(NewCube.apply, (x,), (ones,)))
assert "You must implement the jvp function" in message
message = message_of(NotImplementedError, lambda: torch.func.jacfwd(NewCubeVmap.apply)(x))
assert "You must implement the jvp function" in message
message = message_of(RuntimeError, lambda: torch.func.jacfwd(NewCube.apply)(x))
assert "does not have vmap support" in message  # no vmap rule: stops before
message = message_of(NotImplementedError, lambda: torch.func.hessian(NewCubeVmap.apply)(x))
assert "You must implement the jvp function" in message
message = message_of(RuntimeError, lambda: torch.func.hessian(NewCube.apply)(x))
assert "does not have vmap support" in message  # the same for hessian
message = message_of(RuntimeError, lambda: torch.func.jacfwd(Cube.apply)(x))
assert "it must override the setup_context staticmethod" in message  # forward takes ctx
message = message_of(RuntimeError, lambda: torch.func.hessian(Cube.apply)(x))
assert "it must override the setup_context staticmethod" in message


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
assert check_forward_ad(CubeJvp)
message = message_of(RuntimeError, lambda: torch.func.jvp(CubeJvp.apply, (x,), (ones,)))
assert "it must override the setup_context staticmethod" in message

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


message = message_of(GradcheckError, lambda: check_forward_ad(CubeWrongJvp))
assert message.startswith("Jacobian computed with forward mode mismatch for output 0")
assert check_forward_ad(CubeJvp)

# %%
# Next, :ref:`lesson 17 <lesson-error-index-ops>`: the messages of a custom
# operator, and of the rules that :mod:`torch.func` and ``vmap`` need.
