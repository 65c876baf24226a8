r"""
.. _lesson-saving-outputs:

Pattern 2: saving the outputs
=============================

Some derivatives are easiest to write with the function's own result: the
exponential is its own derivative. A Function for it saves its *output*. This
lesson shows that an output is as safe to save as an input, and what it costs.
"""

# %%
# An exponential that saves its output
# ------------------------------------

import torch


class MyExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        result = torch.exp(x)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_out):
        (result,) = ctx.saved_tensors
        return grad_out * result


# %%
# Both derivatives equal :math:`e^{x}`:

x = torch.tensor([-1.0, 0.0, 2.0], dtype=torch.float64, requires_grad=True)
out = MyExp.apply(x)
(grad_x,) = torch.autograd.grad(out.sum(), x, create_graph=True)
(grad_grad_x,) = torch.autograd.grad(grad_x.sum(), x, retain_graph=True)
print("first derivative: ", grad_x)
print("second derivative:", grad_grad_x)
assert torch.allclose(grad_x, torch.exp(x))
assert torch.allclose(grad_grad_x, torch.exp(x))

# %%
# Why it works: an output has a grad_fn
# -------------------------------------
#
# What ``backward`` reads from ``ctx.saved_tensors`` shares the output's
# memory and has its ``grad_fn``, ``MyExpBackward``. So the recorded
# ``grad_out * result`` points to ``MyExpBackward``, and the second backward
# pass calls ``MyExp.backward`` again: the second derivative is :math:`e^{x}`
# because the first one was.

saved = out.grad_fn.saved_tensors[0]
print("saved output's grad_fn:", type(saved.grad_fn).__name__)
below = [type(node).__name__ for node, _ in grad_x.grad_fn.next_functions if node]
print("grad_x.grad_fn:", type(grad_x.grad_fn).__name__, "->", below)
assert saved.grad_fn is out.grad_fn
assert any(node is out.grad_fn for node, _ in grad_x.grad_fn.next_functions)
assert saved.data_ptr() == out.data_ptr()

# %%
# What a saved tensor costs
# -------------------------
#
# What follows holds for a saved input too, but matters more for an output,
# which callers are likelier to drop or change in place. The graph keeps the
# saved output alive, even after the caller drops ``out``, until the graph is
# freed: by a backward pass that does not retain it (``retain_graph`` defaults
# to ``create_graph``), or when nothing refers to the graph any more. A
# gradient taken with ``create_graph=True`` refers to ``MyExpBackward``, so the
# output lives as long as that gradient. And the caller must not change the
# output in place: autograd's check then makes ``backward`` raise, but it
# misses some changes, which can silently give a wrong gradient
# (:ref:`rule 4 of lesson 06 <lesson-extending-rules>`).

import weakref

kept = MyExp.apply(x)
loss = kept.sum()
node = kept.grad_fn
del kept  # the caller drops the output; the graph still holds its values
held = torch.equal(node.saved_tensors[0], torch.exp(x))
loss.backward()  # frees the graph, and the saved output with it
try:
    node.saved_tensors
    freed = ""
except RuntimeError as err:
    freed = str(err)
print("held after del:", held, "| freed by backward:", bool(freed))
assert held and "after they have already been freed" in freed

kept = MyExp.apply(x)
node = weakref.ref(kept.grad_fn)
(grad,) = torch.autograd.grad(kept.sum(), x, create_graph=True)
del kept
held = torch.equal(node().saved_tensors[0], torch.exp(x))
del grad
print("held by a create_graph gradient:", held, "| freed with it:", node() is None)
assert held and node() is None

changed = MyExp.apply(x)
changed.mul_(2)  # an in-place change of the saved output
try:
    changed.sum().backward()
    error = ""
except RuntimeError as err:
    error = str(err)
print("after an in-place change:", error.split(":")[0])
assert "modified by an inplace operation" in error


# sphinx_gallery_start_ignore
# Hidden on the page: "holds for a saved input too". Lesson 06 shows the
# changes that the check misses, on a saved output only.
class ExpSavingInput(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.exp(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.exp(x)


not_leaf = x * 1
saving_input = ExpSavingInput.apply(not_leaf)
not_leaf.mul_(2)
try:
    saving_input.sum().backward()
    error = ""
except RuntimeError as err:
    error = str(err)
assert "modified by an inplace operation" in error
# sphinx_gallery_end_ignore

# %%
# Checks and graph
# ----------------

from torch.autograd import gradcheck, gradgradcheck

torch.manual_seed(0)
inputs = (torch.randn(4, 3, dtype=torch.float64, requires_grad=True),)
assert gradcheck(MyExp.apply, inputs) and gradgradcheck(MyExp.apply, inputs)
print("gradcheck and gradgradcheck pass")

# %%
# The orange box, named ``result`` on this site only, is the saved output:
# each read gives a new tensor object, so a box of its own.

from torchviz import make_dot

again = out.grad_fn.saved_tensors[0]
print("saved is out:", saved is out, "| same object twice:", saved is again)
assert saved is not out and saved is not again

graph = make_dot((grad_x, x, out), params={"x": x, "grad_x": grad_x, "out": out})
assert '[label="\n (3)" fillcolor=orange]' in graph.source  # torchviz leaves it unnamed
graph

# %%
# Summary
# -------
#
# * Save the output when the derivative is easiest to write with it: it costs
#   no copy, and keeps its ``grad_fn``, so double backward works as for an
#   input.
# * The graph keeps it alive until freed. Changing it in place makes
#   ``backward`` raise or, when autograd's check misses the change, can
#   silently give a wrong gradient.
#
# Next, :ref:`pattern 3 <lesson-saving-intermediates>`: values that are
# neither inputs nor outputs.

# %%
# Exercise
# --------
#
# Write ``Sigmoid``, a Function for the logistic sigmoid
# :math:`\sigma(x) = 1 / (1 + e^{-x})`, whose derivative
# :math:`\sigma(x)(1 - \sigma(x))` is easiest written with the output. The form
# is part of the exercise: save the output with ``ctx.save_for_backward`` (the
# very tensor ``forward`` returns: a copy is an intermediate, as in
# :ref:`lesson 03 <lesson-saving-intermediates>`), and keep no tensor on
# ``ctx``, as in lesson 01's exercise. Then run ``check_sigmoid(Sigmoid)``.
# It also rejects a right Function that does not save its output. A solution
# follows at the end.


# sphinx_gallery_start_ignore
# Kept in the download: the check's helpers, which lesson 01 shows.


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


def graph_fault(call, x, where):
    outs = call(x)
    outs = outs if isinstance(outs, tuple) else (outs,)
    ones = [torch.ones_like(out) for out in outs]
    try:
        (grad,) = torch.autograd.grad(outs, x, ones, create_graph=True, allow_unused=True)
    except Exception:
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


# sphinx_gallery_end_ignore


# holds_tensor, changes_grad_out and graph_fault are lesson 01's helpers.
def check_sigmoid(function):
    """Return quietly if ``function`` is the sigmoid, saves its output, and has both derivatives
    right."""
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
        if not torch.allclose(out, torch.sigmoid(x)):
            raise AssertionError(f"forward is not the sigmoid {where}")
        if not out.requires_grad:
            message = "the output does not require grad: do not mark it non-differentiable"
            raise AssertionError(f"{message}, and call the Function through .apply")
        if not isinstance(out.grad_fn, torch.autograd.function.BackwardCFunction):
            raise AssertionError("the output does not come from a custom Function")
        kept = [name for name, value in vars(out.grad_fn).items() if holds_tensor(value)]
        if kept:
            message = f"ctx.{kept[0]} holds a tensor"
            raise AssertionError(f"{message}: save it with ctx.save_for_backward")
        saved = out.grad_fn.saved_tensors
        saves_output = any(t is not None and t.grad_fn is out.grad_fn for t in saved)
        not_output = "" if saves_output else "; the tensor you saved is not the output you returned"
        fault = graph_fault(call, x, where)
        if fault:
            raise AssertionError(fault + not_output)
        for test, order in ((gradcheck, "first"), (gradgradcheck, "second")):
            if test is gradgradcheck and changes_grad_out(call, x):
                raise AssertionError("backward changes grad_out in place: compute a new tensor")
            try:
                test(call, (x,))
            except Exception as err:
                reason = str(err).splitlines()[0].rstrip(",")
                if "with respect to input" in reason and order == "second":
                    reason += " (input 0 is x, the others are the incoming gradients)"
                if order == "second":
                    reason += not_output
                message = f"the {order} derivative fails {test.__name__} {where}: {reason}"
                raise AssertionError(message) from None
        if not saves_output:
            raise AssertionError("right, but this exercise asks you to save the output")


# sphinx_gallery_start_ignore
# Hidden on the page: the build runs the check on right answers in each form
# the lessons teach, and on wrong ones (solutions/prove.py).
import os
import runpy

here = os.path.dirname(check_sigmoid.__code__.co_filename)
prove = runpy.run_path(os.path.join(here, "solutions", "prove.py"))["prove"]
prove(check_sigmoid, "Sigmoid")
# sphinx_gallery_end_ignore
