r"""
.. _lesson-error-index:

Error index: computing and checking second derivatives
======================================================

The messages a reader meets while computing second derivatives and while
checking a Function with :func:`~torch.autograd.gradcheck` and
:func:`~torch.autograd.gradgradcheck`, grouped by what went wrong, each with
its cause, its fix, and the lesson that explains it.

The messages that point to a mistake in a Function itself (in what its
``backward`` returns, in ``ctx``, in a change in place, in its forward mode)
are in :ref:`lesson 16 <lesson-error-index-function>`; those of a custom
operator, in a first backward pass or a second, and of the rules that :mod:`torch.func` and ``vmap`` need, in
:ref:`lesson 17 <lesson-error-index-ops>`; and those of PyTorch's own
operators that have no second derivative in :ref:`lesson 18
<lesson-builtin-operators>`. A second derivative that is wrong with no message
at all is in :ref:`lesson 19 <lesson-error-index-silent>`.

Every message that heads an entry is printed by a minimal example that ran
when the page was built, so it is the exact text of the PyTorch that built
it. Paste a message into the search box to land on its entry.

.. contents:: On this page
   :local:
"""

# %%
# Each error runs through one helper: it expects one exception type,
# prints the message, and fails the build if the example raised nothing.
# The warnings are caught and checked the same way.

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


# %%
# Computing the derivatives
# -------------------------
#
# ``trying to differentiate twice a function that was marked with @once_differentiable``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** a second backward pass ran the error node of a ``backward``
# decorated with
# :func:`@once_differentiable <torch.autograd.function.once_differentiable>`.
# **Fix:** write that ``backward`` with PyTorch operations and remove the
# decorator, or wrap its untracked code in a second Function. When the
# decorated code is not yours (PyTorch marks a few of its own backwards this
# way), replace that operation by one written with differentiable
# operations.
# :ref:`Lesson 05 <lesson-untracked-backward>`


class CubeOnce(Cube):
    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        return Cube.backward(ctx, grad_out)


def once_gradient():
    """The gradient of tanh(x**3) through CubeOnce: it has a graph, via tanh."""
    return torch.autograd.grad(torch.tanh(CubeOnce.apply(x)).sum(), x, create_graph=True)[0]


def penalty_backward():
    once_gradient().pow(2).sum().backward()


message = message_of(RuntimeError, penalty_backward)
assert "marked with @once_differentiable" in message
x.grad = None
(grad,) = torch.autograd.grad(torch.tanh(Cube.apply(x)).sum(), x, create_graph=True)
grad.pow(2).sum().backward()  # the fix: Cube is CubeOnce without the decorator
eager = x.detach().requires_grad_()
(grad,) = torch.autograd.grad(torch.tanh(eager**3).sum(), eager, create_graph=True)
grad.pow(2).sum().backward()
assert torch.allclose(x.grad, eager.grad)
x.grad = None

# %%
# ``element 0 of tensors does not require grad and does not have a grad_fn``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** the gradient you differentiate has no graph. Most often, the
# first gradient was computed without ``create_graph=True``, so autograd did
# not record it. **Fix:** pass ``create_graph=True`` to the call that computes
# the first gradient. :ref:`Lesson 01 <lesson-saving-inputs>`


def second_without_create_graph():
    (grad,) = torch.autograd.grad(Cube.apply(x).sum(), x)  # no create_graph=True
    torch.autograd.grad(grad.sum(), x)


message = message_of(RuntimeError, second_without_create_graph)
assert "does not require grad and does not have a grad_fn" in message
assert torch.allclose(second_derivative(Cube.apply), 6 * x)  # the fix: 6x, from x**3

# %%
# **Another cause:** the forward ran under ``torch.no_grad()`` or
# ``torch.inference_mode()``, as in an evaluation loop that computes a
# physics residual or a gradient penalty, so autograd recorded nothing.
# **Fix:** wrap that computation in ``torch.enable_grad()``. Inside
# ``inference_mode`` that is not enough: use ``torch.inference_mode(False)``
# instead, and there clone each tensor made under inference mode that the
# computation uses. An input cannot be made to require grad (its own message,
# below), and a tensor that an operation saves, such as a coefficient, raises
# "Inference tensors cannot be saved for backward". Or evaluate under
# ``no_grad``, with the first fix.

tanh_second = second_derivative(torch.tanh)  # in grad mode: right
with torch.no_grad():
    message = message_of(RuntimeError, lambda: second_derivative(torch.tanh))
    assert "does not require grad and does not have a grad_fn" in message
    with torch.enable_grad():  # the fix
        assert torch.allclose(second_derivative(torch.tanh), tanh_second)
with torch.inference_mode():
    made_inside = x.detach() + 0  # an inference tensor
    with torch.enable_grad():  # not enough here
        message = message_of(RuntimeError, lambda: second_derivative(torch.tanh))
    assert "does not require grad and does not have a grad_fn" in message
    with torch.inference_mode(False):  # the fix
        assert torch.allclose(second_derivative(torch.tanh), tanh_second)
        message = message_of(RuntimeError, lambda: made_inside.requires_grad_())
        assert message.startswith("Setting requires_grad=True on inference tensor outside")
        copy = made_inside.clone().requires_grad_()
        (grad,) = torch.autograd.grad(torch.tanh(copy).sum(), copy, create_graph=True)
        assert torch.allclose(torch.autograd.grad(grad.sum(), copy)[0], tanh_second)
        message = message_of(RuntimeError, lambda: second_derivative(lambda t: t**2 * made_inside))
        assert message.startswith("Inference tensors cannot be saved for backward")
        assert torch.equal(second_derivative(lambda t: t**2 * made_inside.clone()), 2 * x)

# %%
# **A third cause:** ``create_graph=True`` was passed, but ``backward`` used
# only values autograd cannot follow (an intermediate of ``forward`` kept on
# ``ctx``, NumPy), and the incoming gradient was a constant. **Fix:** save
# what ``backward`` needs as inputs or outputs, or compute it in ``backward``
# (:ref:`lesson 04 <lesson-ctx-mistake>`); for code outside PyTorch, a second
# Function (:ref:`lesson 05 <lesson-untracked-backward>`). A custom Function
# compiled with ``backend="eager"`` does the same when Dynamo traces its
# ``backward`` (:ref:`lesson 13 <lesson-torch-compile>`). So does a tensor
# passed to a Function inside a list, or an output marked non-differentiable,
# when nothing else has a graph (:ref:`a gradient of None <error-index-none>`).


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
# **A fourth cause:** nothing is wrong, the second derivative is zero. The
# first gradient of a function linear in ``x`` with fixed coefficients
# (``3 * x``, ``x @ w`` with a ``w`` that does not require grad) depends on
# nothing that requires grad, so even under ``create_graph=True`` it has no
# graph. Asking for zeros with ``materialize_grads=True`` (next entry) raises
# this message all the same. The first and third causes leave
# ``grad.requires_grad`` ``False`` too (under ``no_grad`` the first call
# already raises), and :func:`torch.autograd.functional.hessian` returns
# zeros for the third (:ref:`lesson 19 <error-index-zeros>`). **Check:** the
# first gradient, as a function of ``x``, with ``gradcheck``: with no graph,
# it passes only if it does not change with ``x`` near that point, where the
# second derivative is then zero. For ``CubeOnCtx``, it fails.


def first_gradient(f):
    """f's first gradient, as a function that gradcheck can check."""
    return lambda t: torch.autograd.grad(f(t).sum(), t, create_graph=True)[0]


(grad,) = torch.autograd.grad((3 * x).sum(), x, create_graph=True)  # 3s: no graph
message = message_of(
    RuntimeError, lambda: torch.autograd.grad(grad.sum(), x, materialize_grads=True)
)
assert "does not require grad and does not have a grad_fn" in message
assert not grad.requires_grad  # no graph
assert gradcheck(first_gradient(lambda t: 3 * t), (x,))  # the second derivative is zero
message = message_of(GradcheckError, lambda: gradcheck(first_gradient(CubeOnCtx.apply), (x,)))
assert message == "Numerical gradient for function expected to be zero"  # not zero: 6x

# %%
# .. _error-index-unused:
#
# ``The differentiated Tensor at index 0 appears to not have been used in the graph``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** no recorded operation leads from what you differentiate to that
# input. Often the derivative is zero while the first gradient has a graph
# through something else: the gradient of ``x @ w`` in ``x`` is ``w``, which
# has a graph when ``w`` requires grad, and no longer contains ``x``. Or the
# loss never uses that input: often a parameter in ``model.parameters()``
# that this loss does not reach, as in meta-learning. Otherwise the input is
# not the tensor the computation used: the computation used a copy cut off
# from it (``x.detach()``, ``torch.tensor(x)``, a round trip through NumPy)
# that requires grad on its own, while ``x`` is differentiated; or the path
# was cut (below). Older releases of PyTorch say "One of the differentiated
# Tensors appears to not have been used in the graph". **Fix:** for a
# derivative that is zero by design, pass ``materialize_grads=True`` to
# :func:`torch.autograd.grad`, which then returns zeros for an input that no
# path reaches (``allow_unused=True`` returns ``None``); never on a cut path
# (below), where it turns this message into zeros that are wrong, without an
# error. Otherwise differentiate the tensor the computation used.

w = torch.rand(3, dtype=torch.float64, requires_grad=True)
(grad,) = torch.autograd.grad((x @ w).sum(), x, create_graph=True)  # grad is w
message = message_of(RuntimeError, lambda: torch.autograd.grad(grad.sum(), x))
assert "appears to not have been used in the graph" in message
(second,) = torch.autograd.grad(grad.sum(), x, materialize_grads=True)
assert torch.equal(second, torch.zeros_like(x))
copy = x.detach().requires_grad_()  # a new leaf, as torch.tensor(x, requires_grad=True)
message = message_of(RuntimeError, lambda: torch.autograd.grad(copy.pow(3).sum(), x))
assert "appears to not have been used in the graph" in message
assert torch.allclose(torch.autograd.grad(copy.pow(3).sum(), copy)[0], 3 * x**2)

# %%
# .. _error-index-cut:
#
# **Another cause:** a cut path. Below, the ``backward`` marked
# :func:`@once_differentiable <torch.autograd.function.once_differentiable>`
# of the first entry, differentiated with :func:`torch.autograd.grad`, gives
# this generic message instead of the clear one
# (:ref:`lesson 05 <lesson-untracked-backward>` says which pass gets which;
# **Fix:** as for the first entry). A compiled part does the same when
# nothing its compiled backward takes (the incoming gradient, the tensors its
# forward saved) leads back to ``x``; otherwise the pass raises the
# torch.compile message below. What each backend saves, and so which
# compiled functions are cut and which raise, is in :ref:`lesson 13
# <compile-error-node>`. **Fix:** run the part differentiated twice in eager
# mode. Both cuts are shown under :ref:`a gradient of None
# <error-index-none>`.

message = message_of(RuntimeError, lambda: torch.autograd.grad(once_gradient().pow(2).sum(), x))
assert "appears to not have been used in the graph" in message
hidden = torch.autograd.grad(once_gradient().pow(2).sum(), x, materialize_grads=True)[0]
true = torch.autograd.grad(
    torch.autograd.grad(torch.tanh(x**3).sum(), x, create_graph=True)[0].pow(2).sum(), x
)[0]
assert torch.equal(hidden, torch.zeros_like(x)) and true.abs().min() > 0  # wrong zeros

# %%
# .. _error-index-compile:
#
# ``torch.compile with aot_autograd does not currently support double backward``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** a second backward pass reached the error node of a backward
# compiled by AOTAutograd, as every backward of the default backend is.
# **Fix:** run the part that is differentiated twice in eager mode.
# :ref:`Lesson 13 <lesson-torch-compile>`

compiled_cube = torch.compile(lambda t: t**3, backend="aot_eager")
message = message_of(RuntimeError, lambda: second_derivative(compiled_cube))
assert message == "torch.compile with aot_autograd does not currently support double backward"
assert torch.allclose(second_derivative(lambda t: t**3), 6 * x)  # the fix: eager mode

# %%
# ``This backward function was compiled with non-empty donated buffers``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** a backward through a compiled function kept the graph
# (``create_graph=True`` or ``retain_graph=True``) while its compiled backward
# may reuse the memory of tensors it saved ("donated buffers"): with dynamic
# shapes (``dynamic=True``, or the default once a size has changed, as with a
# smaller last batch) from its first backward on, and with fixed shapes once
# an ordinary backward, such as a training step's, has compiled it. With
# ``inductor``, that ordinary backward may have run in an earlier process: its
# cache on disk keeps compiled backwards. Which backends and functions do so
# depends on what they save (:ref:`lesson 13 <lesson-torch-compile>`).
# **Fix,** with ``create_graph=True``: as for the previous entry. The
# message's ``donated_buffer=False`` removes only this error: here the second
# pass then finds no path to ``x`` (the generic message of :ref:`the cut path
# <error-index-cut>`), and with another term reaching ``x`` the second
# derivative comes out silently wrong (:ref:`lesson 13
# <lesson-torch-compile>`). **Fix,** with ``retain_graph=True`` alone (two
# first-order passes through one compiled part, as for two losses on one
# trunk): call the compiled function once for each backward pass. The
# message's ``torch._functorch.config.donated_buffer = False`` (after
# ``import torch._functorch.config``: ``import torch`` alone does not load
# that module), set before the first call and kept for the backward passes,
# also gives the right gradients below, under
# ``aot_eager_decomp_partition``. Under ``inductor``, the default backend, it
# did not help when the compiled backward came from its cache (on by
# default), filled while the setting was on: the second pass came out wrong,
# with no message (tried off the page). Use it with another backend, or after
# clearing that cache.


def two_tanh(t):
    return 2 * torch.tanh(t @ W)


def two_tanh_again(t):  # its own code, so that Dynamo compiles it afresh
    return 2 * torch.tanh(t @ W)


def after_ordinary_backward(function):
    compiled = torch.compile(function, backend="aot_eager_decomp_partition")
    torch.autograd.grad(compiled(x).sum(), x)  # an ordinary backward first
    return compiled


W = torch.randn(3, 3, dtype=torch.float64)
compiled = after_ordinary_backward(two_tanh)
message = message_of(RuntimeError, lambda: second_derivative(compiled))
assert message.startswith("This backward function was compiled with non-empty donated buffers")
retained = message_of(
    RuntimeError, lambda: torch.autograd.grad(compiled(x).sum(), x, retain_graph=True)
)
assert retained == message  # retain_graph=True alone raises it too
first_order = torch.autograd.grad(two_tanh(x).sum(), x)[0]  # eager
passes = [torch.autograd.grad(compiled(x).sum(), x)[0] for _ in range(2)]  # one call each
assert all(torch.allclose(grad, first_order) for grad in passes)
import torch._functorch.config

with torch._functorch.config.patch(donated_buffer=False):
    not_donated = after_ordinary_backward(two_tanh_again)
    message = message_of(RuntimeError, lambda: second_derivative(not_donated))
    out = not_donated(x).sum()
    passes = [torch.autograd.grad(out, x, retain_graph=True)[0], torch.autograd.grad(out, x)[0]]
assert "appears to not have been used in the graph" in message
assert all(torch.allclose(grad, first_order) for grad in passes)  # retain_graph: right
assert gradcheck(first_gradient(two_tanh), (x,))  # eager: right

# %%
# ``torch.compile does not currently support higher order gradients``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** compiled autograd
# (``torch._dynamo.config.compiled_autograd = True``), which traces the
# backward passes of a compiled step, met a gradient taken with
# ``create_graph=True`` (a gradient penalty, a physics residual) through a
# part that the step compiled. The setting counts when ``torch.compile``
# wraps the step, not when the step runs. **Fix:** run the step that
# differentiates twice in eager mode. Turning compiled autograd off is not
# enough: the compiled part's backward is then differentiated as in
# :ref:`the cut path <error-index-cut>` (below, no path leads to ``x``) or
# :ref:`the message two entries above <error-index-compile>`.
# :ref:`Lesson 13 <lesson-torch-compile>`


def penalty_step():
    """The gradient of a gradient penalty: it needs two_tanh's second derivative."""
    (grad,) = torch.autograd.grad(two_tanh(x).sum(), x, create_graph=True)
    return torch.autograd.grad((grad.norm() - 1) ** 2, x)[0]


with torch._dynamo.config.patch(compiled_autograd=True):  # read here, by torch.compile
    with_compiled_autograd = torch.compile(penalty_step, backend="aot_eager")
message = message_of(RuntimeError, with_compiled_autograd)
assert message == "torch.compile does not currently support higher order gradients."
message = message_of(RuntimeError, torch.compile(penalty_step, backend="aot_eager"))
assert "appears to not have been used in the graph" in message  # compiled autograd off
first_gradient_of_two_tanh = torch.func.grad(lambda t: two_tanh(t).sum())
by_func = torch.func.grad(lambda t: (first_gradient_of_two_tanh(t).norm() - 1) ** 2)(x)
assert torch.allclose(penalty_step(), by_func)  # the fix: eager mode

# %%
# ``grad can be implicitly created only for scalar outputs``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``.backward()`` or :func:`torch.autograd.grad` was asked for the
# derivative of a tensor with more than one element, without saying which
# combination of its elements to differentiate. In second derivatives, that
# tensor is often the first gradient itself. **Fix:** reduce it to a scalar
# (``.sum()``, a penalty, a loss), or pass the vector :math:`v` of a
# vector-Jacobian product as ``grad_outputs`` (the argument ``gradient`` of
# ``.backward()``; ones give the Hessian's row sums, the second derivative
# only for an elementwise function). :ref:`Lesson 01 <lesson-saving-inputs>`

(grad,) = torch.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
message = message_of(RuntimeError, lambda: torch.autograd.grad(grad, x))
assert message == "grad can be implicitly created only for scalar outputs"
(second,) = torch.autograd.grad(grad, x, grad_outputs=torch.ones_like(grad))
assert torch.allclose(second, 6 * x)

# %%
# ``grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# The previous message's counterpart in :func:`torch.func.grad`. **Cause:**
# the function it differentiates returned a tensor that is not
# 0-dimensional: in second derivatives, ``grad(grad(f))``, whose inner
# ``grad`` returns a gradient of ``x``'s shape. **Fix:** ``torch.func.jacrev``
# of it, as the message suggests, for the Hessian.
# :ref:`Lesson 09 <lesson-torch-func>`

first = torch.func.grad(lambda t: (t**3).sum())  # returns 3 x**2, a vector
message = message_of(RuntimeError, lambda: torch.func.grad(first)(x))
assert "Expected f(*args) to return a scalar Tensor, got tensor with 1 dims" in message
assert torch.allclose(torch.func.jacrev(first)(x), torch.diag(6 * x))

# %%
# ``The Tensor returned by the function given to hessian should contain a single element``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# The counterpart of the last two in
# :func:`torch.autograd.functional.hessian`. **Cause:** the function it
# differentiates returned more than one element, such as a
# residual for each point, or a loss without its ``.sum()``. **Fix:** reduce
# it to a scalar for the Hessian of the sum; for the Hessian of each element,
# :func:`torch.func.hessian`, which takes any output shape and puts the
# output's dimensions first. :ref:`Lesson 09 <lesson-torch-func>`

message = message_of(RuntimeError, lambda: torch.autograd.functional.hessian(lambda t: t**3, x))
assert "function given to hessian should contain a single element" in message
summed = torch.autograd.functional.hessian(lambda t: (t**3).sum(), x)
each = torch.func.hessian(lambda t: t**3)(x)  # each[i] is the Hessian of x[i]**3
assert torch.allclose(summed, torch.diag(6 * x)) and torch.allclose(each.sum(0), summed)
assert each.shape == (3, 3, 3) and torch.allclose(each[0, 0, 0], 6 * x[0])

# %%
# ``Mismatch in shape: grad_output[0] has a shape of ... and output[0] has a shape of ...``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** the ``grad_outputs`` passed for an output (``grad_output`` in
# the message, ``gradient`` for ``.backward()``) has another shape than that
# output. **Fix:** give each output a
# ``grad_outputs`` of its own shape, such as ``torch.ones_like(output)``.
# :ref:`Lesson 01 <lesson-saving-inputs>`

(grad,) = torch.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
message = message_of(RuntimeError, lambda: torch.autograd.grad(grad, x, torch.ones(())))
assert message.startswith("Mismatch in shape: grad_output[0] has a shape of torch.Size([])")
assert torch.allclose(torch.autograd.grad(grad, x, torch.ones_like(grad))[0], 6 * x)

# %%
# ``One of the differentiated Tensors does not require grad``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** a tensor you differentiate with respect to does not require
# grad, so autograd recorded nothing for it. Two common cases: the input of a
# gradient penalty, made without ``requires_grad_()``; a model with frozen
# layers, ``torch.autograd.grad(loss, model.parameters())`` after
# ``requires_grad_(False)`` on some of them. **Fix:** for a tensor that you
# do mean to differentiate, call ``requires_grad_()`` on it before the
# computation that uses it; otherwise pass only the tensors that require
# grad, ``[p for p in model.parameters() if p.requires_grad]``.

model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh(), torch.nn.Linear(2, 1))
model = model.double()
model[0].requires_grad_(False)  # the first layer is frozen
penalty_input = x.detach()  # the bug: requires_grad_() forgotten
message = message_of(RuntimeError, lambda: torch.autograd.grad(model(penalty_input), penalty_input))
assert message == "One of the differentiated Tensors does not require grad"
penalty_input.requires_grad_()  # the fix, before the computation that uses it
assert torch.autograd.grad(model(penalty_input), penalty_input)[0].shape == x.shape
loss = model(x).sum()
every = list(model.parameters())
message = message_of(RuntimeError, lambda: torch.autograd.grad(loss, every, retain_graph=True))
assert message == "One of the differentiated Tensors does not require grad"
trained = [p for p in model.parameters() if p.requires_grad]
weight_grad, bias_grad = torch.autograd.grad(loss, trained)
assert torch.allclose(weight_grad, model[:2](x))  # what the last layer receives
assert torch.equal(bias_grad, torch.ones_like(bias_grad))

# %%
# ``Only Tensors of floating point and complex dtype can require gradients``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** a tensor that is not floating point was asked to require grad,
# most often one made from whole numbers (``torch.tensor([1, 2])``,
# ``torch.arange(3)``), whose dtype is ``int64``. On such a tensor,
# ``requires_grad_()`` says "only Tensors of floating point dtype can require
# gradients".
# **Fix:** make it floating point where it is made (``dtype=torch.float64``,
# as the checks want), or call ``.double()`` before ``requires_grad_()``.

message = message_of(RuntimeError, lambda: torch.tensor([1, 2], requires_grad=True))
assert message == "Only Tensors of floating point and complex dtype can require gradients"
message = message_of(RuntimeError, torch.tensor([1, 2]).requires_grad_)
assert message == "only Tensors of floating point dtype can require gradients"
assert torch.tensor([1, 2], dtype=torch.float64, requires_grad=True).is_leaf  # the fix

# %%
# ``Trying to backward through the graph a second time``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** a backward pass ran through part of a graph that an earlier one
# had freed: two passes from the same loss (say, a gradient taken with
# :func:`torch.autograd.grad`, then ``loss.backward()``), or a tensor kept
# from an earlier step, such as a recurrent network's hidden state.
# **Fix:** ``retain_graph=True`` in the earlier call (``create_graph=True``
# implies it), or ``.detach()`` what is carried from one step to the next.
# :ref:`Lesson 02 <lesson-saving-outputs>`


def grad_then_backward(**kwargs):
    loss = torch.tanh(x).sum()
    (grad,) = torch.autograd.grad(loss, x, **kwargs)
    return torch.autograd.grad(loss, x)[0]


message = message_of(RuntimeError, grad_then_backward)
assert message.startswith("Trying to backward through the graph a second time")
assert torch.allclose(grad_then_backward(retain_graph=True), 1 - torch.tanh(x) ** 2)

# %%
# ``Using backward() with create_graph=True will create a reference cycle``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# A warning. **Cause:** a call of ``.backward(create_graph=True)``, which
# stores gradients in ``.grad``. Such a gradient can carry a graph that leads
# back to the tensor that holds it, a reference cycle that can leak memory;
# PyTorch warns at the first such call of the process, whether or not it
# leaks and whatever ``.grad`` held before (the leaf below held nothing), and
# never again unless ``torch.set_warn_always(True)`` was called, so silence
# after a change proves nothing. **Fix:** compute the
# gradient with :func:`torch.autograd.grad` and ``create_graph=True``, which
# stores nothing in ``.grad`` and does not warn, as the gradient penalty of
# :ref:`lesson 10 <lesson-second-derivatives>` does. Setting the ``.grad``
# fields to ``None`` after use breaks the cycle; it does not stop the
# warning. The fix runs first below, before anything has warned:


def warnings_of(action):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        action()
    return [(w.category, str(w.message).split(" (Triggered internally")[0]) for w in caught]


leaf = x.detach().clone().requires_grad_()
assert not warnings_of(lambda: torch.autograd.grad(torch.tanh(leaf).sum(), leaf, create_graph=True))
assert leaf.grad is None  # nothing to leak yet: it warns all the same
caught = warnings_of(lambda: torch.tanh(leaf).sum().backward(create_graph=True))
print(f"{caught[0][0].__name__}:", caught[0][1])
assert len(caught) == 1 and caught[0][0] is UserWarning
assert "will create a reference cycle" in caught[0][1]
again = warnings_of(lambda: torch.tanh(leaf).sum().backward(create_graph=True))
print("warnings from the same call, made again:", len(again))
assert not again  # once per process
leaf.grad = None  # breaks the cycle

# %%
# .. _error-index-non-leaf:
#
# ``The .grad attribute of a Tensor that is not a leaf Tensor is being accessed``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# A warning, given when ``.grad`` is read, which is ``None``. **Cause:** the
# tensor was made to require grad and then converted (``.double()``,
# ``.to(device)``), so the tensor you use is the result of a conversion, not
# a leaf, and ``.backward(create_graph=True)`` stores gradients only in
# leaves. In code that takes ``.grad`` for a second derivative, as a
# physics-informed residual may, the next line then fails on ``None``.
# **Fix:** compute the gradient with :func:`torch.autograd.grad`, which
# takes any tensor, as the previous entry advises anyway; or convert first
# and call ``requires_grad_()`` last.

points = torch.tensor([0.5, 1.0, 1.5], requires_grad=True).double()  # not a leaf
# warnings_of keeps a warning off the page (the reference cycle, if not yet given)
warnings_of(lambda: points.pow(3).sum().backward(create_graph=True))
stored = []
caught = warnings_of(lambda: stored.append(points.grad))
print(f"{caught[0][0].__name__}:", caught[0][1])
assert len(caught) == 1 and caught[0][0] is UserWarning
assert "that is not a leaf Tensor is being accessed" in caught[0][1]
assert stored == [None]
(grad,) = torch.autograd.grad(points.pow(3).sum(), points, create_graph=True)  # the fix
assert torch.allclose(torch.autograd.grad(grad.sum(), points)[0], 6 * points)
leaf_points = torch.tensor([0.5, 1.0, 1.5]).double().requires_grad_()  # the other fix
warnings_of(lambda: leaf_points.pow(3).sum().backward(create_graph=True))  # as above
assert torch.allclose(leaf_points.grad, 3 * leaf_points**2) and leaf_points.grad.requires_grad
leaf_points.grad = None  # breaks the cycle

# %%
# ``When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad()``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``torch.autograd.grad`` (or ``.backward(inputs=...)``)
# through :func:`~torch.utils.checkpoint.checkpoint` with
# ``use_reentrant=True``, as in a gradient penalty through a checkpointed
# model. ``.backward(create_graph=True)`` raises nothing, but the checkpoint
# computes its part of the gradient without a graph, so the second
# derivative lacks that part: when the leaf goes straight into the
# checkpoint and nowhere else, as below, the ``.grad`` it stores has no
# graph at all; otherwise it may have one, and the second derivative comes
# out :ref:`silently wrong <error-index-wrong>`. **Fix:**
# ``use_reentrant=False``, with which the second derivative is right.

from torch.utils.checkpoint import checkpoint


def checkpointed_tanh(t, reentrant=True):
    return checkpoint(torch.tanh, t, use_reentrant=reentrant)


message = message_of(RuntimeError, lambda: second_derivative(checkpointed_tanh))
assert message.startswith("When use_reentrant=True, torch.utils.checkpoint is incompatible")
second = second_derivative(lambda t: checkpointed_tanh(t, reentrant=False))
assert torch.allclose(second, second_derivative(torch.tanh))  # the fix
# warnings_of keeps a warning off the page (the reference cycle, if not yet given)
warnings_of(lambda: checkpointed_tanh(leaf).sum().backward(create_graph=True))
assert not leaf.grad.requires_grad  # no graph, and no error
leaf.grad = None

# %%
# ``Can't call numpy() on Tensor that requires grad``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``.numpy()`` on a tensor that requires grad while grad mode is
# on, as it is inside ``backward`` under ``create_graph=True``. **Fix:**
# ``.detach().numpy()``; then the result is untracked, so see pattern 4.
# :ref:`Lesson 05 <lesson-untracked-backward>`. Under
# :func:`torch.func.grad`, that fix meets "Cannot access data pointer of
# Tensor that doesn't have storage" (:ref:`lesson 17
# <error-index-no-storage>`).


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
# .. _error-index-mismatch:
#
# ``Jacobian mismatch for output 0 with respect to input 0``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# The numbers name the output and the input whose derivative is wrong. From
# ``gradgradcheck``, an output is a gradient that ``backward`` returns, and
# the inputs after the Function's own are its output gradients (below,
# ``input 1``, for a ``backward`` that detaches it;
# :ref:`lesson 11 <lesson-diagnosing>` counts them).
# **Cause,** from :func:`~torch.autograd.gradcheck`: the formula in
# ``backward`` is wrong. **Fix:** correct it. Or the formula is right, and the
# finite differences are not: a kink within ``eps`` of a sampled point
# (``relu`` at 0), or randomness in the forward (dropout in training mode),
# which changes the output from one evaluation to the next. **Fix:** check at
# points away from kinks (:ref:`lesson 11 <lesson-diagnosing>`); fix the
# randomness, such as by seeding the generator inside the checked function.
# The last lines below run both.
#
# **Cause,** from :func:`~torch.autograd.gradgradcheck`: the derivative of
# ``backward`` is wrong, or the finite differences are inaccurate (inputs not
# in ``float64``, a point within ``eps`` of a kink, where even a correct
# ``backward`` jumps). The check compares the derivatives of :math:`b(g, x)`
# with finite differences of the same :math:`b`, so a wrong formula made of
# PyTorch operations on the saved inputs passes it (below). A wrong formula
# shows only where double backward runs a ``backward`` you wrote: the
# Function's own, reached through an output it saved (below), or a second
# Function's (pattern 4). With an all-zero analytical Jacobian, ``backward``
# used a value cut off from the input (an intermediate of ``forward`` kept on
# ``ctx`` or saved, a ``.detach()``, part of it under ``torch.no_grad()``,
# :func:`@once_differentiable <torch.autograd.function.once_differentiable>`).
# With ``grad_outputs`` that do not require grad, a cut that leaves no result
# with a graph gives "Numerical gradient for function expected to be zero"
# instead; a view of the input made in ``forward`` still requires grad, and
# still gives this mismatch. With a nonzero one, part of ``backward`` is cut
# off, a ``backward`` that double backward runs is wrong, or a cut Function
# is checked with others that add second derivatives of their own.
# **Fix:** save inputs and outputs with
# :meth:`~torch.autograd.function.FunctionCtx.save_for_backward` and compute
# the rest in ``backward`` with PyTorch operations; check each Function on
# its own, a second Function included, with :func:`~torch.autograd.gradcheck`
# first, which finds a wrong formula; check in ``float64``, away from kinks.
# :ref:`Lesson 11 <lesson-diagnosing>`

message = message_of(GradcheckError, lambda: gradgradcheck(CubeOnCtx.apply, (x,)))
assert message.startswith("Jacobian mismatch for output 0 with respect to input 0")


class CubeGradOutDetached(Cube):
    @staticmethod
    def backward(ctx, grad_out):
        return Cube.backward(ctx, grad_out.detach())  # the bug: grad_out is cut off


message = message_of(GradcheckError, lambda: gradgradcheck(CubeGradOutDetached.apply, (x,)))
assert message.startswith("Jacobian mismatch for output 0 with respect to input 1")


class CubeWrongFormula(Cube):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 2 * x**2 * grad_out  # wrong: 3 * x**2


message = message_of(GradcheckError, lambda: gradcheck(CubeWrongFormula.apply, (x,)))
assert message.startswith("Jacobian mismatch for output 0 with respect to input 0")
print("gradgradcheck of the wrong formula:", gradgradcheck(CubeWrongFormula.apply, (x,)))


class ExpWrongFormula(Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return 2 * y * grad_out  # wrong: y * grad_out


message = message_of(GradcheckError, lambda: gradgradcheck(ExpWrongFormula.apply, (x,)))
assert message.startswith("Jacobian mismatch for output 0 with respect to input 0")
at_kink = torch.tensor([-1.0, 0.0, 1.0], dtype=torch.float64, requires_grad=True)
message = message_of(GradcheckError, lambda: gradcheck(torch.relu, (at_kink,)))
assert message.startswith("Jacobian mismatch for output 0 with respect to input 0")
assert gradcheck(torch.relu, (at_kink + 0.5,))  # away from the kink


def dropout(t, seed=None):
    if seed is None:
        return torch.nn.functional.dropout(t, p=0.5)  # a new mask at every call
    with torch.random.fork_rng():  # leaves the page's own generator as it was
        torch.manual_seed(seed)  # the same mask at every call
        return torch.nn.functional.dropout(t, p=0.5)


message = message_of(GradcheckError, lambda: gradcheck(dropout, (x,)))
assert message.startswith("Jacobian mismatch for output 0 with respect to input 0")
assert dropout(torch.ones(3), seed=0).any() and gradcheck(lambda t: dropout(t, seed=0), (x,))

# %%
# .. _error-index-expected-zero:
#
# ``Numerical gradient for function expected to be zero``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** no output of the checked function requires grad, yet the
# outputs change when the input does. Both checks leave out every output that
# does not require grad, and raise this message only when none is left. From
# :func:`~torch.autograd.gradgradcheck`, the outputs are ``backward``'s
# results, and none has a graph: code outside PyTorch, a backward run wholly
# under ``torch.no_grad()``, or one whose results are detached; or a cut of
# the Jacobian mismatch entry that leaves no result with a graph, with
# ``grad_outputs`` that do not require grad (below). From
# :func:`~torch.autograd.gradcheck`, every output of the function itself is
# detached or marked non-differentiable. One gradient without a graph next to
# one with a graph passes both checks: see
# :ref:`the silent symptom <error-index-no-graph>`.
# **Fix:** for code outside PyTorch, pattern 4, a second Function for the
# backward (:ref:`lesson 05 <lesson-untracked-backward>`); otherwise remove the
# ``no_grad``, the ``detach`` or the mark. For a cut, pass ``grad_outputs``
# that require grad, as the default ones do: the check then reports the
# Jacobian mismatch, as for ``CubeOnCtx`` in that entry.


class CubeAllNumpy(Cube):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return torch.as_tensor(3 * np.square(x.detach().numpy()) * grad_out.detach().numpy())


message = message_of(GradcheckError, lambda: gradgradcheck(CubeAllNumpy.apply, (x,)))
assert message == "Numerical gradient for function expected to be zero"
v = torch.ones_like(x)  # an output gradient that does not require grad
message = message_of(GradcheckError, lambda: gradgradcheck(CubeOnCtx.apply, (x,), (v,)))
assert message == "Numerical gradient for function expected to be zero"

# %%
# ``Backward is not reentrant``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** two runs of ``backward`` on the same input and output gradient
# gave different results. A common cause is a ``backward`` that is
# nondeterministic on a GPU: atomic additions in a CUDA kernel, your own or a
# built-in one such as ``index_add``, ``scatter_add`` or the backward of
# ``grid_sample`` on CUDA (PyTorch's message links to the list in
# ``torch.use_deterministic_algorithms``; not run here, as this page is
# built on a CPU). **Fix:** a deterministic kernel, or ``nondet_tol`` set just
# above that noise. Other causes are usually bugs, which raising
# ``nondet_tol`` until the check passes would hide: ``backward`` changes
# state it keeps on ``ctx`` (a counter, a tensor it updates), which the
# default mode catches; or it changes the incoming
# gradient in place (:ref:`rule 3 of lesson 06 <lesson-extending-rules>`),
# which the default mode of :func:`~torch.autograd.gradcheck` missed below and
# ``fast_mode=True`` caught (``gradgradcheck`` stops it with another
# message: :ref:`lesson 16 <error-index-leaf-in-place>`). **Fix:** a ``backward`` that
# changes nothing but its result. Below, random noise in ``backward`` stands
# in for the GPU's nondeterminism. :ref:`Lesson 11 <lesson-diagnosing>`


class CubeJittery(Cube):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * grad_out * (1 + 1e-12 * torch.randn_like(x))


message = message_of(GradcheckError, lambda: gradcheck(CubeJittery.apply, (x,)))
assert message.startswith("Backward is not reentrant")
assert "use_deterministic_algorithms" in message
assert gradcheck(CubeJittery.apply, (x,), nondet_tol=1e-10)  # just above the noise


class CubeCountsCalls(Cube):
    @staticmethod
    def backward(ctx, grad_out):
        ctx.calls = getattr(ctx, "calls", 0) + 1  # state kept on ctx
        return Cube.backward(ctx, grad_out) / ctx.calls  # the bug: it changes the result


class CubeGradInPlace(Cube):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out.mul_(3 * x**2)  # the bug: changes the incoming gradient


message = message_of(GradcheckError, lambda: gradcheck(CubeCountsCalls.apply, (x,)))
assert message.startswith("Backward is not reentrant")
assert gradcheck(CubeGradInPlace.apply, (x,))  # the default mode misses it
message = message_of(GradcheckError, lambda: gradcheck(CubeGradInPlace.apply, (x,), fast_mode=True))
assert message.startswith("Backward is not reentrant")

# %%
# ``Input #0 requires gradient and is not a double precision floating point``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# A warning, usually followed by a Jacobian mismatch, even for a correct
# Function (below). **Cause:** the checks ran in ``float32``, where finite
# differences are too coarse. **Fix:** check in ``float64``.
# :ref:`Lesson 01 <lesson-saving-inputs>`

x32 = x.float().detach().requires_grad_()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    message = message_of(GradcheckError, lambda: gradcheck(Cube.apply, (x32,)))
print("UserWarning:", caught[0].message)
assert caught[0].category is UserWarning
assert "is not a double precision floating point" in str(caught[0].message)
assert message.startswith("Jacobian mismatch for output 0 with respect to input 0")
assert gradcheck(Cube.apply, (x,))  # float64 passes

# %%
# ``gradcheck expects at least one input tensor to require gradient``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** no input given to the check requires grad: a tensor made
# without ``requires_grad=True``, or detached on its way in. **Fix:** pass
# inputs made with ``requires_grad=True``, or call ``requires_grad_()`` on
# them. :ref:`Lesson 01 <lesson-saving-inputs>`

message = message_of(ValueError, lambda: gradcheck(Cube.apply, (x.detach(),)))
assert message.startswith("gradcheck expects at least one input tensor to require gradient")
assert gradcheck(Cube.apply, (x.detach().requires_grad_(),))

# %%
# ``The 0th input has a dimension with stride 0``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** an input made with ``expand`` (or ``broadcast_to``), whose
# elements share memory: finite differences cannot move one without the
# others. **Fix:** pass ``.contiguous()`` (or ``.clone()``) of it, as the
# message says.

expanded = torch.full((1,), 1.5, dtype=torch.float64).expand(3).requires_grad_()
message = message_of(RuntimeError, lambda: gradcheck(Cube.apply, (expanded,)))
assert message.startswith("The 0th input has a dimension with stride 0")
assert gradcheck(Cube.apply, (expanded.contiguous(),))

# %%
# Next, :ref:`lesson 16 <lesson-error-index-function>`: the messages that
# point to a mistake in a Function itself, in what its ``backward`` returns,
# in ``ctx``, in a change in place or in its forward mode.
