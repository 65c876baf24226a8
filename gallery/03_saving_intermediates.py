r"""
.. _lesson-saving-intermediates:

Pattern 3: saving intermediate results
======================================

Sometimes ``backward`` needs values that ``forward`` computed on the way,
neither inputs nor outputs. Autograd did not record how ``forward`` computed
them, so the derivative of ``backward`` with respect to the input misses
every path through them (with respect to the incoming gradient, it stays
right). That is harmless only for values whose derivative is zero, such as a
mask: :ref:`lesson 04 <safe-intermediates>` says which. This lesson shows the
two correct ways to reuse the others: return them as extra outputs, or
compute them again in ``backward``.
"""

# %%
# The hyperbolic sine
# -------------------
#
# .. math::
#
#    \sinh(x) = \frac{e^{x} - e^{-x}}{2}, \quad
#    \sinh'(x) = \cosh(x) = \frac{e^{x} + e^{-x}}{2}
#
# Backward needs the same two exponentials as forward. Forward returns them as
# extra outputs and saves those: outputs have a ``grad_fn``
# (:ref:`lesson 02 <lesson-saving-outputs>`). Backward then receives one
# gradient per output, and must add the contribution of each, using
# :math:`(e^{x})' = e^{x}` and :math:`(e^{-x})' = -e^{-x}`:
#
# .. math::
#
#    \bar{x} = \bar{s} \cosh(x) + \bar{e}_{+} e^{x} - \bar{e}_{-} e^{-x}
#
# where :math:`\bar{s}`, :math:`\bar{e}_{+}` and :math:`\bar{e}_{-}` are the
# incoming gradients. An output that nothing used gets zeros (by default;
# :ref:`lesson 06 <lesson-extending-rules>` shows how to get ``None``
# instead), so the sum needs no special case. (The formula shows the pattern,
# but loses precision near 0 and overflows sooner than ``torch.sinh``.)

import torch


class MySinh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        exp_pos = torch.exp(x)
        exp_neg = torch.exp(-x)
        ctx.save_for_backward(exp_pos, exp_neg)
        return (exp_pos - exp_neg) / 2, exp_pos, exp_neg

    @staticmethod
    def backward(ctx, grad_out, grad_exp_pos, grad_exp_neg):
        exp_pos, exp_neg = ctx.saved_tensors
        grad_x = grad_out * (exp_pos + exp_neg) / 2
        return grad_x + grad_exp_pos * exp_pos - grad_exp_neg * exp_neg


def my_sinh(x):
    """What users call: sinh, without the extra outputs."""
    out, _exp_pos, _exp_neg = MySinh.apply(x)
    return out


# %%
# The derivatives are :math:`\cosh` and :math:`\sinh`:

x = torch.tensor([-1.5, 0.0, 0.5, 2.0], dtype=torch.float64, requires_grad=True)
out = my_sinh(x)
(grad_x,) = torch.autograd.grad(out.sum(), x, create_graph=True)
(grad_grad_x,) = torch.autograd.grad(grad_x.sum(), x, retain_graph=True)
print("first derivative: ", grad_x.detach())
print("second derivative:", grad_grad_x)
assert torch.allclose(grad_x, torch.cosh(x))
assert torch.allclose(grad_grad_x, torch.sinh(x))

# sphinx_gallery_start_ignore
# Hidden on the page: the claims of the introduction and of the formula.
# Intermediates that are not outputs: db/dx misses the path through them (here
# the only one), db/dg = cosh stays right.


class SinhSavedIntermediates(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        exp_pos, exp_neg = torch.exp(x), torch.exp(-x)
        ctx.save_for_backward(exp_pos, exp_neg)
        return (exp_pos - exp_neg) / 2

    @staticmethod
    def backward(ctx, grad_out):
        exp_pos, exp_neg = ctx.saved_tensors
        return grad_out * (exp_pos + exp_neg) / 2


g = torch.ones_like(x, requires_grad=True)
(b,) = torch.autograd.grad(SinhSavedIntermediates.apply(x), x, g, create_graph=True)
db_dx, db_dg = torch.autograd.grad(b.sum(), (x, g), allow_unused=True)
assert db_dx is None and torch.allclose(db_dg, torch.cosh(x))
# The summary's condition: computed with grad mode on, they are not constants.


class SinhSavedTracked(SinhSavedIntermediates):
    @staticmethod
    def forward(ctx, x):
        with torch.enable_grad():
            exp_pos, exp_neg = torch.exp(x), torch.exp(-x)
        ctx.save_for_backward(exp_pos, exp_neg)
        return ((exp_pos - exp_neg) / 2).detach()


(b,) = torch.autograd.grad(SinhSavedTracked.apply(x), x, g, create_graph=True)
db_dx, db_dg = torch.autograd.grad(b.sum(), (x, g))
assert torch.allclose(db_dx, torch.sinh(x)) and torch.allclose(db_dg, torch.cosh(x))
# The formula, in float32 and in float64: 0 for sinh(1e-8) and sinh(1e-20),
# inf for sinh(89) and sinh(710), where torch.sinh is finite and non-zero.
for tiny, large in ((1e-8, 89.0), (1e-20, 710.0)):
    extremes = torch.tensor([tiny, large], dtype=torch.float32 if large < 100 else torch.float64)
    assert my_sinh(extremes)[0] == 0 and my_sinh(extremes)[1].isinf()
    assert torch.sinh(extremes).isfinite().all() and (torch.sinh(extremes) != 0).all()
# sphinx_gallery_end_ignore

# %%
# Why the extra gradients matter
# ------------------------------
#
# A prehook on ``MySinhBackward`` (``register_prehook``) sees the gradients
# that arrive, before autograd replaces each ``None`` (an unused output) with
# zeros.

watched, watched_pos, watched_neg = MySinh.apply(x)
assert watched.grad_fn is watched_pos.grad_fn is watched_neg.grad_fn  # one node
arrivals = []
watched.grad_fn.register_prehook(lambda grads: arrivals.append(grads))
(first,) = torch.autograd.grad(watched.sum(), x, create_graph=True)
torch.autograd.grad(first.sum(), x)
for name, grads in zip(["first pass: ", "second pass:"], arrivals):
    print(name, ["None" if g is None else g.tolist() for g in grads])

first_pass, second_pass = arrivals
assert first_pass[0] is not None and first_pass[1] is None and first_pass[2] is None
assert second_pass[0] is None
assert all(torch.allclose(g, torch.full_like(x, 0.5)) for g in second_pass[1:])

# %%
# The first pass differentiates ``out``, so only ``grad_out`` arrives. The
# second differentiates ``grad_x``, computed from the two saved exponentials,
# so all of its gradient arrives through them. A backward that drops those
# two terms keeps the right first derivative, but here gives a second
# derivative of zero. Autograd follows every step of it, and through the
# wrapper it passes ``gradcheck``, not ``gradgradcheck``: it is right at the
# values of the first pass, where the extra gradients are zero, but not as a
# function of them (the second condition of
# :ref:`lesson 01 <backward-as-a-function>`).


class ForgetfulSinh(MySinh):
    @staticmethod
    def backward(ctx, grad_out, grad_exp_pos, grad_exp_neg):
        exp_pos, exp_neg = ctx.saved_tensors
        return grad_out * (exp_pos + exp_neg) / 2


forgetful, _, _ = ForgetfulSinh.apply(x)
(forgetful_grad,) = torch.autograd.grad(forgetful.sum(), x, create_graph=True)
(forgetful_second,) = torch.autograd.grad(forgetful_grad.sum(), x)
print("second derivative, extra gradients dropped:", forgetful_second)
assert torch.allclose(forgetful_grad, torch.cosh(x)) and forgetful_grad.grad_fn is not None
assert torch.equal(forgetful_second, torch.zeros_like(x))

from torch.autograd import gradcheck, gradgradcheck
from torch.autograd.gradcheck import GradcheckError


def forgetful_sinh(x):
    out, _exp_pos, _exp_neg = ForgetfulSinh.apply(x)
    return out


torch.manual_seed(0)
inputs = (torch.randn(4, dtype=torch.float64, requires_grad=True),)
assert gradcheck(forgetful_sinh, inputs)
try:
    gradgradcheck(forgetful_sinh, inputs)
    message = ""
except GradcheckError as err:
    message = str(err)
print("gradcheck passes; gradgradcheck:", message.splitlines()[0])
assert message.startswith("Jacobian mismatch for output 0 with respect to input 0")

# %%
# The other way: compute them again in backward
# ---------------------------------------------
#
# ``forward`` may also save only ``x``, and ``backward`` compute the
# exponentials again, as recorded operations: double backward works with no
# extra outputs. The trade-off, counted below with the same formula in both
# forwards: it saves only the input, which the caller usually keeps anyway,
# instead of two new tensors. Forward and first-order backward together run
# four exponentials instead of two (``MySinh``'s backward multiplies in two
# zero gradients instead); the second pass runs fewer operations.


class SinhRecompute(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (torch.exp(x) - torch.exp(-x)) / 2

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * (torch.exp(x) + torch.exp(-x)) / 2


from collections import Counter

from torch.utils._python_dispatch import TorchDispatchMode


class CountOps(TorchDispatchMode):
    """Counts each ATen operation that runs, by name."""

    def __init__(self):
        super().__init__()
        self.ops = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops[func.overloadpacket.__name__] += 1
        return func(*args, **(kwargs or {}))


again = SinhRecompute.apply(x)
(again_grad,) = torch.autograd.grad(again.sum(), x, create_graph=True)
(again_second,) = torch.autograd.grad(again_grad.sum(), x)
assert torch.allclose(again_second, torch.sinh(x))

counts = {}
for name, function in (("extra outputs", my_sinh), ("recompute", SinhRecompute.apply)):
    with CountOps() as forward:
        y = function(x)
    saved_bytes = sum(t.nbytes for t in y.grad_fn.saved_tensors)
    with CountOps() as first:  # the first-order backward
        (grad,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    with CountOps() as second:  # the pass that differentiates grad_x
        torch.autograd.grad(grad.sum(), x)
    counts[name] = forward.ops, first.ops, second.ops
    print(
        f"{name:13}: {saved_bytes} bytes saved; exp in forward: {forward.ops['exp']},"
        f" in first-order backward: {first.ops['exp']}; zeros: {first.ops['zeros']};"
        f" ops in the second pass: {second.ops.total()}"
    )

(extra_forward, extra_first, extra_second), (again_forward, again_first, again_second) = (
    counts.values()
)
assert sum(t.nbytes for t in out.grad_fn.saved_tensors) == 2 * x.nbytes
assert sum(t.nbytes for t in again.grad_fn.saved_tensors) == x.nbytes
arithmetic = {op: n for op, n in extra_forward.items() if op != "detach"}
assert arithmetic == again_forward  # the same formula (MySinh's also runs two detach)
assert (extra_forward["exp"], extra_first["exp"], extra_first["zeros"]) == (2, 0, 2)
assert (again_forward["exp"], again_first["exp"], again_first["zeros"]) == (2, 2, 0)
assert extra_first["mul"] > again_first["mul"]  # the zero gradients are multiplied in
assert again_second.total() < extra_second.total() and again_second["exp"] == 0

# %%
# Checks and graph
# ----------------

for fn in (my_sinh, MySinh.apply, SinhRecompute.apply):
    assert gradcheck(fn, inputs) and gradgradcheck(fn, inputs)
print("gradcheck and gradgradcheck pass for all three")

# %%
# The saved exponentials hang off ``MySinhBackward``, and every path from
# ``grad_x`` leads back through that node to ``x``.

from torchviz import make_dot


def paths(node):
    """Every chain of backward nodes from ``node`` down to a leaf's node."""
    below = [n for n, _ in node.next_functions if n is not None]
    return [[node]] if not below else [[node] + p for n in below for p in paths(n)]


assert all(out.grad_fn in p and p[-1].variable is x for p in paths(grad_x.grad_fn))
make_dot((grad_x, x, out), params={"x": x, "grad_x": grad_x, "out": out})

# %%
# Summary
# -------
#
# * Values that ``forward`` computes with grad mode off (the default) and does
#   not return are constants to autograd: the derivative of ``backward`` with
#   respect to the input is then right only if theirs is zero.
# * Return them as extra outputs and save those; ``backward`` must add the
#   contribution of every output's gradient, even where a wrapper hides the
#   output.
# * Or compute them again in ``backward`` from a saved input: here one saved
#   tensor instead of two, for two more exponentials in each first-order
#   backward.
#
# Next, :ref:`the mistake <lesson-ctx-mistake>`: what happens when they are
# kept on ``ctx`` instead.

# %%
# Exercise
# --------
#
# Write ``XExp``, a Function for :math:`f(x) = x e^{x}`. Its derivative
# :math:`(1 + x) e^{x}` reuses :math:`e^{x}`. The form is part of the
# exercise: return the pair :math:`(x e^{x}, e^{x})`, in that order, save
# :math:`e^{x}` as an output, and keep no tensor on ``ctx``. Then run
# ``check_x_exp(XExp)``. It checks both derivatives with both outputs used,
# and with the first alone. A solution follows at the end.


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
def check_x_exp(function):
    """Return quietly if ``function`` returns (x * exp(x), exp(x)), saves exp(x), and has both
    derivatives right."""
    call = getattr(function, "apply", function)  # a Function, or a function
    double = torch.float64
    scalar, vector = torch.randn((), dtype=double), torch.randn(2, dtype=double)
    matrix = torch.randn(2, 2, dtype=double).t()  # not contiguous
    for x in (scalar, vector, matrix):
        x.requires_grad_()
        where = f"on a float64 input of shape {tuple(x.shape)}"
        try:
            outs = call(x)
        except Exception as err:
            raise AssertionError(f"forward fails {where}: {err}") from None
        if not isinstance(outs, tuple) or len(outs) != 2:
            message = "forward must return two tensors, (x * exp(x), exp(x))"
            raise AssertionError(f"{message}; if you passed a wrapper, pass XExp itself")
        expected = {"x * exp(x)": x * torch.exp(x), "exp(x)": torch.exp(x)}
        for got, (name, value) in zip(outs, expected.items()):
            if not torch.is_tensor(got) or (got.shape, got.dtype) != (x.shape, x.dtype):
                what = type(got).__name__
                if torch.is_tensor(got):
                    what = f"{str(got.dtype)[6:]} of shape {tuple(got.shape)}"
                raise AssertionError(f"forward returns {what} for {name} {where}")
            if not torch.allclose(got, value):
                raise AssertionError(f"forward is not {name} {where}")
        out, exp = outs
        if not out.requires_grad:
            message = "x * exp(x) does not require grad: do not mark it non-differentiable"
            raise AssertionError(f"{message}, and call XExp through .apply")
        if not exp.requires_grad:
            message = "exp(x) does not require grad: do not mark it non-differentiable"
            raise AssertionError(f"{message}; its gradient carries part of the second derivative")
        if not isinstance(out.grad_fn, torch.autograd.function.BackwardCFunction):
            raise AssertionError("the output does not come from a custom Function")
        kept = [name for name, value in vars(out.grad_fn).items() if holds_tensor(value)]
        if kept:
            message = f"ctx.{kept[0]} holds a tensor"
            raise AssertionError(f"{message}: save it with ctx.save_for_backward")
        saved = out.grad_fn.saved_tensors
        saves_output = any(
            t is not None and t.grad_fn is out.grad_fn and torch.equal(t, exp) for t in saved
        )
        not_output = "; the exp(x) you saved is not the output you returned"
        not_output = "" if saves_output else not_output + " (a copy, a second exp, or detached)"
        fault = graph_fault(call, x, where)
        if fault:
            raise AssertionError(fault + not_output)
        for fn, used in ((call, "both outputs"), (lambda t: call(t)[0], "the first output alone")):
            for test, order in ((gradcheck, "first"), (gradgradcheck, "second")):
                if test is gradgradcheck and changes_grad_out(fn, x):
                    raise AssertionError("backward changes grad_out in place: compute a new tensor")
                try:
                    test(fn, (x,))
                except Exception as err:
                    reason = str(err).splitlines()[0].rstrip(",")
                    if "with respect to input" in reason and order == "second":
                        reason += " (input 0 is x, the others are the incoming gradients)"
                    if order == "second":
                        reason += not_output
                    message = f"the {order} derivative fails {test.__name__} {where}, with {used}"
                    raise AssertionError(f"{message}: {reason}") from None
        if not saves_output:
            raise AssertionError("right, but this exercise asks you to save exp(x), the output")


# sphinx_gallery_start_ignore
# Hidden on the page: the build runs the check on right answers in each form
# the lessons teach, and on wrong ones (solutions/prove.py).
import os
import runpy

here = os.path.dirname(check_x_exp.__code__.co_filename)
prove = runpy.run_path(os.path.join(here, "solutions", "prove.py"))["prove"]
prove(check_x_exp, "XExp")
# sphinx_gallery_end_ignore
