r"""
.. _lesson-error-index-silent:

Error index: silent symptoms
============================

A second derivative that comes out wrong while everything runs, with no
message at all: worse than any error. Each symptom with its causes, its
fixes, and the lesson that explains them.

The messages of double backward are in the error index:
:ref:`lesson 15 <lesson-error-index>` for computing and checking second
derivatives, :ref:`lesson 16 <lesson-error-index-function>` for writing a
Function, :ref:`lesson 17 <lesson-error-index-ops>` for custom operators,
:mod:`torch.func` and ``vmap``, and :ref:`lesson 18
<lesson-builtin-operators>` for PyTorch's own operators.

.. contents:: On this page
   :local:
"""

# %%
# The examples reuse the helpers and the Functions of :ref:`lesson 15
# <lesson-error-index>`, defined again here so that this page runs on its own.

import warnings

import torch

# sphinx_gallery_thumbnail_path = "_static/thumbs/19_silent_symptoms.svg"
from torch.autograd import Function, gradcheck, gradgradcheck
from torch.autograd.function import once_differentiable
from torch.utils.checkpoint import checkpoint


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
w = torch.rand(3, dtype=torch.float64, requires_grad=True)
leaf = x.detach().clone().requires_grad_()
model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh(), torch.nn.Linear(2, 1))
model = model.double()
model[0].requires_grad_(False)  # the first layer is frozen


class Cube(Function):
    """A correct cube for autograd, and the base of the broken variants below."""

    @staticmethod
    def forward(ctx, x):  # it takes ctx, so torch.func refuses it: rule 9 of lesson 06
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * grad_out


def second_derivative(f):
    """H @ 1, H the Hessian of f(x).sum(): d2/dx2 for an elementwise f."""
    (grad,) = torch.autograd.grad(f(x).sum(), x, create_graph=True)
    return torch.autograd.grad(grad.sum(), x)[0]


class CubeOnce(Cube):
    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        return Cube.backward(ctx, grad_out)


def once_gradient():
    """The gradient of tanh(x**3) through CubeOnce: it has a graph, via tanh."""
    return torch.autograd.grad(torch.tanh(CubeOnce.apply(x)).sum(), x, create_graph=True)[0]


class CubeOnCtx(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.square = x**2  # untracked
        return x**3

    @staticmethod
    def backward(ctx, grad_out):
        return 3 * ctx.square * grad_out


def warnings_of(action):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        action()
    return [(w.category, str(w.message).split(" (Triggered internally")[0]) for w in caught]


def checkpointed_tanh(t, reentrant=True):
    return checkpoint(torch.tanh, t, use_reentrant=reentrant)


# %%
# .. _error-index-zeros:
#
# A Hessian, or a second derivative, of zeros
# -------------------------------------------
#
# **Cause:** ``backward`` is cut off from the input, and the gradient only
# carries the graph of the incoming gradient. **Fix:** as for :ref:`the
# Jacobian mismatch <error-index-mismatch>`. :ref:`Lesson 04
# <lesson-ctx-mistake>`


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
assert torch.allclose(true_hessian, torch.diag(15 * x.detach() ** 4))

# %%
# The diagonal is not zero here because the loss squares the cube: the part
# of the Hessian that goes through the cube's second derivative is missing,
# and what is left, :math:`(3x^2)^2 = 9x^4`, is the square of its first.
# With the cube alone, the Hessian is all zeros:

assert torch.allclose(hessian, torch.diag(9 * x.detach() ** 4))  # not 15 x**4
zeros = torch.autograd.functional.hessian(lambda t: CubeDetached.apply(t).sum(), x.detach())
print(zeros)
assert not zeros.any()

# %%
# **Another cause:** the model, or the part of it that the input goes
# through, is compiled. :func:`torch.autograd.functional.hessian`
# differentiates with explicit inputs and fills in zeros where no path
# reaches the input, and through a compiled backward there is often none
# (:ref:`the cut path <error-index-cut>`): then the Hessian is all zeros,
# with no message. Where a path does reach the input, the pass raises the
# torch.compile message instead. **Fix:** compute the Hessian of the eager
# model (:ref:`lesson 13 <lesson-torch-compile>`). **Check:**
# ``hessian(..., strict=True)`` raises instead of filling in zeros; it also
# raises where the Hessian is zero by design, as for a linear function.
# Below, a small network with a frozen first layer, compiled with
# ``aot_eager``:

compiled_model = torch.compile(model, backend="aot_eager")
compiled_hessian = torch.autograd.functional.hessian(lambda t: compiled_model(t).sum(), x.detach())
eager_hessian = torch.autograd.functional.hessian(lambda t: model(t).sum(), x.detach())
print("compiled:", compiled_hessian, "eager:", eager_hessian, sep="\n")
assert not compiled_hessian.any() and eager_hessian.any()
message = message_of(
    RuntimeError,
    lambda: torch.autograd.functional.hessian(
        lambda t: compiled_model(t).sum(), x.detach(), strict=True
    ),
)
assert "is independent of input 0. This is not allowed in strict mode." in message
strict = torch.autograd.functional.hessian(lambda t: model(t).sum(), x.detach(), strict=True)
assert torch.equal(strict, eager_hessian)  # eager: no error
message = message_of(
    RuntimeError,
    lambda: torch.autograd.functional.hessian(lambda t: (3 * t).sum(), x.detach(), strict=True),
)
assert "This is not allowed in strict mode." in message  # linear: zero by design

# %%
# Zeros can also be right: a network of ReLUs and linear layers is piecewise
# linear in its input and in each weight taken alone, so its second
# derivative in any one of them is zero almost everywhere. Below, those that
# mix two of them are not, and with a squared error on top none is.

w1, w2 = torch.randn(5, 3, dtype=torch.float64), torch.randn(1, 5, dtype=torch.float64)


def relu_network(t, w1, w2):
    return (w2 @ torch.relu(w1 @ t)).sum()


def nonzero_blocks(f):
    """The number of nonzero entries in each block of f's Hessian in (x, w1, w2)."""
    blocks = torch.autograd.functional.hessian(f, (x.detach(), w1, w2))
    return [[int(block.count_nonzero()) for block in row] for row in blocks]


alone = nonzero_blocks(relu_network)
squared = nonzero_blocks(lambda *inputs: (relu_network(*inputs) - 1) ** 2)
print("ReLU network, nonzero second derivatives in (x, w1, w2):", alone)
print("  with a squared error on top:", squared)
assert all((alone[i][j] == 0) == (i == j) for i in range(3) for j in range(3))
assert all(n > 0 for row in squared for n in row)

# %%
# .. _error-index-no-graph:
#
# gradgradcheck passes, yet one gradient has no graph
# ---------------------------------------------------
#
# **Cause:** ``backward`` computed one gradient with PyTorch operations and
# another outside PyTorch (or detached it).
# :func:`~torch.autograd.gradgradcheck` checks only the gradients that have a
# graph, so it passes, and every second derivative that goes through the
# other gradient is missing. **Check:** under ``create_graph=True``, with an
# output gradient that requires grad, every gradient that ``backward``
# returns must require grad (unless it is zero by design), as
# :ref:`lesson 11 <lesson-diagnosing>` shows. **Fix:** pattern 4 for the
# untracked code (:ref:`lesson 05 <lesson-untracked-backward>`). Below,
# :math:`a b^2`, whose gradient for ``b`` comes from NumPy:


class MulSquare(Function):
    """a * b**2, both gradients with PyTorch operations."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b**2

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        return grad_out * b**2, 2 * a * b * grad_out


class MulSquareNumpy(MulSquare):
    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        grad_b = 2 * a.numpy(force=True) * b.numpy(force=True) * grad_out.numpy(force=True)
        return grad_out * b**2, torch.as_tensor(grad_b)  # the second has no graph


b = (torch.rand(3, dtype=torch.float64) + 0.5).requires_grad_()


def gradients_with_graph(function):
    out = function.apply(x, b)
    grad_out = torch.ones_like(out, requires_grad=True)
    grads = torch.autograd.grad(out, (x, b), grad_out, create_graph=True)
    return [grad.requires_grad for grad in grads]


def second_in_a(function):
    """d/da of the sum of both gradients: 2b, all through the gradient for b."""
    grads = torch.autograd.grad(function.apply(x, b).sum(), (x, b), create_graph=True)
    return torch.autograd.grad(sum(g.sum() for g in grads), x, allow_unused=True)[0]


print("gradgradcheck:", gradgradcheck(MulSquareNumpy.apply, (x, b)))
print("gradients with a graph:", gradients_with_graph(MulSquareNumpy))
print("d/da:", second_in_a(MulSquareNumpy), "true:", second_in_a(MulSquare))
assert gradcheck(MulSquareNumpy.apply, (x, b)) and gradgradcheck(MulSquareNumpy.apply, (x, b))
assert gradients_with_graph(MulSquareNumpy) == [True, False]
assert gradients_with_graph(MulSquare) == [True, True]
assert second_in_a(MulSquareNumpy) is None and torch.allclose(second_in_a(MulSquare), 2 * b)

# %%
# .. _error-index-none:
#
# A gradient of None
# ------------------
#
# **Cause:** ``torch.autograd.grad(..., allow_unused=True)`` found no path to
# that input, for any of the reasons of :ref:`the message "appears to not
# have been used in the graph" <error-index-unused>`, which
# ``allow_unused=True`` turns into ``None``;
# the fixes are the same (``allow_unused=True`` on a cut path hides it as
# ``materialize_grads=True`` does). Two causes are new: a tensor passed to a Function's
# ``apply`` inside a list or dictionary, which autograd does not look into
# (**Fix:** pass it to ``apply`` as an argument of its own); an output marked
# :meth:`~torch.autograd.function.FunctionCtx.mark_non_differentiable`, which
# is the mark working (:ref:`lesson 06 <lesson-extending-rules>`). Either
# gives ``None`` only when something else has a graph, as ``w`` below;
# otherwise "element 0 of tensors does not require grad", even with
# ``allow_unused=True``. Then the two cut paths of :ref:`lesson 15
# <error-index-cut>`: once_differentiable, and an ``exp`` compiled with
# ``aot_eager`` whose incoming gradient is a constant; under ``tanh``, the
# same ``exp`` raises. A ``.grad`` that stays ``None`` after ``.backward()`` is another matter:
# :ref:`the warning on a tensor that is not a leaf <error-index-non-leaf>`.


class TwiceFirst(Function):
    @staticmethod
    def forward(ctx, tensors):
        return 2 * tensors[0]  # inside a list: autograd does not see it

    @staticmethod
    def backward(ctx, grad_out):
        return None


out = TwiceFirst.apply([x])
assert torch.autograd.grad((out * w).sum(), x, allow_unused=True)[0] is None
message = message_of(RuntimeError, lambda: torch.autograd.grad(out.sum(), x, allow_unused=True))
assert "element 0 of tensors does not require grad" in message
behind_once = torch.autograd.grad(once_gradient().sum(), x, allow_unused=True)[0]
compiled_exp = torch.compile(torch.exp, backend="aot_eager")
exp_out = compiled_exp(x)
(saved,) = exp_out.grad_fn.saved_tensors
# e^x, saved detached: no path back to x
assert saved.data_ptr() == exp_out.data_ptr() and saved.grad_fn is None
assert not saved.requires_grad
(grad,) = torch.autograd.grad(compiled_exp(x).sum(), x, create_graph=True)
behind_compiled = torch.autograd.grad(grad.sum(), x, allow_unused=True)[0]
(grad,) = torch.autograd.grad(torch.exp(x).sum(), x, create_graph=True)
in_eager_mode = torch.autograd.grad(grad.sum(), x, allow_unused=True)[0]
print("behind once_differentiable:", behind_once)
print("behind a compiled exp:     ", behind_compiled)
print("exp in eager mode:         ", in_eager_mode)
assert behind_once is None and behind_compiled is None
assert torch.allclose(in_eager_mode, torch.exp(x))
(grad,) = torch.autograd.grad(torch.tanh(compiled_exp(x)).sum(), x, create_graph=True)
message = message_of(RuntimeError, lambda: torch.autograd.grad(grad.sum(), x, allow_unused=True))
assert message == "torch.compile with aot_autograd does not currently support double backward"

# %%
# .. _error-index-wrong:
#
# A second derivative that is wrong but not zero
# -----------------------------------------------
#
# **Cause:** part of the second derivative is cut off while the rest is
# tracked, so autograd differentiates only the tracked part. The cut can be a
# ``backward`` that uses untracked values (an intermediate of ``forward`` kept
# on ``ctx``, NumPy, a ``.detach()``); a ``backward`` marked
# :func:`@once_differentiable <torch.autograd.function.once_differentiable>`
# whose error node the second pass does not run
# (:ref:`lesson 05 <lesson-untracked-backward>` says when);
# :func:`~torch.utils.checkpoint.checkpoint` with
# ``use_reentrant=True`` under ``.backward(create_graph=True)``; or one of the
# compiled parts of :ref:`lesson 13 <lesson-torch-compile>`, such as a custom
# Function under ``backend="eager"``. **Fix:** for untracked code, pattern 4
# (:ref:`lesson 05 <lesson-untracked-backward>`); for the checkpoint,
# ``use_reentrant=False``; for a compiled part, run the path differentiated
# twice in eager mode. Below, the first three, each with an :math:`x^2` term
# added: of the second derivative, only that term's, 2, is left. Each fix
# gives the true one.


def second_through_grad_attribute(f):
    """As second_derivative, with .backward(create_graph=True) for the first pass."""
    leaf = x.detach().requires_grad_()
    # warnings_of keeps a warning off the page (the reference cycle, if not yet given)
    warnings_of(lambda: f(leaf).sum().backward(create_graph=True))
    grad, leaf.grad = leaf.grad, None  # breaks the cycle
    return torch.autograd.grad(grad.sum(), leaf)[0]


# name: (cut, fixed, the same in PyTorch operations, the second derivative's function)
cases = {
    "ctx, x^3 + x^2": (
        lambda t: CubeOnCtx.apply(t) + t**2,
        lambda t: Cube.apply(t) + t**2,
        lambda t: t**3 + t**2,
        second_derivative,
    ),
    "once_differentiable, x^3 + x^2": (
        lambda t: CubeOnce.apply(t) + t**2,
        lambda t: Cube.apply(t) + t**2,
        lambda t: t**3 + t**2,
        second_derivative,
    ),
    "once_differentiable, tanh(x^3) + x^2": (
        lambda t: torch.tanh(CubeOnce.apply(t)) + t**2,
        lambda t: torch.tanh(Cube.apply(t)) + t**2,
        lambda t: torch.tanh(t**3) + t**2,
        second_derivative,
    ),
    "checkpoint, tanh(x) + x^2": (
        lambda t: checkpointed_tanh(t) + t**2,
        lambda t: checkpointed_tanh(t, reentrant=False) + t**2,
        lambda t: torch.tanh(t) + t**2,
        second_through_grad_attribute,
    ),
}
for name, (cut, fixed, reference, second) in cases.items():
    computed, true = second(cut), second_derivative(reference)
    print(f"{name:37} computed {computed.tolist()}")
    print(f"{'':37} true     {true.round(decimals=4).tolist()}")
    assert torch.equal(computed, torch.full_like(x, 2.0))  # the x**2 term alone
    assert not torch.allclose(computed, true) and torch.allclose(second(fixed), true)

# %%
# A second derivative of nan
# --------------------------
#
# **Cause:** a derivative that is infinite where the gradient is exactly
# zero, multiplied by that zero. A gradient penalty that writes the norm as
# ``torch.sqrt((g ** 2).sum())`` does this: the derivative of
# :math:`\sqrt{s}` at :math:`s = 0` is infinite, and :math:`\infty \cdot 0`
# is nan. The gradient of a network is exactly zero wherever it is flat in
# its input, as where every ReLU on the path is off; the parameters'
# gradient is then nan, with no message, and an optimizer step writes nan
# into the weights. Under :class:`torch.autograd.detect_anomaly` the pass
# stops instead, with "Function 'PowBackward0' returned nan values in its 0th
# output": the node it names is the backward of ``g ** 2``, where the
# infinite derivative of the square root meets the zero ``g``, not the
# root's own. **Fix:** ``torch.linalg.vector_norm`` (or
# ``g.norm()``), whose backward gives 0 at 0, or a small constant added
# inside the square root. Both fix the penalty, which needs only the norm's
# first derivative. Where the norm's own second derivative is taken at 0,
# ``vector_norm`` gives nan too, and the constant keeps it finite (an
# approximation: at 0 the true one does not exist; :ref:`lesson 18
# <error-index-builtins>`, distances between coincident points).

weights = torch.tensor([-1.0, -2.0, 0.5], dtype=torch.float64, requires_grad=True)


def penalty_gradient(norm):
    """The weights' gradient of (|g| - 1)^2, g the input gradient of a dead ReLU."""
    (g,) = torch.autograd.grad(torch.relu(x @ weights - 10), x, create_graph=True)
    assert not g.any()  # the ReLU is off: the gradient is exactly zero
    return torch.autograd.grad((norm(g) - 1) ** 2, weights)[0]


def sqrt_norm(g):
    return torch.sqrt((g**2).sum())


by_sqrt = penalty_gradient(sqrt_norm)
by_norm = penalty_gradient(torch.linalg.vector_norm)
print("through sqrt:", by_sqrt, "through vector_norm:", by_norm, sep="\n")
assert by_sqrt.isnan().all()
assert torch.equal(by_norm, torch.zeros_like(by_norm))  # right: the penalty stays 1 nearby


def message_under_anomaly_mode():
    with warnings.catch_warnings():  # anomaly mode's own: that it is on, the forward's traceback
        warnings.simplefilter("ignore")
        with torch.autograd.detect_anomaly():
            return message_of(RuntimeError, lambda: penalty_gradient(sqrt_norm))


message = message_under_anomaly_mode()  # the same penalty: nan above, with no message
assert message == "Function 'PowBackward0' returned nan values in its 0th output."


def smoothed(g):
    return torch.sqrt((g**2).sum() + 1e-12)


assert not penalty_gradient(smoothed).any()


def second_at_zero(norm):
    """The second derivative of the norm itself at the zero vector."""
    zero = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    (grad,) = torch.autograd.grad(norm(zero), zero, create_graph=True)
    return torch.autograd.grad(grad.sum(), zero)[0]


assert second_at_zero(torch.linalg.vector_norm).isnan().all()
assert second_at_zero(smoothed).isfinite().all()

# %%
# Back to :ref:`lesson 15 <lesson-error-index>`, the messages met while
# computing and checking second derivatives.
