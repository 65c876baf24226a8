r"""
.. _lesson-ctx-mistake:

The mistake: intermediates kept on ctx
======================================

There is a shorter way to write the sinh of the previous lesson: keep the two
exponentials as attributes of ``ctx``. The first derivative is right,
``gradcheck`` passes, and PyTorch does not warn. The second derivative is an
error or, worse, silently wrong. This lesson shows why, what it does in real
code, and which intermediates are safe to save.
"""

# %%
# The same sinh, written the wrong way
# ------------------------------------

import torch


class SinhOnCtx(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        exp_pos = torch.exp(x)
        exp_neg = torch.exp(-x)
        ctx.exp_pos = exp_pos  # the mistake: untracked values kept on ctx
        ctx.exp_neg = exp_neg
        return (exp_pos - exp_neg) / 2

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * (ctx.exp_pos + ctx.exp_neg) / 2


# %%
# The first derivative is right, and nothing warns
# ------------------------------------------------

import warnings

from torch.autograd import gradcheck, gradgradcheck
from torch.autograd.gradcheck import GradcheckError

x = torch.tensor([-1.5, 0.0, 0.5, 2.0], dtype=torch.float64, requires_grad=True)
torch.manual_seed(0)
inputs = (torch.randn(3, dtype=torch.float64, requires_grad=True),)

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    (grad_x,) = torch.autograd.grad(SinhOnCtx.apply(x).sum(), x, create_graph=True)
    first_ok = gradcheck(SinhOnCtx.apply, inputs)
print("first derivative equals cosh(x):", torch.allclose(grad_x, torch.cosh(x)))
print("gradcheck:", first_ok, "| warnings:", len(caught))
assert torch.allclose(grad_x, torch.cosh(x)) and first_ok and not caught

# %%
# gradgradcheck fails
# -------------------
#
# :func:`~torch.autograd.gradgradcheck` raises
# :exc:`~torch.autograd.gradcheck.GradcheckError`. Output gradients of ones
# (``grad_outputs``) keep the numbers easy to read.

import re

ones = torch.ones(3, dtype=torch.float64, requires_grad=True)
try:
    gradgradcheck(SinhOnCtx.apply, inputs, grad_outputs=(ones,))
    message = ""
except GradcheckError as err:
    message = str(err)
    print(message.rstrip())
print("sinh(input):", torch.sinh(inputs[0]).detach())

assert message.startswith("Jacobian mismatch for output 0 with respect to input 0")
# the two matrices of the message, as printed: numerical, then analytical
numbers = re.findall(r"-?\d+\.\d*", message.partition("numerical:")[2])
numerical, analytical = torch.tensor([float(n) for n in numbers], dtype=torch.float64).view(2, 3, 3)
assert torch.allclose(numerical, torch.diag(torch.sinh(inputs[0])).detach(), atol=1e-4)
assert torch.equal(analytical, torch.zeros_like(analytical))

# %%
# The **numerical** Jacobian, from finite differences, has the true second
# derivative :math:`\sinh` on its diagonal (compare the last line). The
# **analytical** one, from the graph that ``backward`` recorded, is zero:
# that graph says the gradient does not depend on the input.
# :ref:`Lesson 11 <lesson-diagnosing>` reads such messages in detail.
#
# Why: the values on ctx are constants
# ------------------------------------
#
# Forward is not recorded, so ``ctx.exp_pos`` and ``ctx.exp_neg`` have no
# ``grad_fn``. ``backward`` computes :math:`g \cdot (c_{+} + c_{-}) / 2` with
# two constants: the right numbers, with no link to ``x``. Here the incoming
# gradient :math:`g` (the ones from ``sum``) does not require grad either, so
# ``grad_x`` has no graph at all, and a second derivative is an error.

ctx = SinhOnCtx.apply(x).grad_fn  # a Function's node is its ctx
print("ctx.exp_pos.requires_grad:", ctx.exp_pos.requires_grad)
try:
    torch.autograd.grad(grad_x.sum(), x)
    error = ""
except RuntimeError as err:
    error = str(err)
    print("RuntimeError:", error)
assert not ctx.exp_pos.requires_grad and grad_x.grad_fn is None
assert "does not require grad and does not have a grad_fn" in error

# %%
# .. _ctx-mistake-in-real-code:
#
# In real code: a silently wrong second derivative
# ------------------------------------------------
#
# A second pass misses the terms that go through the values on ``ctx``. Only
# variables that the Function's input depends on have such terms. Take
# :math:`L = \frac{1}{2} \sum \sinh(x)^2`, whose incoming gradient is
# :math:`\sinh(x)`:
#
# .. math::
#
#    \frac{\partial L}{\partial x} = \sinh(x) \cosh(x), \quad
#    \frac{\partial^2 L}{\partial x^2} = \cosh(x)^2 + \sinh(x)^2


def second_derivative(sinh, x):
    (grad,) = torch.autograd.grad((sinh(x) ** 2).sum() / 2, x, create_graph=True)
    (grad_grad,) = torch.autograd.grad(grad.sum(), x)
    return grad.detach(), grad_grad


with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    wrong_grad, wrong = second_derivative(SinhOnCtx.apply, x)
assert not caught  # no warning in the second pass either
true_grad, true = second_derivative(torch.sinh, x)
print("SinhOnCtx: ", wrong)
print("torch.sinh:", true)

assert torch.allclose(wrong_grad, true_grad)
assert torch.allclose(true, torch.cosh(x) ** 2 + torch.sinh(x) ** 2)
assert torch.allclose(wrong, torch.cosh(x).detach() ** 2)
assert not torch.allclose(wrong, true) and torch.allclose(wrong[1], true[1])

# %%
# No error, no warning: the term :math:`\sinh(x)^2`, from differentiating
# :math:`\cosh(x)` inside ``backward``, is missing.
#
# Take a :ref:`gradient penalty <gradient-penalty>` (a loss on a gradient's
# norm, as in WGAN-GP; here its square) on :math:`v \sinh(w x + c)`. ``w``
# reaches ``grad_x`` through the chain rule's factor :math:`w` and is silently
# wrong; ``v``, only through the incoming gradient, is right. The penalty
# alone does not reach ``c``: :func:`torch.autograd.grad` raises, and
# ``.backward()`` silently leaves ``c.grad`` at ``None``. A training step adds
# the penalty to the model's loss, which uses ``c``: then ``c.grad`` silently
# lacks the penalty's part.
# PyTorch's tracker describes this trap in
# `pytorch/pytorch#58509 <https://github.com/pytorch/pytorch/issues/58509>`__
# and `#76185 <https://github.com/pytorch/pytorch/issues/76185>`__.

v = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
w = torch.tensor(1.5, dtype=torch.float64, requires_grad=True)
c = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)


def penalty(sinh):
    (grad,) = torch.autograd.grad((v * sinh(w * x + c)).sum(), x, create_graph=True)
    return grad.pow(2).sum()


def penalty_grads(sinh):
    """The penalty's .grad for v, w and c after .backward(), as a training step takes them."""
    v.grad = w.grad = c.grad = x.grad = None
    penalty(sinh).backward()
    return v.grad, w.grad, c.grad


def step_grad_c(sinh):
    """c.grad after one .backward() of the model's loss plus the penalty."""
    v.grad = w.grad = c.grad = x.grad = None
    output = v * sinh(w * x + c)
    (-output.mean() + penalty(sinh)).backward()
    return c.grad


(v_on_ctx, w_on_ctx, c_on_ctx), (v_ref, w_ref, c_ref) = map(
    penalty_grads, (SinhOnCtx.apply, torch.sinh)
)
print("v.grad, SinhOnCtx:", v_on_ctx, "| torch.sinh:", v_ref)
print("w.grad, SinhOnCtx:", w_on_ctx, "| torch.sinh:", w_ref)
print("c.grad, SinhOnCtx:", c_on_ctx, "| torch.sinh:", c_ref)
try:
    torch.autograd.grad(penalty(SinhOnCtx.apply), c)
    unreached = ""
except RuntimeError as err:
    unreached = str(err)
print("torch.autograd.grad for c, SinhOnCtx:", unreached)
c_step_on_ctx, c_step_ref = step_grad_c(SinhOnCtx.apply), step_grad_c(torch.sinh)
print("c.grad, model's loss + penalty, SinhOnCtx:", c_step_on_ctx, "| torch.sinh:", c_step_ref)
cosh, sinh = torch.cosh(w * x + c).detach(), torch.sinh(w * x + c).detach()
assert torch.allclose(v_ref, (2 * v * w**2 * cosh**2).sum())
assert torch.allclose(w_ref, (2 * v**2 * w * cosh**2 + 2 * v**2 * w**2 * cosh * sinh * x).sum())
assert torch.allclose(w_on_ctx, (2 * v**2 * w * cosh**2).sum())  # cosh(w x + c) held constant
assert torch.allclose(v_on_ctx, v_ref) and not torch.allclose(w_on_ctx, w_ref)  # the contrast
assert c_on_ctx is None and torch.allclose(c_ref, (2 * v**2 * w**2 * cosh * sinh).sum())
assert "appears to not have been used in the graph" in unreached
c_own = -(v * cosh).mean()  # the model's loss alone
assert torch.allclose(c_step_on_ctx, c_own)  # a number, without the penalty's part
assert torch.allclose(c_step_ref, c_own + c_ref)  # that part and the penalty's
assert not torch.allclose(c_step_on_ctx, c_step_ref)
v.grad = w.grad = c.grad = x.grad = None

# %%
# The graph: grad_x is cut off from x
# -----------------------------------
#
# With an incoming gradient ``grad_out`` that requires grad, like the one
# :func:`~torch.autograd.gradgradcheck` supplies, ``grad_x`` gets a graph, but
# it leads only to ``grad_out``: for ``x``, :func:`torch.autograd.grad` with
# ``allow_unused=True`` gives ``None``.

from torchviz import make_dot

out = SinhOnCtx.apply(x)
grad_out = torch.ones_like(out, requires_grad=True)
(grad_x,) = torch.autograd.grad(out, x, grad_outputs=grad_out, create_graph=True)
reached = torch.autograd.grad(grad_x.sum(), (grad_out, x), allow_unused=True, retain_graph=True)
print("derivative of grad_x for grad_out:", reached[0])
print("derivative of grad_x for x:", reached[1])
assert reached[0] is not None and reached[1] is None

make_dot((grad_x, x, out), params={"x": x, "grad_out": grad_out, "grad_x": grad_x, "out": out})

# %%
# save_for_backward does not fix it
# ---------------------------------
#
# ``forward`` runs with grad mode off, so a tensor it computes is linked to
# autograd only if it is returned as an output
# (:ref:`lesson 03 <lesson-saving-intermediates>`):
# :meth:`~torch.autograd.function.FunctionCtx.save_for_backward` does not link
# it. The saved exponentials fail the same way.


class SinhSavedIntermediates(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        exp_pos = torch.exp(x)
        exp_neg = torch.exp(-x)
        ctx.save_for_backward(exp_pos, exp_neg)  # saved, but not outputs
        return (exp_pos - exp_neg) / 2

    @staticmethod
    def backward(ctx, grad_out):
        exp_pos, exp_neg = ctx.saved_tensors
        return grad_out * (exp_pos + exp_neg) / 2


saved = SinhSavedIntermediates.apply(x).grad_fn.saved_tensors
assert not any(t.requires_grad for t in saved)  # as on ctx: constants
assert gradcheck(SinhSavedIntermediates.apply, inputs)
try:
    gradgradcheck(SinhSavedIntermediates.apply, inputs)
    message = ""
except GradcheckError as err:
    message = str(err)
    print("gradcheck passes; gradgradcheck:", message.splitlines()[0])
assert message.startswith("Jacobian mismatch for output 0 with respect to input 0")
# sphinx_gallery_start_ignore
# Hidden on the page: the summary's condition. Computed with grad mode on, the
# exponentials keep their history, on ctx or saved, and both derivatives pass.


class SinhOnCtxTracked(SinhOnCtx):
    @staticmethod
    def forward(ctx, x):
        with torch.enable_grad():
            ctx.exp_pos, ctx.exp_neg = torch.exp(x), torch.exp(-x)
        return ((ctx.exp_pos - ctx.exp_neg) / 2).detach()


class SinhSavedTracked(SinhSavedIntermediates):
    @staticmethod
    def forward(ctx, x):
        with torch.enable_grad():
            exp_pos, exp_neg = torch.exp(x), torch.exp(-x)
        ctx.save_for_backward(exp_pos, exp_neg)
        return ((exp_pos - exp_neg) / 2).detach()


for tracked in (SinhOnCtxTracked, SinhSavedTracked):
    assert gradcheck(tracked.apply, inputs) and gradgradcheck(tracked.apply, inputs)
# sphinx_gallery_end_ignore

# %%
# A view of the input made in ``forward`` (``x.t()``, ``x[0]``, a ``reshape``
# that does not copy) is cut off too. Unlike a copy, it is saved as a leaf
# that requires grad, so ``requires_grad`` does not reveal it. Save the input
# itself and take the view in ``backward``.


class SinhSavedView(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x.reshape(-1))  # x is contiguous: a view, made in forward
        return torch.sinh(x)

    @staticmethod
    def backward(ctx, grad_out):
        (saved,) = ctx.saved_tensors
        flat = saved.reshape(-1)  # the fix takes the view here
        return grad_out * torch.cosh(flat).reshape(grad_out.shape)


class SinhViewInBackward(SinhSavedView):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)  # the input itself
        return torch.sinh(x)


batch = (torch.randn(2, 3, dtype=torch.float64, requires_grad=True),)
(view,) = SinhSavedView.apply(batch[0]).grad_fn.saved_tensors
print("saved view: requires_grad", view.requires_grad, "| is_leaf", view.is_leaf)
view_passes = [
    gradgradcheck(fn.apply, batch, raise_exception=False)
    for fn in (SinhSavedView, SinhViewInBackward)
]
print("gradgradcheck, view saved:", view_passes[0], "| view taken in backward:", view_passes[1])
assert view.requires_grad and view.is_leaf and view is not batch[0]
assert view_passes == [False, True]

# %%
# .. _safe-intermediates:
#
# Which intermediates are safe to save
# ------------------------------------
#
# Treating an intermediate as a constant is exact when its derivative with
# respect to the inputs is zero: a mask such as ``x > 0``, the indices of a
# maximum or a sort, a dropout mask drawn at random. The ReLU and the maximum
# below save a mask and indices, and pass
# :func:`~torch.autograd.gradgradcheck`. Anything else computed from the
# inputs must become an output, or be computed again in ``backward``.


class ReluSavedMask(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        mask = x > 0  # an intermediate, constant wherever it has a derivative
        ctx.save_for_backward(mask)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_out):
        (mask,) = ctx.saved_tensors
        return torch.where(mask, grad_out, 0.0)


class MaxSavedIndices(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values, indices = x.max(dim=-1, keepdim=True)
        ctx.save_for_backward(indices)  # an intermediate: integers, no derivative
        ctx.shape = x.shape
        return values.squeeze(-1)

    @staticmethod
    def backward(ctx, grad_out):
        (indices,) = ctx.saved_tensors
        grad_x = grad_out.new_zeros(ctx.shape)
        return grad_x.scatter(-1, indices, grad_out.reshape(indices.shape))


passes = {
    fn.__name__: gradgradcheck(fn.apply, batch, raise_exception=False)
    for fn in (SinhSavedIntermediates, ReluSavedMask, MaxSavedIndices)
}
print("gradgradcheck passes:", passes)
assert torch.equal(ReluSavedMask.apply(batch[0]), torch.relu(batch[0]))
assert torch.equal(MaxSavedIndices.apply(batch[0]), batch[0].amax(dim=-1))
assert passes == {"SinhSavedIntermediates": False, "ReluSavedMask": True, "MaxSavedIndices": True}

# %%
# Summary
# -------
#
# * Intermediates that ``forward`` computes with grad mode off (the default),
#   kept on ``ctx`` or saved without being outputs, are cut off from the
#   inputs.
# * :func:`~torch.autograd.gradcheck` passes and nothing warns; only
#   :func:`~torch.autograd.gradgradcheck` fails.
# * Only variables that the Function's input depends on miss terms in a
#   second pass: silently wrong if anything else in the loss reaches them.
#   Otherwise they get no gradient: :func:`torch.autograd.grad` raises, and
#   ``.backward()`` silently leaves their ``.grad`` at ``None``.
# * The fix is :ref:`pattern 3 <lesson-saving-intermediates>`: return them as
#   outputs, or compute them again in ``backward``. Only an intermediate whose
#   derivative is zero, such as a mask or indices, is safe to save as it is.
#
# Next, :ref:`pattern 4 <lesson-untracked-backward>`: a backward that runs
# outside PyTorch.

# %%
# Exercise
# --------
#
# This softplus, :math:`\log(1 + e^{x})`, keeps its derivative, the sigmoid,
# on ``ctx``. Fix it as ``Softplus``, either way that :ref:`lesson 03
# <lesson-saving-intermediates>` teaches: compute the sigmoid again in
# ``backward``, or return it as a second output, with a wrapper ``softplus``
# that returns the softplus alone. Then run ``check_softplus`` on your Function
# or on your wrapper (``check_softplus(SoftplusOnCtx)`` shows the message for
# the bug).
# It tries a scalar, a vector and a non-contiguous matrix, to first and second
# order. It returns quietly when the softplus is right and keeps no tensor on
# ``ctx``, and otherwise raises an ``AssertionError`` that says what is wrong.
# A solution follows at the end, apart from the exercise.


class SoftplusOnCtx(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.sigmoid = torch.sigmoid(x)  # the bug to fix
        return torch.nn.functional.softplus(x)

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * ctx.sigmoid


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


# sphinx_gallery_end_ignore


def saved_constants(node):
    """The floating-point tensors that a Function's node saved and that do not require grad."""
    saved = [t for t in node.saved_tensors if torch.is_tensor(t)]
    return [t for t in saved if t.is_floating_point() and not t.requires_grad]


def saved_views(node):
    """The saved tensors cut off from the inputs although they require grad: views of an input
    made in forward, each a leaf of its own (an input that is a leaf is allowed)."""
    inputs = [fn.variable for fn, _ in node.next_functions if hasattr(fn, "variable")]
    saved = [t for t in node.saved_tensors if torch.is_tensor(t)]
    return [t for t in saved if t.requires_grad and t.is_leaf and all(t is not i for i in inputs)]


def extra_outputs_fail(node, x):
    """Whether node's Function has extra outputs, and fails gradcheck with all of them."""
    try:
        apply = node._forward_cls.apply  # the Function itself, when a wrapper was given
        outs = apply(x)
        return isinstance(outs, tuple) and not gradcheck(apply, (x,), raise_exception=False)
    except Exception:  # a Function that takes more than x: no diagnosis
        return False


def backward_result(call, x, create_graph=False):
    """The incoming gradients (ones) and the gradient that backward returns for x."""
    outs = call(x)
    outs = [t for t in (outs if isinstance(outs, tuple) else (outs,)) if t.requires_grad]
    grads = [torch.ones_like(t, requires_grad=create_graph) for t in outs]
    kwargs = dict(create_graph=create_graph, allow_unused=True)
    return grads, torch.autograd.grad(outs, x, grads, **kwargs)[0]


def cut_off(call, x, source):
    """Whether the gradient that backward returns, under create_graph=True, has no path back to
    x (source "x") or to one of the incoming gradients (source "grad_out")."""
    try:
        grads, grad_x = backward_result(call, x, create_graph=True)
        if grad_x.grad_fn is None:
            return True
        to = [x] if source == "x" else grads
        reached = torch.autograd.grad(grad_x.sum(), to, allow_unused=True)
        return any(r is None for r in reached)
    except Exception:  # gradgradcheck's own message says enough
        return False


def cause(call, node, x, order, reason):
    """The usual cause of a failed gradcheck, as a clause to add to its message."""
    extra = "backward's term for the extra output's gradient is missing or wrong: it must add"
    extra += " that gradient times the extra output's derivative (lesson 03)"
    if order == "first":
        return f"; {extra}" if "for output" in reason and "for output 0 " not in reason else ""
    if saved_constants(node):
        constant = "a tensor saved in forward does not require grad: computed in forward and"
        constant += " not returned, detached, or marked non-differentiable, it is a constant to"
        return f"; {constant} autograd. Save x, or the sigmoid returned as an output (lesson 03)"
    if saved_views(node):
        view = "a tensor saved in forward is a view of x made there (x.t(), x[0], a reshape):"
        return f"; {view} a leaf of its own, cut off from x. Save x and take the view in backward"
    if extra_outputs_fail(node, x):
        return f"; {extra}"
    if cut_off(call, x, "x"):
        lost = "the gradient that backward returns has no path back to x: backward detaches"
        lost += " a tensor, computes in NumPy, runs under torch.no_grad, or is marked"
        return f"; {lost} once_differentiable (lesson 05)"
    if "with respect to input 0" not in reason and cut_off(call, x, "grad_out"):
        return "; the gradient that backward returns has no path back to grad_out: do not detach it"
    return ""


# holds_tensor and changes_grad_out are lesson 01's helpers.
def check_softplus(function):
    """Return quietly if ``function`` is softplus, with both derivatives right, no tensor on ctx.

    ``function`` is a Function, or a function that calls one; it returns the
    softplus, or a tuple whose first element is the softplus.
    """
    call = getattr(function, "apply", function)
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
        out = outs[0] if isinstance(outs, tuple) else outs
        if not torch.is_tensor(out) or (out.shape, out.dtype) != (x.shape, x.dtype):
            got = type(out).__name__
            if torch.is_tensor(out):
                got = f"{str(out.dtype)[6:]} of shape {tuple(out.shape)}"
            raise AssertionError(f"forward returns {got} {where}")
        if not torch.allclose(out, torch.nn.functional.softplus(x)):
            raise AssertionError(f"forward is not the softplus {where}")
        for i, t in enumerate(outs if isinstance(outs, tuple) else (outs,)):
            if torch.is_tensor(t) and not t.requires_grad:
                name = f"output {i}" + (" (the softplus)" if i == 0 else "")
                name = name if isinstance(outs, tuple) else "the output"
                why = "is the first" if i == 0 else "carries part of the second"
                message = f"{name} does not require grad: do not mark it non-differentiable"
                raise AssertionError(f"{message} or detach it; its gradient {why} derivative")
        if not isinstance(out.grad_fn, torch.autograd.function.BackwardCFunction):
            raise AssertionError("the output does not come from a custom Function")
        kept = [name for name, value in vars(out.grad_fn).items() if holds_tensor(value)]
        if kept:
            message = f"ctx.{kept[0]} holds a tensor: keep no tensor on ctx (an input or output:"
            message += " save it with ctx.save_for_backward; an intermediate: lesson 03 shows"
            raise AssertionError(f"{message} two fixes)")
        try:
            returned = backward_result(call, x)[1]
        except Exception:  # gradcheck reports it
            returned = x
        if returned is None:
            raise AssertionError(f"backward returns None for x {where}: did it forget return?")
        uses = [(call, "")]
        if isinstance(outs, tuple):
            uses = [
                (call, ", with both outputs"),
                (lambda t: call(t)[0], ", with the softplus alone"),
            ]
        for fn, used in uses:
            for test, order in ((gradcheck, "first"), (gradgradcheck, "second")):
                if test is gradgradcheck and changes_grad_out(fn, x):
                    raise AssertionError("backward changes grad_out in place: compute a new tensor")
                try:
                    test(fn, (x,))
                except Exception as err:
                    reason = str(err).splitlines()[0].rstrip(",")
                    if "with respect to input" in reason and order == "second":
                        reason += " (input 0 is x, the others are the incoming gradients)"
                    message = f"the {order} derivative fails {test.__name__} {where}{used}"
                    reason += cause(fn, out.grad_fn, x, order, reason)
                    raise AssertionError(f"{message}: {reason}") from None


# sphinx_gallery_start_ignore
# Hidden on the page: the build runs the check on right answers in each form
# the lessons teach, and on wrong ones (solutions/prove.py).
import os
import runpy

here = os.path.dirname(check_softplus.__code__.co_filename)
prove = runpy.run_path(os.path.join(here, "solutions", "prove.py"))["prove"]
prove(check_softplus, "Softplus", "softplus")
# sphinx_gallery_end_ignore
