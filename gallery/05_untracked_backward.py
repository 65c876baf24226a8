r"""
.. _lesson-untracked-backward:

Pattern 4: a backward autograd cannot track
===========================================

When ``backward`` computes with code that autograd cannot see, the first
derivative can still be right: you wrote it. But that code leaves no graph,
so there is no second derivative. Such code includes NumPy, SciPy, and
compiled code that reads the tensors' memory directly. A C++ function bound
with pybind11 that calls PyTorch's own (ATen) operations is recorded like
Python code; :ref:`lesson 12 <lesson-custom-ops>` shows operators registered
with the dispatcher. This lesson shows how the second derivative fails, what
``once_differentiable`` catches, and the cure: a second Function.
"""

# %%
# A cube computed with NumPy
# --------------------------
#
# :math:`f(x) = x^3` and :math:`f'(x) = 3x^2`, both in NumPy. ``.numpy()``
# refuses a tensor that requires grad while grad mode is on, and
# :ref:`lesson 01 <lesson-saving-inputs>` showed that ``backward`` runs with
# grad mode on under ``create_graph=True``. So ``backward`` needs
# ``.detach()``:

import numpy as np
import torch

x = torch.tensor([-1.0, 0.5, 2.0], dtype=torch.float64, requires_grad=True)
with torch.no_grad():
    print("grad mode off:", x.numpy())
try:
    x.numpy()
except RuntimeError as error:
    print("grad mode on: ", error)
    numpy_error = str(error)
assert "Can't call numpy() on Tensor that requires grad" in numpy_error


class CubeNumpy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.as_tensor(np.power(x.detach().numpy(), 3))

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        result = 3 * np.square(x.detach().numpy()) * grad_out.detach().numpy()
        return torch.as_tensor(result)


# %%
# The first derivative is right; the second is lost
# -------------------------------------------------
#
# Even with ``create_graph=True``, ``grad_x`` has no ``grad_fn``: NumPy made
# it. :func:`~torch.autograd.gradcheck` passes and
# :func:`~torch.autograd.gradgradcheck` fails: the gradient does not require
# grad, so it expects a zero Jacobian.

from torch.autograd import gradcheck, gradgradcheck
from torch.autograd.gradcheck import GradcheckError

(grad_x,) = torch.autograd.grad(CubeNumpy.apply(x).sum(), x, create_graph=True)
print("grad_x:", grad_x, "grad_fn:", grad_x.grad_fn)
assert torch.allclose(grad_x, 3 * x**2) and grad_x.grad_fn is None

torch.manual_seed(0)
inputs = (torch.randn(4, dtype=torch.float64, requires_grad=True),)
assert gradcheck(CubeNumpy.apply, inputs)
try:
    gradgradcheck(CubeNumpy.apply, inputs)
    message = ""
except GradcheckError as error:
    message = str(error)
    print("gradgradcheck:", message)
assert message == "Numerical gradient for function expected to be zero"

# %%
# When another term of a larger computation reaches ``x``, the untracked part
# silently counts as zero. For :math:`h(x) = x^3 + x^2`, with only the cube in
# NumPy, autograd returns :math:`h''(x) = 2` instead of :math:`6x + 2`:


def second_derivative(cube, x):
    (grad,) = torch.autograd.grad((cube(x) + x**2).sum(), x, create_graph=True)
    return torch.autograd.grad(grad.sum(), x)[0]


wrong = second_derivative(CubeNumpy.apply, x)
print("h''(x):", wrong, "expected:", 6 * x.detach() + 2)
assert torch.equal(wrong, torch.full_like(x, 2.0))

# %%
# ``once_differentiable``, and where it stops protecting you
# ----------------------------------------------------------
#
# :func:`@once_differentiable <torch.autograd.function.once_differentiable>`
# declares that ``backward`` has no derivative. It runs ``backward`` with grad
# mode off. Then, if grad mode is on (``create_graph=True``) and an incoming
# gradient requires grad, it returns detached aliases of the results (new
# tensors that share their memory), attached to an error node that raises
# when a backward pass runs it.

from torch.autograd.function import once_differentiable


class CubeOnce(CubeNumpy):
    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        return CubeNumpy.backward(ctx, grad_out)


# what the mark returns when grad mode is on: an alias, on an error node
identity = once_differentiable(lambda ctx, grad_out: grad_out)
incoming = torch.ones(3, requires_grad=True)
alias = identity(None, incoming)
assert alias is not incoming and alias.data_ptr() == incoming.data_ptr()
assert type(alias.grad_fn).__name__ == "Error"


def penalty(cube):
    """A gradient penalty: the squared norm of a gradient (WGAN-GP's is (norm - 1) ** 2)."""
    (grad,) = torch.autograd.grad(torch.tanh(cube(x)).sum(), x, create_graph=True)
    return grad.pow(2).sum()


# %%
# What happens next depends on the case:
#
# 1. ``.backward()`` without ``inputs`` runs every node that leads to a leaf,
#    the error node too: the clear error.
# 2. With explicit inputs (:func:`torch.autograd.grad`, or
#    ``.backward(inputs=...)``), autograd runs only the nodes on paths to
#    them. The error node hangs off those aliases, not off ``x``, so it
#    never runs: an error, ``None`` or a silently wrong result, as in
#    :ref:`lesson 04 <ctx-mistake-in-real-code>`. Unlike lesson 04's
#    constants, an untracked ``backward`` also loses the path through the
#    incoming gradient.
# 3. With an incoming gradient that does not require grad (the ones from
#    ``sum``), there is no error node at all: :math:`h''` is silently wrong
#    again.

try:
    penalty(CubeOnce.apply).backward()
except RuntimeError as error:
    print("1.", error)
    once_error = str(error)
try:
    torch.autograd.grad(penalty(CubeOnce.apply), x)
except RuntimeError as error:
    print("2.", error)
    unused_error = str(error)
missing = torch.autograd.grad(penalty(CubeOnce.apply), x, allow_unused=True)[0]
x.grad = None
penalty(CubeOnce.apply).backward(inputs=[x])
print("2. allow_unused=True:", missing, "| .backward(inputs=[x]), x.grad:", x.grad)
(partial,) = torch.autograd.grad(penalty(lambda t: CubeOnce.apply(t) + t**2), x)
(full,) = torch.autograd.grad(penalty(lambda t: t**3 + t**2), x)
# CubeNumpy's backward leaves no graph: it loses 6x * g and the path through the incoming g
(held,) = torch.autograd.grad(penalty(lambda t: CubeNumpy.apply(t) + t**2), x)
print("2. with x**2 added:", partial.round(decimals=4), "expected:", full.round(decimals=4))
print("3. h''(x):", second_derivative(CubeOnce.apply, x))

assert "marked with @once_differentiable" in once_error
assert "appears to not have been used in the graph" in unused_error
assert missing is None and x.grad is None
assert torch.allclose(partial, held) and not torch.allclose(partial, full)
# sphinx_gallery_start_ignore
# Hidden on the page: the comment on held. With b = 3x^2 g, the cube's backward, held
# equals the penalty with b detached, and not the one that keeps b's path through g.


def penalty_of(b):
    g = 1 - torch.tanh(x**3 + x**2) ** 2  # the incoming gradient
    return (b(g) + 2 * x * g).pow(2).sum()


(no_path,) = torch.autograd.grad(penalty_of(lambda g: (3 * x**2 * g).detach()), x)
(path_g,) = torch.autograd.grad(penalty_of(lambda g: 3 * x.detach() ** 2 * g), x)
assert torch.allclose(full, torch.autograd.grad(penalty_of(lambda g: 3 * x**2 * g), x)[0])
assert torch.allclose(held, no_path) and not torch.allclose(held, path_g)
# sphinx_gallery_end_ignore
assert torch.equal(second_derivative(CubeOnce.apply, x), torch.full_like(x, 2.0))

# %%
# The test to rely on is
# :func:`~torch.autograd.gradgradcheck`, which fails for the marked Function
# too: it asks with explicit inputs, as in case 2, and compares with finite
# differences. Mark only a ``backward`` that is not differentiable:
# :ref:`lesson 07 <lesson-custom-layer>` shows what the mark costs on one that
# is.

try:
    gradgradcheck(CubeOnce.apply, inputs)
    message = ""
except GradcheckError as error:
    message = str(error)
print("gradgradcheck:", message.splitlines()[0])
assert message.startswith("Jacobian mismatch for output 0 with respect to input 0")

# %%
# The cure: the backward is a Function too
# ----------------------------------------
#
# The function that double backward differentiates
# (:ref:`lesson 01 <backward-as-a-function>`), :math:`b(g, x) = 3x^2 g`,
# becomes a second Function. Its own backward returns the derivatives with
# respect to both of its inputs, given the gradient :math:`\bar{b}` of its
# result:
#
# .. math::
#
#    \bar{g} = 3x^2 \, \bar{b}, \quad \bar{x} = 6x \, g \, \bar{b}


class CubeGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, grad_out, x):
        ctx.save_for_backward(grad_out, x)
        result = 3 * np.square(x.detach().numpy()) * grad_out.detach().numpy()
        return torch.as_tensor(result)

    @staticmethod
    def backward(ctx, grad_b):
        grad_out, x = ctx.saved_tensors
        return 3 * x**2 * grad_b, 6 * x * grad_out * grad_b


class Cube(CubeNumpy):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return CubeGrad.apply(grad_out, x)


# %%
# NumPy still runs in both ``forward`` methods (the second in the first
# backward pass), where autograd never looks. What ``create_graph=True``
# records is one node, ``CubeGradBackward``: autograd names a Function's node
# after its class, plus ``Backward``. Its backward uses PyTorch operations on
# saved inputs, so third and higher derivatives are tracked by autograd itself.

(grad_x,) = torch.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
(grad2,) = torch.autograd.grad(grad_x.sum(), x, create_graph=True)
(grad3,) = torch.autograd.grad(grad2.sum(), x)
print("grad_x.grad_fn:", type(grad_x.grad_fn).__name__)
print("derivatives:", grad_x.tolist(), grad2.tolist(), grad3.tolist())
print("h''(x):", second_derivative(Cube.apply, x))
assert type(grad_x.grad_fn).__name__ == "CubeGradBackward"
assert torch.allclose(grad2, 6 * x) and torch.allclose(grad3, torch.full_like(x, 6.0))
assert torch.allclose(second_derivative(Cube.apply, x), 6 * x + 2)

# the gradient penalty now runs, and matches PyTorch's own cube
(ours,) = torch.autograd.grad(penalty(Cube.apply), x)
(reference,) = torch.autograd.grad(penalty(lambda t: t**3), x)
assert torch.allclose(ours, reference)

# %%
# Both Functions pass both checks, ``CubeGrad`` for both of its inputs; its
# :func:`~torch.autograd.gradgradcheck` covers the cube's third derivative.

assert gradcheck(Cube.apply, inputs) and gradgradcheck(Cube.apply, inputs)
pair = tuple(torch.randn(4, dtype=torch.float64, requires_grad=True) for _ in range(2))
assert gradcheck(CubeGrad.apply, pair) and gradgradcheck(CubeGrad.apply, pair)
print("Cube and CubeGrad pass gradcheck and gradgradcheck")

# %%
# In the graph, ``CubeGradBackward`` saved ``x`` and the incoming
# ``grad_out``, and leads back to ``x``.

from torchviz import make_dot

out = Cube.apply(x)
(grad_x,) = torch.autograd.grad(out.sum(), x, create_graph=True)
make_dot((grad_x, x, out), params={"x": x, "grad_x": grad_x, "out": out})

# %%
# Summary
# -------
#
# * Code that autograd cannot see leaves no graph: the first derivative is
#   right, the second is an error or, when another term reaches ``x``,
#   silently wrong.
# * :func:`~torch.autograd.function.once_differentiable` raises its clear
#   error only when a backward pass runs its error node; otherwise, rely on
#   :func:`~torch.autograd.gradgradcheck`.
# * The cure is a second Function for the backward, with a hand-written
#   backward of its own, for both of its inputs, in PyTorch operations.
#
# Next, :ref:`the rules <lesson-extending-rules>` for writing any Function,
# each with a runnable example.

# %%
# Exercise
# --------
#
# Write ``ExpNumpy``, an exponential whose forward and backward both compute
# in NumPy. The form is part of the exercise: ``backward`` returns the result
# of a second Function, as ``Cube``'s does, and no tensor is kept on ``ctx``.
# Then run ``check_exp_numpy(ExpNumpy)`` (a function that calls your Function
# works too). It tries a scalar, a vector and a non-contiguous matrix, to
# first, second and third order. It also refuses elementwise PyTorch
# operations (an exponential, a product) in ``forward`` and in the first
# backward pass, which runs the second Function's ``forward``: NumPy computes
# those. It returns quietly when your Function is right, and otherwise raises
# an ``AssertionError`` that says what is wrong. A solution follows at the
# end, apart from the exercise.


# sphinx_gallery_start_ignore
# Kept in the download: the check's helpers, which lessons 01 and 04 show.


from collections.abc import Iterable, Iterator, Mapping


def holds_tensor(value, seen=()):
    if torch.is_tensor(value):
        return True
    if isinstance(value, (type, str, bytes, Iterator)):
        return False
    if isinstance(value, Mapping):
        items = [*value.keys(), *value.values()]
    elif isinstance(value, Iterable):
        try:
            items = list(value)
        except TypeError:
            return False
    else:
        names = [getattr(c, "__slots__", ()) for c in type(value).__mro__]
        names = [n for slots in names for n in ([slots] if isinstance(slots, str) else slots)]
        items = [getattr(value, n, None) for n in names]
        items += getattr(value, "__dict__", {}).values()
    seen = (*seen, id(value))
    return any(id(item) not in seen and holds_tensor(item, seen) for item in items)


def changes_grad_out(call, x):
    outs = call(x)
    outs = outs if isinstance(outs, tuple) else (outs,)
    grads = [torch.rand_like(out) for out in outs]
    before = [grad.clone() for grad in grads]
    torch.autograd.grad(outs, x, grads)
    return not all(map(torch.equal, grads, before))


def saved_constants(node):
    saved = [t for t in node.saved_tensors if torch.is_tensor(t)]
    return [t for t in saved if t.is_floating_point() and not t.requires_grad]


def saved_views(node):
    inputs = [fn.variable for fn, _ in node.next_functions if hasattr(fn, "variable")]
    saved = [t for t in node.saved_tensors if torch.is_tensor(t)]
    return [t for t in saved if t.requires_grad and t.is_leaf and all(t is not i for i in inputs)]


# sphinx_gallery_end_ignore


def leaves_graph(call, x):
    """Whether backward, run under create_graph=True, returns a gradient with a graph."""
    try:
        (grad,) = torch.autograd.grad(call(x).sum(), x, create_graph=True)
    except RuntimeError as err:  # .numpy() on a tensor that requires grad
        return "numpy()" not in str(err)  # another error: gradgradcheck reports it
    return grad.grad_fn is not None


def returned(call, x, create_graph=False):
    """The incoming gradient (ones) and the gradient that backward returns for x."""
    grad_out = torch.ones_like(x, requires_grad=create_graph)
    kwargs = dict(create_graph=create_graph, allow_unused=True)
    return grad_out, torch.autograd.grad(call(x), x, grad_out, **kwargs)[0]


def grad_out_cut_off(call, x):
    """Whether the gradient that backward returns has no path back to grad_out."""
    try:
        grad_out, grad = returned(call, x, create_graph=True)
        return torch.autograd.grad(grad.sum(), grad_out, allow_unused=True)[0] is None
    except Exception:  # gradgradcheck's own message says enough
        return False


from torch.utils._python_dispatch import TorchDispatchMode


def elementwise_ops(run, *args):
    """The elementwise operations (exp, mul and the like) that PyTorch computes during run."""
    ops = []

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if torch.Tag.pointwise in func.tags and func.overloadpacket != torch.ops.aten.clone:
                ops.append(str(func.overloadpacket))
            return func(*args, **(kwargs or {}))

    with Record():
        run(*args)
    return ops


# holds_tensor, changes_grad_out: lesson 01's helpers; saved_views, saved_constants: lesson 04's.
def check_exp_numpy(function):
    """Return quietly if ``function`` is exp, with three derivatives right and a backward that
    returns the result of a second Function."""
    call = getattr(function, "apply", function)  # a Function, or a function
    custom_node = torch.autograd.function.BackwardCFunction
    double = torch.float64
    scalar, vector = torch.randn((), dtype=double), torch.randn(2, dtype=double)
    matrix = torch.randn(2, 2, dtype=double).t()  # not contiguous
    for x in (scalar, vector, matrix):
        x.requires_grad_()
        where = f"on a float64 input of shape {tuple(x.shape)}"
        try:
            out = call(x)
        except Exception as err:
            raise AssertionError(f"forward fails {where}: {err}") from None
        if not torch.is_tensor(out) or (out.shape, out.dtype) != (x.shape, x.dtype):
            got = type(out).__name__
            if torch.is_tensor(out):
                got = f"{str(out.dtype)[6:]} of shape {tuple(out.shape)}"
            raise AssertionError(f"forward returns {got} {where}")
        if not torch.allclose(out, torch.exp(x)):
            raise AssertionError(f"forward is not exp(x) {where}")
        if not out.requires_grad:
            message = "the output does not require grad: do not mark it non-differentiable"
            raise AssertionError(f"{message} or detach it; its gradient is the first derivative")
        if not isinstance(out.grad_fn, custom_node):
            raise AssertionError("the output does not come from a custom Function")
        kept = [name for name, value in vars(out.grad_fn).items() if holds_tensor(value)]
        if kept:
            message = f"ctx.{kept[0]} holds a tensor: save x or the returned output with"
            raise AssertionError(f"{message} ctx.save_for_backward (not a tensor made in forward)")
        try:
            none = returned(call, x)[1] is None
        except Exception:  # gradcheck reports it
            none = False
        if none:
            raise AssertionError(f"backward returns None for x {where}: did it forget return?")
        for test, order in ((gradcheck, "first"), (gradgradcheck, "second")):
            if test is gradgradcheck and changes_grad_out(call, x):
                raise AssertionError("backward changes grad_out in place: compute a new tensor")
            if test is gradgradcheck and not leaves_graph(call, x):
                if saved_constants(out.grad_fn):
                    lost = "a tensor saved in forward does not require grad (detached, or"
                    lost += " computed in forward and not returned); save x or the returned"
                    hint = "output itself, so that the second Function links back to x"
                    raise AssertionError(f"the second derivative is lost: {lost} {hint}")
                lost = "backward leaves no graph (NumPy, .detach(), torch.no_grad,"
                lost += " once_differentiable)"
                hint = "return the result of a second Function, as Cube's does, called on"
                hint += " tensors that require grad (x or the output as saved, not detached)"
                raise AssertionError(f"the second derivative is lost: {lost}; {hint}")
            try:
                test(call, (x,))
            except Exception as err:
                reason = str(err).splitlines()[0].rstrip(",")
                if "with respect to input" in reason and order == "second":
                    reason += " (input 0 is x, the others are the incoming gradients)"
                message = f"the {order} derivative fails {test.__name__} {where}: {reason}"
                if order == "second" and saved_views(out.grad_fn):
                    message += "; a tensor saved in forward is a view of x made there (x.t(),"
                    message += " x[0], a reshape): a leaf of its own, cut off from x. Save x"
                    message += " and take the view in backward"
                elif order == "second" and grad_out_cut_off(call, x):
                    message += "; the gradient that backward returns has no path back to"
                    message += " grad_out: do not detach it, and let the second Function's"
                    message += " backward return a gradient for grad_out too"
                raise AssertionError(message) from None
        (grad,) = torch.autograd.grad(call(x).sum(), x, create_graph=True)
        if not isinstance(grad.grad_fn, custom_node):
            raise AssertionError("right, but backward must return the result of a second Function")
        kept = [name for name, value in vars(grad.grad_fn).items() if holds_tensor(value)]
        if kept:
            raise AssertionError(f"ctx.{kept[0]} holds a tensor, in the second Function")
        forward_ops = elementwise_ops(call, x)
        # the first backward pass runs the second Function's forward
        backward_ops = elementwise_ops(torch.autograd.grad, call(x).sum(), x)
        first_backward = "the first backward pass (the second Function's forward)"
        for ops, what in ((forward_ops, "forward"), (backward_ops, first_backward)):
            if ops:
                message = f"right, but {what} computes with PyTorch ({', '.join(ops)})"
                raise AssertionError(f"{message}: the exercise asks for NumPy")

        # third order: b(x, g), the gradient for any g, differentiated twice
        def b(x, g):
            return torch.autograd.grad(call(x), x, g, create_graph=True)[0]

        try:
            gradgradcheck(b, (x, torch.randn_like(x, requires_grad=True)))
        except Exception as err:
            reason = str(err).splitlines()[0].rstrip(",")
            if "with respect to input" in reason:
                reason += " (outputs: the derivatives for x and g; inputs: x, g, then the"
                reason += " incoming gradient)"
            message = f"the third derivative fails gradgradcheck {where}: {reason}"
            hint = "the second Function's backward must be differentiable too"
            raise AssertionError(f"{message}; {hint}") from None


# sphinx_gallery_start_ignore
# Hidden on the page: the build runs the check on right answers in each form
# the lessons teach, and on wrong ones (solutions/prove.py).
import os
import runpy

here = os.path.dirname(check_exp_numpy.__code__.co_filename)
prove = runpy.run_path(os.path.join(here, "solutions", "prove.py"))["prove"]
prove(check_exp_numpy, "ExpNumpy")
# sphinx_gallery_end_ignore
