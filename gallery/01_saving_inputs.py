r"""
.. _lesson-saving-inputs:

Pattern 1: saving the inputs
============================

The simplest Function that supports double backward needs only its inputs in
``backward``. Save them with ``ctx.save_for_backward`` (``ctx`` is the object
that one call's ``forward`` and ``backward`` share), write ``backward`` with
PyTorch operations that autograd can differentiate, and autograd
differentiates ``backward`` itself: the second derivative needs no more code.
This lesson shows why, and gives the model that later lessons use.
"""

# %%
# Two facts about custom Functions
# --------------------------------
#
# * **Forward is not recorded.** ``forward`` runs with grad mode off. When it
#   returns, if grad mode is on and an input requires grad, the Function's
#   ``backward`` becomes the ``grad_fn`` of each floating-point or complex
#   output (one node for all of them; an output marked non-differentiable, as
#   in :ref:`lesson 06 <lesson-extending-rules>`, gets none).
# * **Backward is recorded only when the caller asks.**
#   :func:`torch.autograd.grad` and ``.backward()`` ask under
#   ``create_graph=True``; the ``torch.func`` transforms that run backward
#   (``grad`` always, ``vjp`` and ``jacrev`` with grad mode on), for a
#   Function in the ``setup_context`` form they require (:ref:`lesson 09
#   <lesson-torch-func>`; ``Square`` below raises under them). Only then does
#   ``backward`` run with grad mode on, so what it computes from tensors
#   requiring grad is recorded.
#
# Take :math:`f(x) = x^2`, with :math:`f'(x) = 2x`. Backward needs only the
# input.

import torch


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * 2 * x


# %%
# Both facts, checked by a subclass of ``Square`` that notes the grad mode in
# each method. Only the second call asks for a graph, and only its
# gradient has a ``grad_fn``.


class SquareProbe(Square):
    grad_mode = []  # (method, torch.is_grad_enabled()) for each call

    @staticmethod
    def forward(ctx, x):
        SquareProbe.grad_mode.append(("forward", torch.is_grad_enabled()))
        return Square.forward(ctx, x)

    @staticmethod
    def backward(ctx, grad_out):
        SquareProbe.grad_mode.append(("backward", torch.is_grad_enabled()))
        return Square.backward(ctx, grad_out)


x = torch.tensor([-1.0, 0.5, 3.0], dtype=torch.float64, requires_grad=True)
probed = SquareProbe.apply(x)
(plain,) = torch.autograd.grad(probed.sum(), x, retain_graph=True)
(graphed,) = torch.autograd.grad(probed.sum(), x, create_graph=True)
print("grad mode outside:", torch.is_grad_enabled(), "| inside:", SquareProbe.grad_mode)
print("grad_fn without create_graph:", plain.grad_fn)
print("grad_fn with create_graph:   ", type(graphed.grad_fn).__name__)

probed.sum().backward()  # .backward() without create_graph: grad mode off too
x.grad = None
assert torch.is_grad_enabled()
modes = [("forward", False), ("backward", False), ("backward", True), ("backward", False)]
assert SquareProbe.grad_mode == modes
assert plain.grad_fn is None and graphed.grad_fn is not None

# no grad_fn when no input requires grad, or when grad mode is off
with torch.no_grad():
    no_grad = Square.apply(x)
assert Square.apply(x.detach()).grad_fn is None and no_grad.grad_fn is None
assert type(probed.grad_fn).__name__ == "SquareProbeBackward"

# sphinx_gallery_start_ignore
# Hidden on the page: the scope of both facts. One node for all floating-point
# and complex outputs, none for an integer output or one marked
# non-differentiable; and torch.func's grad, vjp and jacrev run backward with
# grad mode on, with no create_graph, but only in the setup_context form of
# lesson 06: Square raises under them.


class FiveOutputs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        half = x / 2
        ctx.mark_non_differentiable(half)
        return 2 * x, 3 * x, x.to(torch.complex128), half, x.argmax()

    @staticmethod
    def backward(ctx, grad_twice, grad_thrice, grad_complex, grad_half, grad_index):
        return 2 * grad_twice + 3 * grad_thrice + grad_complex.real


twice, thrice, complex_, half, index = FiveOutputs.apply(x)
assert twice.grad_fn is not None and twice.grad_fn is thrice.grad_fn is complex_.grad_fn
assert half.grad_fn is None and index.grad_fn is None


class FuncSquare(torch.autograd.Function):
    grad_mode = []  # torch.is_grad_enabled() in each backward

    @staticmethod
    def forward(x):
        return x**2

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, grad_out):
        FuncSquare.grad_mode.append(torch.is_grad_enabled())
        (x,) = ctx.saved_tensors
        return grad_out * 2 * x


torch.func.grad(lambda t: FuncSquare.apply(t).sum())(x.detach())
torch.func.vjp(FuncSquare.apply, x.detach())[1](torch.ones_like(x))
torch.func.jacrev(FuncSquare.apply)(x.detach())
assert FuncSquare.grad_mode == [True, True, True]
try:
    torch.func.grad(lambda t: Square.apply(t).sum())(x.detach())
    refused = ""
except RuntimeError as err:
    refused = str(err)
assert "it must override the setup_context staticmethod" in refused
# sphinx_gallery_end_ignore

# %%
# .. _backward-as-a-function:
#
# The model: backward is a function of two tensors
# ------------------------------------------------
#
# ``backward`` computes :math:`b(g, x) = 2xg` from the incoming gradient
# :math:`g` and the saved input :math:`x`: the vector-Jacobian product of
# :math:`f`. When ``backward`` is recorded, the gradient it returns is linked
# to both (to those that require grad), so a second backward pass
# differentiates :math:`b` with respect to :math:`x` and to :math:`g`: that
# is double backward. It is right only when both hold:
#
# * autograd can follow every step of ``backward`` whose derivative is not
#   zero (the next lessons show what hides a step, and which may be hidden), and
# * :math:`b` is a correct vector-Jacobian product for every output of the
#   Function, as a function of both :math:`x` and :math:`g`, not only at the
#   values of the first pass.
#
# Here both hold, and the two derivatives of :math:`b(g, x) = 2xg` are
# :math:`2g` and :math:`2x`:

g = torch.tensor([1.0, 2.0, -1.0], dtype=torch.float64, requires_grad=True)
out = Square.apply(x)
(b,) = torch.autograd.grad(out, x, grad_outputs=g, create_graph=True)
(db_dx, db_dg) = torch.autograd.grad(b.sum(), (x, g))
print("b:    ", b.detach())
print("db/dx:", db_dx)
print("db/dg:", db_dg)
assert torch.equal(b, 2 * x * g)
assert torch.equal(db_dx, 2 * g) and torch.equal(db_dg, 2 * x)

# %%
# With :math:`g` fixed to ones (the ``.sum()`` of the output), differentiating
# the gradient again gives :math:`f''(x) = 2`. It works because what
# ``backward`` reads from ``ctx.saved_tensors`` keeps ``x``'s place in the
# graph (here it is ``x`` itself), so the recorded ``grad_out * 2 * x`` is
# linked to ``x``. An input made by recorded
# operations, with a ``grad_fn`` of its own (not a *leaf*), works too.

(grad_x,) = torch.autograd.grad(out.sum(), x, create_graph=True)
(grad_grad_x,) = torch.autograd.grad(grad_x.sum(), x, retain_graph=True)
print("second derivative:", grad_grad_x)
assert out.grad_fn.saved_tensors[0] is x
assert torch.equal(grad_x, 2 * x)
assert torch.equal(grad_grad_x, torch.full_like(x, 2.0))

y = 3 * x  # not a leaf: d2/dx2 (3x)^2 = 18
(grad_y,) = torch.autograd.grad(Square.apply(y).sum(), x, create_graph=True)
(second,) = torch.autograd.grad(grad_y.sum(), x)
assert torch.equal(second, torch.full_like(x, 18.0))

# %%
# Checking it: gradcheck and gradgradcheck
# ----------------------------------------
#
# :func:`~torch.autograd.gradcheck` compares the Jacobian that ``backward``
# gives with finite differences of ``forward``.
# :func:`~torch.autograd.gradgradcheck` does the same one level up: it
# differentiates :math:`b(g, x)` through the recorded graph, with respect to
# both :math:`x` and a random :math:`g`, and compares with finite differences
# of :math:`b`. By default each returns ``True``, or raises
# :exc:`~torch.autograd.gradcheck.GradcheckError` on a mismatch; an error
# inside the Function passes through. Run them in ``float64``:
# finite differences divide by a tiny step and magnify rounding errors. Here
# the same correct Function fails in ``float32``, as PyTorch warns.

import warnings

from torch.autograd import gradcheck, gradgradcheck
from torch.autograd.gradcheck import GradcheckError

torch.manual_seed(0)
x64 = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
assert gradcheck(Square.apply, (x64,)) and gradgradcheck(Square.apply, (x64,))
print("float64: gradcheck and gradgradcheck pass")


class Broken(Square):
    @staticmethod
    def backward(ctx, grad_out):
        raise ValueError("an error inside backward")


try:
    gradcheck(Broken.apply, (x64,))
except ValueError as err:  # not turned into a GradcheckError
    passed_through = str(err)
assert passed_through == "an error inside backward"

x32 = x64.detach().float().requires_grad_()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        gradcheck(Square.apply, (x32,))
        failed = False
    except GradcheckError as err:
        failed = True
        print("float32:", str(err).splitlines()[0])
warned = [str(w.message) for w in caught if "will likely fail" in str(w.message)]
print("warning:", warned[0])
assert failed and warned

# %%
# Reading the graphs
# ------------------
#
# ``torchviz.make_dot`` draws the graph behind the tensors you pass it
# (``params`` names them); this site redraws it. Grey boxes are
# backward nodes (``AccumulateGrad`` stands for a leaf that requires grad).
# Rounded boxes are tensors: **blue**, a leaf that requires grad; **green**,
# another tensor passed to ``make_dot``; **orange**, another tensor that a
# custom Function saved. A dashed line joins a Function's node to each tensor
# it saved. Arrows run from inputs to results. Run locally, ``make_dot`` draws
# square boxes and solid lines, colours a saved leaf orange, and leaves a
# saved output or intermediate unnamed.
#
# Below, the path from ``x`` through ``MulBackward0`` to ``grad_x`` is the
# derivative :math:`2x`.

from torchviz import make_dot

graph = make_dot((grad_x, x, out), params={"x": x, "grad_x": grad_x, "out": out})
# sphinx_gallery_start_ignore
# Hidden on the page: what make_dot itself draws, as the text says. It declares
# x twice, as a leaf, then as saved, and Graphviz keeps the last colour.
import re

assert "shape=box" in graph.source and "dashed" not in graph.source
fills = re.findall(rf"\t{id(x)} \[label=\"x\n[^]]*fillcolor=(\w+)\]", graph.source)
assert fills == ["lightblue", "orange"]
# sphinx_gallery_end_ignore
graph

# %%
# Summary
# -------
#
# * Forward is not recorded. Backward is, when the caller asks for a graph
#   (``create_graph=True``): double backward differentiates :math:`b(g, x)`
#   with respect to both.
# * A saved input keeps its link to the graph, so a ``backward`` built from
#   differentiable PyTorch operations on it needs no extra work.
# * Check with :func:`~torch.autograd.gradcheck` and
#   :func:`~torch.autograd.gradgradcheck`, in ``float64``.
#
# Next, :ref:`pattern 2 <lesson-saving-outputs>`: when ``backward`` needs
# the result of ``forward``.


# %%
# Exercise
# --------
#
# Write ``Log1pSquare``, a Function for :math:`f(x) = \log(1 + x^2)`, whose
# derivative :math:`f'(x) = 2x / (1 + x^2)` needs only the input: save it
# with ``ctx.save_for_backward``, and keep no tensor on ``ctx`` (only a saved
# tensor gets autograd's in-place check and saved-tensor hooks, as
# :ref:`lesson 06 <lesson-extending-rules>` shows). Then run
# ``check_log1p_square(Log1pSquare)`` (a function that calls your Function
# works too). It returns quietly when your Function is right, and otherwise
# raises an ``AssertionError`` that says what is wrong. A solution follows at
# the end.


from collections.abc import Iterable, Iterator, Mapping


def holds_tensor(value, seen=()):
    """Whether ``value`` is a tensor, or a container or object that holds one."""
    if torch.is_tensor(value):
        return True
    if isinstance(value, (type, str, bytes, Iterator)):
        return False  # a class, text, or an iterator that reading would use up
    if isinstance(value, Mapping):
        items = [*value.keys(), *value.values()]
    elif isinstance(value, Iterable):
        try:
            items = list(value)  # a list, a tuple, a set, a deque, ...
        except TypeError:  # a 0-d NumPy array
            return False
    else:  # an object: its attributes, in __dict__ (a dataclass, ...) or __slots__
        names = [getattr(c, "__slots__", ()) for c in type(value).__mro__]
        names = [n for slots in names for n in ([slots] if isinstance(slots, str) else slots)]
        items = [getattr(value, n, None) for n in names]
        items += getattr(value, "__dict__", {}).values()
    seen = (*seen, id(value))  # an object that refers to itself
    return any(id(item) not in seen and holds_tensor(item, seen) for item in items)


def changes_grad_out(call, x):
    """Whether backward writes into the gradients it receives."""
    outs = call(x)
    outs = outs if isinstance(outs, tuple) else (outs,)
    grads = [torch.rand_like(out) for out in outs]
    before = [grad.clone() for grad in grads]
    torch.autograd.grad(outs, x, grads)
    return not all(map(torch.equal, grads, before))


def graph_fault(call, x, where):
    """Why backward's result for ``x`` cannot be differentiated again (empty if it can)."""
    outs = call(x)
    outs = outs if isinstance(outs, tuple) else (outs,)
    ones = [torch.ones_like(out) for out in outs]
    try:
        (grad,) = torch.autograd.grad(outs, x, ones, create_graph=True, allow_unused=True)
    except Exception:  # gradcheck reports it
        return ""
    if grad is None:
        return f"backward returns None for x {where}: did it forget return?"
    if grad.grad_fn is not None:
        return ""
    saved = outs[0].grad_fn.saved_tensors
    if any(t is not None and t.is_floating_point() and not t.requires_grad for t in saved):
        why = "a tensor you saved does not require grad (detached, or computed in forward)"
    else:
        why = "it was computed under torch.no_grad, in NumPy, from detached tensors, or in"
        why += " a backward marked once_differentiable (lesson 05)"
    return f"the second derivative is lost {where}: backward's result has no graph, because {why}"


def check_log1p_square(function):
    """Return quietly if ``function`` is log(1 + x**2) with both derivatives right."""
    call = getattr(function, "apply", function)  # a Function, or a function
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
        if not torch.allclose(out, torch.log1p(x**2)):
            raise AssertionError(f"forward is not log(1 + x**2) {where}")
        if not out.requires_grad:
            message = "the output does not require grad: do not mark it non-differentiable"
            raise AssertionError(f"{message}, and call the Function through .apply")
        if not isinstance(out.grad_fn, torch.autograd.function.BackwardCFunction):
            raise AssertionError("the output does not come from a custom Function")
        kept = [name for name, value in vars(out.grad_fn).items() if holds_tensor(value)]
        if kept:
            message = f"ctx.{kept[0]} holds a tensor"
            raise AssertionError(f"{message}: save it with ctx.save_for_backward")
        fault = graph_fault(call, x, where)
        if fault:
            raise AssertionError(fault)
        saved = [t for t in out.grad_fn.saved_tensors if t is not None]
        constant = any(t.is_floating_point() and not t.requires_grad for t in saved)
        for test, order in ((gradcheck, "first"), (gradgradcheck, "second")):
            if test is gradgradcheck and changes_grad_out(call, x):
                raise AssertionError("backward changes grad_out in place: compute a new tensor")
            try:
                test(call, (x,))
            except Exception as err:
                reason = str(err).splitlines()[0].rstrip(",")
                if "with respect to input" in reason and order == "second":
                    reason += " (input 0 is x, the others are the incoming gradients)"
                if order == "second" and constant:
                    reason += "; a tensor you saved does not require grad: made in forward, it"
                    reason += " is a constant to autograd (lesson 03)"
                message = f"the {order} derivative fails {test.__name__} {where}: {reason}"
                raise AssertionError(message) from None


# sphinx_gallery_start_ignore
# Hidden on the page: the build runs the check on right answers in each form
# the lessons teach, and on wrong ones (solutions/prove.py).
import os
import runpy

here = os.path.dirname(check_log1p_square.__code__.co_filename)
prove = runpy.run_path(os.path.join(here, "solutions", "prove.py"))["prove"]
prove(check_log1p_square, "Log1pSquare")
# sphinx_gallery_end_ignore
