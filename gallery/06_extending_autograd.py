r"""
.. _lesson-extending-rules:

The rules of extending torch.autograd
=====================================

Beyond double backward, a custom Function follows a handful of rules that
decide whether even its first derivative is right, fast and safe. Every rule
but rule 8 comes with a small Function whose claims the lesson asserts;
rule 8 links to the lessons that show it.
"""

# %%
# The examples are checked by this helper, which runs
# :func:`~torch.autograd.gradcheck` and then
# :func:`~torch.autograd.gradgradcheck` in ``float64``: a Function that fails
# either check stops the page.

import torch

# sphinx_gallery_thumbnail_path = "_static/thumbs/06_extending_autograd.svg"
from torch.autograd import Function, gradcheck, gradgradcheck
from torch.autograd.gradcheck import GradcheckError

torch.manual_seed(0)


def check(fn, *inputs):
    """Raise GradcheckError unless fn passes gradcheck and gradgradcheck."""
    gradcheck(fn, inputs)
    gradgradcheck(fn, inputs)


def double_input(*shape):
    """A random float64 tensor that requires grad, for the checks."""
    return torch.randn(*shape, dtype=torch.float64, requires_grad=True)


# %%
# Rule 1: only tensors passed directly are tracked
# ------------------------------------------------
#
# ``forward`` may take any Python values, but autograd only tracks the tensors
# that are arguments themselves. A tensor inside a list or a dictionary is
# invisible to it, even if it requires grad: the node of ``hidden`` has no
# edge to ``shift``, and ``shift`` gets no gradient.


class ShiftFromDict(Function):
    @staticmethod
    def forward(ctx, x, options):
        return x + options["shift"]

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, None  # one entry per input: x, options


class Shift(Function):
    @staticmethod
    def forward(ctx, x, shift):
        return x + shift

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, grad_out


x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
shift = torch.tensor([0.5, 0.5, 0.5], dtype=torch.float64, requires_grad=True)

hidden = ShiftFromDict.apply(x, {"shift": shift})
(lost,) = torch.autograd.grad(hidden.sum(), shift, allow_unused=True)
(found,) = torch.autograd.grad(Shift.apply(x, shift).sum(), shift)
print("inside a dict: gradient for shift:", lost)
print("an argument:   gradient for shift:", found)
assert len(hidden.grad_fn.next_functions) == 1 and lost is None
assert torch.equal(found, torch.ones_like(shift))
check(Shift.apply, double_input(3), double_input(3))

# %%
# .. _rule-needs-input-grad:
#
# Rule 2: one gradient per input, and ``needs_input_grad``
# --------------------------------------------------------
#
# ``backward`` receives one gradient per output of ``forward`` and returns one
# value per input, in order: ``None`` for an input that is not a tensor; for
# a tensor that does not require grad, either ``None`` or a gradient, which
# autograd then discards.
#
# ``ctx.needs_input_grad`` holds one boolean per input: whether it was a
# tensor that required grad when ``forward`` ran. ``backward`` tests it to
# skip the work for an input that will never need a gradient, such as the
# data or a frozen weight. A counter shows the skipped work.


class ScaledProduct(Function):
    """scale * x * w, where scale is a Python number."""

    calls = {"grad_x": 0, "grad_w": 0}

    @staticmethod
    def forward(ctx, x, w, scale):
        ctx.save_for_backward(x, w)
        ctx.scale = scale
        return scale * x * w

    @staticmethod
    def backward(ctx, grad_out):
        x, w = ctx.saved_tensors
        grad_x = grad_w = None
        if ctx.needs_input_grad[0]:
            ScaledProduct.calls["grad_x"] += 1
            grad_x = ctx.scale * grad_out * w
        if ctx.needs_input_grad[1]:
            ScaledProduct.calls["grad_w"] += 1
            grad_w = ctx.scale * grad_out * x
        return grad_x, grad_w, None  # None for scale: it is not a tensor


w = torch.tensor([4.0, 5.0, 6.0], dtype=torch.float64)  # no requires_grad
out = ScaledProduct.apply(x, w, 0.5)
print("needs_input_grad:", out.grad_fn.needs_input_grad)
out.sum().backward()
print("calls:", ScaledProduct.calls)
assert out.grad_fn.needs_input_grad == (True, False, False)
assert ScaledProduct.calls == {"grad_x": 1, "grad_w": 0}
assert torch.equal(x.grad, 0.5 * w)
x.grad = None
check(lambda a, b: ScaledProduct.apply(a, b, 0.5), double_input(3), double_input(3))

# Shift returns a gradient for w too, which does not require grad: it is discarded
shifted = Shift.apply(x, w)
assert shifted.grad_fn.next_functions[1] == (None, 0)  # no edge to w
shifted.sum().backward()
assert torch.equal(x.grad, torch.ones_like(x))
x.grad = None

# %%
# ``needs_input_grad`` does not say which gradients the current call asks
# for. Here the weight requires grad and :func:`torch.autograd.grad` asks for
# the gradient of ``x`` alone: ``backward`` still finds ``True`` for the
# weight, computes its gradient, and autograd throws it away.

weight = torch.tensor([4.0, 5.0, 6.0], dtype=torch.float64, requires_grad=True)
ScaledProduct.calls.update(grad_x=0, grad_w=0)
out = ScaledProduct.apply(x, weight, 0.5)
(grad_x,) = torch.autograd.grad(out.sum(), x)
print("only x asked for: needs_input_grad:", out.grad_fn.needs_input_grad)
print("calls:", ScaledProduct.calls)
assert out.grad_fn.needs_input_grad == (True, True, False)
assert ScaledProduct.calls == {"grad_x": 1, "grad_w": 1}

# %%
# A gradient normally has the shape of its input. When it has another shape,
# for an input that requires grad, autograd sums it down to the input's shape
# if that shape broadcasts to the gradient's, and raises an error otherwise.
# The sum is the right gradient for an input that ``forward`` broadcast:
# ``Shift`` returns a gradient of shape ``(2, 3)`` for a ``shift`` of shape
# ``(3,)``, and ``shift`` gets the same gradient as in plain PyTorch.
# ``ShiftSummed`` sums that gradient itself, which is right for such a
# ``shift`` and wrong for one of shape ``(2, 3)``: autograd refuses the
# gradient of shape ``(3,)`` when that ``shift`` requires grad, even if only
# the gradient of ``rows`` is asked for, and drops it unchecked when it does
# not.


class ShiftSummed(Shift):
    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, grad_out.sum(0)  # the bug: right only for a shift shared by the rows


rows = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
(summed,) = torch.autograd.grad((Shift.apply(rows, shift) ** 2).sum(), shift)
(plain,) = torch.autograd.grad(((rows + shift) ** 2).sum(), shift)
print("gradient for shift, shape (3,):", summed)
shape_messages = {}
for requires_grad in (True, False):
    full_shift = torch.zeros(2, 3, dtype=torch.float64, requires_grad=requires_grad)
    try:
        torch.autograd.grad(ShiftSummed.apply(rows, full_shift).sum(), rows)
        shape_messages[requires_grad] = "no error"
    except RuntimeError as error:
        shape_messages[requires_grad] = "RuntimeError: " + str(error)
    print(f"shift (2, 3), requires_grad={requires_grad}: {shape_messages[requires_grad]}")
assert summed.shape == shift.shape and torch.allclose(summed, plain)
assert "returned an invalid gradient at index 1" in shape_messages[True]
assert "got [3] but expected shape compatible with [2, 3]" in shape_messages[True]
assert shape_messages[False] == "no error"

# %%
# Returning too few values is an error as soon as ``backward`` returns; extra
# ``None`` values at the end are accepted without a word.


class MissingNone(Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return scale * x

    @staticmethod
    def backward(ctx, grad_out):
        return ctx.scale * grad_out  # one value, but forward had two inputs


class ExtraNone(MissingNone):
    @staticmethod
    def backward(ctx, grad_out):
        return ctx.scale * grad_out, None, None  # three values for two inputs


try:
    MissingNone.apply(x, 2.0).sum().backward()
except RuntimeError as error:
    count_message = str(error)
    print("RuntimeError:", count_message)
(grad_x,) = torch.autograd.grad(ExtraNone.apply(x, 2.0).sum(), x)
assert "incorrect number of gradients (expected 2, got 1)" in count_message
assert torch.equal(grad_x, torch.full_like(x, 2.0))

# %%
# Rule 3: never modify the incoming gradient in place
# ---------------------------------------------------
#
# The incoming gradient is not ``backward``'s own copy: an addition of two
# tensors of the same shape and dtype can hand the very same gradient tensor
# to both operands, and a tensor passed as
# ``grad_outputs`` goes straight in. ``TwiceInPlace`` computes :math:`2x` and
# doubles the gradient with ``mul_``. In :math:`3x + 2x`, whose derivative is
# :math:`5`, the engine runs it before the branch :math:`3x`, which then reads
# the doubled gradient: :math:`2 + 3 \cdot 2 = 8`, and the caller's ``v`` has
# changed too.


class TwiceInPlace(Function):
    @staticmethod
    def forward(ctx, x):
        return 2 * x

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out.mul_(2)  # wrong: changes a shared tensor


class Twice(Function):
    @staticmethod
    def forward(ctx, x):
        return 2 * x

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * 2  # right: a new tensor


def five_x(twice, twice_first=False):
    """d/dx (3x + 2x) with the given Function for 2x; returns it and v."""
    v = torch.ones(3, dtype=torch.float64)
    total = twice(x) + 3 * x if twice_first else 3 * x + twice(x)
    (grad,) = torch.autograd.grad(total, x, grad_outputs=v)
    return grad.tolist(), v.tolist()


for name, twice in (("in place", TwiceInPlace), ("out of place", Twice)):
    print(f"{name:12}: gradient and v:", five_x(twice.apply))
assert five_x(TwiceInPlace.apply) == ([8.0] * 3, [2.0] * 3)
assert five_x(Twice.apply) == ([5.0] * 3, [1.0] * 3)
check(Twice.apply, double_input(3))

# %%
# Whether the gradient comes out wrong depends on the order in which the
# engine runs the nodes. Build the sum the other way round and the gradient is
# right, yet ``v`` still changes: such a bug can hide for a long time.

print("other order : gradient and v:", five_x(TwiceInPlace.apply, twice_first=True))
assert five_x(TwiceInPlace.apply, twice_first=True) == ([5.0] * 3, [2.0] * 3)

# %%
# Rule 4: every tensor ``backward`` uses goes through ``save_for_backward``
# -------------------------------------------------------------------------
#
# :meth:`ctx.save_for_backward <torch.autograd.function.FunctionCtx.save_for_backward>`
# accepts any tensor, or ``None``. Other values that ``backward`` needs, such
# as a number or a shape, are plain attributes of ``ctx`` (the node of the
# output, so ``out.grad_fn.scale`` reads one back).


class ScaledSquare(Function):
    """scale * x**2, where scale is a Python number."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return scale * x**2

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 2 * ctx.scale * x * grad_out, None


out = ScaledSquare.apply(x, 0.5)
print("out.grad_fn.scale:", out.grad_fn.scale)
assert out.grad_fn.scale == 0.5
check(lambda t: ScaledSquare.apply(t, 0.5), double_input(3))

# %%
# ``save_for_backward`` also takes an intermediate of ``forward`` (neither an
# input nor an output) without a warning, yet double backward treats it as a
# constant, which is right only where its derivative is zero:
# :ref:`lesson 04 <safe-intermediates>` says which intermediates are safe.
# ``SquareSavesTwoX`` computes :math:`x^2` and saves :math:`2x`: nothing warns,
# and :func:`~torch.autograd.gradgradcheck` fails where ``ScaledSquare``, which
# saves its input, passed.

import warnings


class SquareSavesTwoX(Function):
    @staticmethod
    def forward(ctx, x):
        two_x = 2 * x
        ctx.save_for_backward(two_x)  # an intermediate with a derivative: 2
        return x**2

    @staticmethod
    def backward(ctx, grad_out):
        (two_x,) = ctx.saved_tensors
        return grad_out * two_x


sample = double_input(3)
with warnings.catch_warnings(record=True) as warned:
    warnings.simplefilter("always")
    gradcheck(SquareSavesTwoX.apply, (sample,))
    try:
        gradgradcheck(SquareSavesTwoX.apply, (sample,))
        failure = ""
    except GradcheckError as error:
        failure = str(error).splitlines()[0]
print("SquareSavesTwoX: gradgradcheck:", failure)
print("warnings:", len(warned))
assert failure.startswith("Jacobian mismatch for output 0 with respect to input 0")
assert not warned

# %%
# Saving, rather than keeping a tensor as an attribute of ``ctx``, buys three
# things, each shown below on an exponential that needs its output:
#
# * **saved-tensor hooks** see it. ``torch.autograd.graph.saved_tensors_hooks``
#   is how PyTorch offloads or compresses saved tensors; here the hook only
#   records what it sees;
# * **the in-place check**: a saved tensor changed in place after
#   ``forward`` returned is an error when ``backward`` reads
#   ``ctx.saved_tensors``, not a wrong gradient (a change inside ``forward``,
#   and a ``backward`` that does not read them, are not checked).
#   The check reads a
#   version counter that PyTorch's in-place operations advance, so a change
#   made through ``.data`` or through a NumPy array that shares the memory
#   escapes it; so does any change to a tensor saved while saved-tensor hooks
#   were active (PyTorch then skips the check, and ``backward`` gets whatever
#   the hooks return);
# * **no reference cycle**: an output kept on ``ctx`` points to its own node,
#   so it lives until Python's garbage collector runs.

import gc
import weakref
from contextlib import nullcontext


class ExpSaved(Function):
    @staticmethod
    def forward(ctx, x):
        result = torch.exp(x)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_out):
        (result,) = ctx.saved_tensors
        return grad_out * result


class ExpOnCtx(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.result = torch.exp(x)  # the output, kept as an attribute
        return ctx.result

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * ctx.result


def gradient_after_change(function, through="add_", hooks=False):
    """The gradient after the output is changed in place (None for an error)."""
    identity_hooks = torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t)
    with identity_hooks if hooks else nullcontext():
        out = function.apply(x)
    with torch.no_grad():  # an in-place change between forward and backward
        if through == "add_":
            out.add_(1.0)
        elif through == ".data":
            out.data.add_(1.0)
        else:
            out.detach().numpy()[:] += 1.0  # NumPy writes to the same memory
    try:
        return torch.autograd.grad(out.sum(), x)[0]
    except RuntimeError as error:
        assert "modified by an inplace operation" in str(error)
        return None


def what_saving_buys(function):
    """Whether a hook sees the tensor, the gradient after an in-place change
    (None for an error), and whether the output is freed as soon as it is dropped."""
    seen = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
        function.apply(x)
    after_change = gradient_after_change(function)
    gc.disable()  # only reference counting frees memory now
    freed = weakref.ref(function.apply(x))() is None
    gc.enable()
    return bool(seen), after_change, freed


results = {function: what_saving_buys(function) for function in (ExpSaved, ExpOnCtx)}
for function, (hooked, after_change, freed) in results.items():
    caught = after_change is None
    print(f"{function.__name__:8}: hook saw it {hooked}, in-place change caught {caught},", end="")
    print(f" freed at once {freed}")
assert results[ExpSaved] == (True, None, True)
hooked, after_change, freed = results[ExpOnCtx]
assert not hooked and not freed
assert torch.allclose(after_change, torch.exp(x) + 1)  # the changed values
check(ExpSaved.apply, double_input(3))

# %%
# With ``ExpOnCtx``, the in-place change went unnoticed: the gradient was
# computed from the changed values, :math:`e^{x} + 1`, silently wrong. So is
# the gradient of ``ExpSaved`` when the change goes through ``.data`` or
# NumPy, or when the output was saved under hooks, here hooks that return the
# tensor unchanged.

escaped = {
    "through .data": gradient_after_change(ExpSaved, through=".data"),
    "through NumPy": gradient_after_change(ExpSaved, through="numpy"),
    "by add_ under hooks": gradient_after_change(ExpSaved, hooks=True),
}
for how, gradient in escaped.items():
    print(f"ExpSaved, changed {how}: gradient {gradient}")
    assert torch.allclose(gradient, torch.exp(x) + 1)

# %%
# Rule 5: ``mark_dirty`` for an input changed in place
# ----------------------------------------------------
#
# A Function may change an input in place, to save memory. It must then tell
# autograd with ``ctx.mark_dirty`` and return that same tensor, whose history
# then moves to this Function. ``ExpInPlace`` replaces its input by
# :math:`e^{x}` and saves the result, which is both its input and its output.
# ``ExpInPlaceUnmarked`` makes the same change without the mark.


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


class ExpInPlaceUnmarked(ExpInPlace):
    @staticmethod
    def forward(ctx, x):
        x.exp_()  # the same change, not marked
        ctx.save_for_backward(x)
        return x


# %%
# On a tensor ``y`` that is not a leaf, with the mark, the output *is* ``y``,
# whose ``grad_fn`` is now ``ExpInPlaceBackward``, and a loss computed from
# ``y`` gets the gradient of :math:`e^{2x}`, which is :math:`2e^{2x}`. Without
# the mark, the output is a new tensor that views ``y``'s memory with a
# history of its own, and ``y`` keeps its old history: it
# holds :math:`e^{2x}`, yet its gradient is that of :math:`2x`, silently here
# (had the node that made ``y`` saved it, as ``x.exp()`` does, the in-place
# check would raise instead).

through_y = {}
for function in (ExpInPlace, ExpInPlaceUnmarked):
    y = 2 * x
    z = function.apply(y)
    (grad_x,) = torch.autograd.grad(y.sum(), x)
    print(f"{function.__name__:18}: z is y {z is y}, y.grad_fn {type(y.grad_fn).__name__},", end="")
    print(" gradient through y", grad_x)
    assert torch.allclose(y, torch.exp(2 * x))  # y holds e^(2x) either way
    through_y[function] = (z is y, type(y.grad_fn).__name__, grad_x)
assert through_y[ExpInPlace][:2] == (True, "ExpInPlaceBackward")
assert torch.allclose(through_y[ExpInPlace][2], 2 * torch.exp(2 * x))
assert through_y[ExpInPlaceUnmarked][:2] == (False, "MulBackward0")
assert torch.equal(through_y[ExpInPlaceUnmarked][2], torch.full_like(x, 2.0))

# %%
# On a leaf that requires grad, the mark makes autograd refuse: a leaf is
# where gradients end. The refusal comes with the mark and runs after
# ``forward`` returned, so the leaf is already overwritten
# (:math:`e^{0} = 1`). Without the mark, the leaf is overwritten and nothing
# is said.

leaf_messages = {}
for function in (ExpInPlace, ExpInPlaceUnmarked):
    leaf = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    try:
        function.apply(leaf)
        leaf_messages[function] = "no error"
    except RuntimeError as error:
        leaf_messages[function] = "RuntimeError: " + str(error)
    print(f"{function.__name__:18}: {leaf_messages[function]}")
    print(f"{'':18}  leaf after the call: {leaf.detach()}")
    assert torch.equal(leaf.detach(), torch.ones(3, dtype=torch.float64))
assert "a leaf Variable that requires grad has been used" in leaf_messages[ExpInPlace]
assert leaf_messages[ExpInPlaceUnmarked] == "no error"

# %%
# So the check of ``ExpInPlace`` below clones the input inside the function
# it passes to :func:`~torch.autograd.gradcheck`, for two reasons. The inputs
# gradcheck is usually given are leaves that require grad, which the mark
# refuses. And on a tensor that is not a leaf, neither side of the check
# means anything: each of its many calls overwrites the values that the next
# one reads, which spoils the finite differences, and after a call the input
# *is* the output, so the analytical side differentiates the output with
# respect to itself and finds the identity. With the clone, each call changes
# its own copy.

not_leaf = double_input(3) * 1.0
before = not_leaf.detach().clone()
try:
    gradcheck(ExpInPlace.apply, (not_leaf,))
    no_clone = ""
except GradcheckError as error:
    no_clone = str(error)
    print("without a clone:", no_clone.splitlines()[0])
    print("analytical:", no_clone.split("analytical:")[1].strip())
assert no_clone.startswith("Jacobian mismatch for output 0 with respect to input 0")
assert "analytical:" + str(torch.eye(3, dtype=torch.float64)) in no_clone
assert not torch.allclose(not_leaf, before)  # the input was overwritten
check(lambda t: ExpInPlace.apply(t.clone()), double_input(3))

# %%
# Rule 6: ``mark_non_differentiable`` for outputs without a gradient
# ------------------------------------------------------------------
#
# A floating-point output such as a mask looks differentiable to autograd: it
# requires grad, every operation on it is recorded, and a loss made of the
# mask alone gets a gradient, zero here (``backward`` ignores the mask's
# incoming gradient). Zero is right for a 0/1 mask, but the recording serves
# nothing. ``ctx.mark_non_differentiable`` declares that the output has no
# gradient: it does not require grad, nothing computed from the mask alone is
# recorded, and autograd treats it as a constant. Differentiating a loss made of the mask alone is then an error;
# in a loss that also uses ``x``, such as ``(mask * x).sum()``, the mask is a
# constant factor and nothing fails.


class ReluWithMask(Function):
    """max(x, 0), and the mask of the positive entries as floats."""

    @staticmethod
    def forward(ctx, x, mark):
        mask = (x > 0).to(x.dtype)
        if mark:
            ctx.mark_non_differentiable(mask)
        ctx.save_for_backward(mask)
        return x * mask, mask

    @staticmethod
    def backward(ctx, grad_out, grad_mask):
        (mask,) = ctx.saved_tensors
        return grad_out * mask, None


signed = torch.tensor([-1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
for mark in (False, True):
    _, mask = ReluWithMask.apply(signed, mark)
    try:
        result = torch.autograd.grad(mask.sum(), signed)[0].tolist()
    except RuntimeError as error:
        result = str(error)
    print(f"mark={mark}: mask.requires_grad={mask.requires_grad}, its gradient: {result}")
    assert mask.requires_grad is not mark and (mask.sum().grad_fn is None) is mark
    if mark:
        assert "does not require grad" in result
    else:
        assert result == [0.0, 0.0, 0.0]
_, mask = ReluWithMask.apply(signed, True)
(with_x,) = torch.autograd.grad((mask * signed).sum(), signed)
print("mark=True: gradient of (mask * x).sum():", with_x.tolist())
assert torch.equal(with_x, mask)
check(lambda t: ReluWithMask.apply(t, True)[0], double_input(3))

# %%
# Integer outputs, such as the indices of a sort, never require grad, marked
# or not. ``SortWithIndices`` sorts along the last dimension; its backward
# sends each value's gradient back to the position it came from. Weighting the
# sorted values by 10, 20, 30 shows where each gradient lands.


class SortWithIndices(Function):
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        ctx.save_for_backward(indices)
        return values, indices

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        (indices,) = ctx.saved_tensors
        return torch.zeros_like(grad_values).scatter(-1, indices, grad_values)


s = torch.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]], dtype=torch.float64, requires_grad=True)
values, indices = SortWithIndices.apply(s)
weights = torch.tensor([10.0, 20.0, 30.0], dtype=torch.float64)
(grad_s,) = torch.autograd.grad((values * weights).sum(), s)
print("indices:", indices.tolist(), "requires_grad:", indices.requires_grad)
print("gradient:", grad_s.tolist())
assert indices.dtype == torch.int64 and not indices.requires_grad
assert grad_s.tolist() == [[30.0, 10.0, 20.0], [10.0, 30.0, 20.0]]
check(lambda t: SortWithIndices.apply(t)[0], double_input(2, 5))

# %%
# Rule 7: ``set_materialize_grads(False)``: ``None`` in any pass
# ---------------------------------------------------------------
#
# By default, autograd passes zeros to ``backward`` for an output that the
# loss did not use. After ``ctx.set_materialize_grads(False)`` it passes
# ``None``, which saves making the zeros, and ``backward`` must handle it.
# ``SinCos`` returns :math:`\sin x` and :math:`\cos x`, saves both outputs,
# and records which gradients arrive as ``None``.


class SinCos(Function):
    received = []

    @staticmethod
    def forward(ctx, x, materialize):
        ctx.set_materialize_grads(materialize)
        sin, cos = torch.sin(x), torch.cos(x)
        ctx.save_for_backward(sin, cos)
        return sin, cos

    @staticmethod
    def backward(ctx, grad_sin, grad_cos):
        SinCos.received.append((grad_sin is None, grad_cos is None))
        sin, cos = ctx.saved_tensors
        grad_x = None
        if grad_sin is not None:
            grad_x = grad_sin * cos
        if grad_cos is not None:
            grad_x = -grad_cos * sin if grad_x is None else grad_x - grad_cos * sin
        return grad_x, None


# %%
# Only the sine is used, and its second derivative is asked for. The second
# pass differentiates ``grad_sin * cos``, which reaches ``SinCosBackward``
# through the saved cosine only. So with ``materialize=False`` the gradient of
# the *sine* arrives as ``None`` in that pass, although the loss used the
# sine: a backward that checks only the output the caller left unused fails
# there.

for materialize in (True, False):
    SinCos.received.clear()
    sin_x, _ = SinCos.apply(x, materialize)
    (grad_x,) = torch.autograd.grad(sin_x.sum(), x, create_graph=True)
    (second,) = torch.autograd.grad(grad_x.sum(), x)
    print(f"materialize={materialize}: (grad_sin, grad_cos) is None:", SinCos.received)
    assert torch.allclose(second, -torch.sin(x))
    expected = [(False, False)] * 2 if materialize else [(False, True), (True, False)]
    assert SinCos.received == expected

check(lambda t: SinCos.apply(t, False), double_input(3))

# %%
# Rule 8: ``once_differentiable`` when backward has no derivative
# ---------------------------------------------------------------
#
# A ``backward`` that autograd cannot differentiate, such as one that runs
# NumPy, should say so by decorating it with
# :func:`@once_differentiable <torch.autograd.function.once_differentiable>`
# (from ``torch.autograd.function``). A second backward pass through it
# then raises a clear error, though not always:
# :ref:`lesson 05 <lesson-untracked-backward>` shows when it does and
# when it does not, and :ref:`lesson 07 <lesson-custom-layer>` what the mark
# breaks on a ``backward`` that autograd can differentiate.
#
# Rule 9: ``forward`` without ``ctx``, plus ``setup_context``
# -----------------------------------------------------------
#
# In the newer style, ``forward`` takes only the inputs, and a staticmethod
# ``setup_context(ctx, inputs, output)`` fills ``ctx`` from the tuple of
# inputs and the output. ``backward`` is unchanged. The :mod:`torch.func`
# transforms (``grad``, ``vmap``, ``jacrev``, ...) require this split; the
# older style works with ordinary autograd, but the transforms refuse it. We
# print the first sentence of the message.


class CubeOldStyle(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * grad_out


class Cube(Function):
    @staticmethod
    def forward(x):
        return x**3

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * grad_out


two = torch.tensor(2.0, dtype=torch.float64)
try:
    torch.func.grad(CubeOldStyle.apply)(two)
except RuntimeError as error:
    func_message = str(error).split(". ")[0]
    print("old style: RuntimeError:", func_message)
assert "it must override the setup_context staticmethod" in func_message
check(CubeOldStyle.apply, double_input(3))

# %%
# :func:`torch.func.grad` takes ``Cube`` and gives :math:`3x^2 = 12` at
# :math:`x = 2`. Not every transform takes it as it stands:
# :ref:`lesson 09 <lesson-torch-func>` shows what ``vmap``, ``jvp``,
# ``jacfwd`` and ``hessian`` need in addition.

first = torch.func.grad(Cube.apply)(two)
print("new style: derivative at 2:", first.item())
assert first.item() == 12.0
check(Cube.apply, double_input(3))

# %%
# Summary
# -------
#
# * Only tensors passed directly to ``forward`` are tracked.
# * ``backward`` returns one value per input of ``forward``; ``None`` for
#   non-tensors. ``ctx.needs_input_grad`` says which inputs required grad when
#   ``forward`` ran, so ``backward`` can skip the gradients of the others. A
#   gradient of the wrong shape, for an input that requires grad, is summed
#   to the input's shape if that shape broadcasts to it, and refused
#   otherwise.
# * Never change the incoming gradient in place; it may be shared.
# * Every tensor that ``backward`` uses goes through
#   :meth:`~torch.autograd.function.FunctionCtx.save_for_backward`; other
#   values are attributes of ``ctx``. A saved intermediate is still a
#   constant to double backward.
# * :meth:`~torch.autograd.function.FunctionCtx.mark_dirty` for an input
#   changed in place;
#   :meth:`~torch.autograd.function.FunctionCtx.mark_non_differentiable` for
#   floating-point outputs that have no gradient.
# * With ``set_materialize_grads(False)``, handle ``None`` for every output,
#   in every pass.
# * :func:`~torch.autograd.function.once_differentiable` declares a backward
#   that autograd cannot differentiate.
# * ``forward`` without ``ctx``, plus ``setup_context``, for :mod:`torch.func`.
#
# Next, :ref:`a custom layer <lesson-custom-layer>` puts these rules together.
