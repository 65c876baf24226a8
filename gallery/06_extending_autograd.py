r"""
.. _lesson-extending-rules:

The rules of extending torch.autograd
=====================================

The earlier lessons were about one question: can autograd follow what
``backward`` does? Writing a custom Function also involves a handful of
rules, most of which have nothing to do with second derivatives. They decide
whether even the first derivative is right, fast, and safe.

This lesson goes through them one at a time. Each rule comes with a small
Function, and the printed output of each example shows the rule at work. The
lesson asserts every claim, so if PyTorch ever changed one of these rules,
this page would stop building.

You will learn:

* what ``forward`` may take and what ``backward`` must return;
* how ``ctx.needs_input_grad`` lets ``backward`` skip work;
* why the incoming gradient must never be changed in place;
* what ``save_for_backward``, ``mark_dirty``, ``mark_non_differentiable``
  and ``set_materialize_grads`` are for;
* how ``once_differentiable`` declares a limit;
* the newer ``setup_context`` style that ``torch.func`` needs.
"""

# %%
# How the examples are checked
# ----------------------------
#
# Most Functions below have a ``backward`` written with PyTorch operations on
# saved inputs or outputs, so they support double backward. For each of them
# we run ``gradcheck`` and ``gradgradcheck`` in ``float64``, through this
# small helper that prints and asserts both results.

import torch
from torch.autograd import Function, gradcheck, gradgradcheck

torch.manual_seed(0)


def check(fn, *inputs):
    """Run gradcheck and gradgradcheck on fn; print and assert the results."""
    first_ok = gradcheck(fn, inputs)
    second_ok = gradgradcheck(fn, inputs)
    print("gradcheck:", first_ok)
    print("gradgradcheck:", second_ok)
    assert first_ok and second_ok


def double_input(*shape):
    """A random float64 tensor that requires grad, for the checks."""
    return torch.randn(*shape, dtype=torch.float64, requires_grad=True)


# %%
# Rule 1: only tensors passed directly are tracked
# ------------------------------------------------
#
# ``forward`` may take any Python values: numbers, strings, lists,
# dictionaries. But autograd only looks at the arguments themselves. A tensor
# that is an argument is an input of the graph; a tensor hidden inside a list
# or a dictionary is not, even if it requires grad.
#
# ``ShiftFromDict`` adds a shift that it finds in a dictionary.


class ShiftFromDict(Function):
    @staticmethod
    def forward(ctx, x, options):
        return x + options["shift"]

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, None  # one entry per input: x, options


x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
shift = torch.tensor([0.5, 0.5, 0.5], dtype=torch.float64, requires_grad=True)

out = ShiftFromDict.apply(x, {"shift": shift})
print("out.requires_grad:", out.requires_grad)

# %%
# The output depends on ``shift``, yet the graph has no edge to it. The node
# of ``out`` has one edge per tensor argument of ``forward``, so only one,
# leading to ``x`` (``AccumulateGrad`` is the node that fills a leaf's
# ``.grad``). Asking for the gradient of ``shift`` gives ``None``.

edges = [type(fn).__name__ for fn, _ in out.grad_fn.next_functions]
print("edges of out.grad_fn:", edges)

grads = torch.autograd.grad(out.sum(), (x, shift), allow_unused=True)
grad_x, grad_shift = grads
print("gradient for x:", grad_x)
print("gradient for shift:", grad_shift)

assert edges == ["AccumulateGrad"]
assert torch.equal(grad_x, torch.ones_like(x))
assert grad_shift is None

# %%
# The fix is to pass ``shift`` as an argument of its own, and to return a
# gradient for it. The derivative of :math:`x + s` with respect to either
# input is :math:`1`, so both gradients equal ``grad_out``.


class Shift(Function):
    @staticmethod
    def forward(ctx, x, shift):
        return x + shift

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, grad_out


out = Shift.apply(x, shift)
grad_x, grad_shift = torch.autograd.grad(out.sum(), (x, shift))
print("gradient for shift:", grad_shift)
assert torch.equal(grad_shift, torch.ones_like(shift))

check(Shift.apply, double_input(3), double_input(3))

# %%
# Rule 2: one gradient per input, and ``needs_input_grad``
# --------------------------------------------------------
#
# ``backward`` receives one gradient for each output of ``forward``, and must
# return one value for each input of ``forward``, in the same order. The value
# is ``None`` for an input that is not a tensor, and may be ``None`` for a
# tensor that needs no gradient.
#
# ``ctx.needs_input_grad`` is a tuple of booleans, one per input, that says
# which gradients are wanted. Checking it lets ``backward`` skip work. Here
# each gradient stands for an expensive computation, and a counter records
# how often it runs.


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
        ScaledProduct.last_needs = ctx.needs_input_grad
        grad_x = grad_w = None
        if ctx.needs_input_grad[0]:
            ScaledProduct.calls["grad_x"] += 1
            grad_x = ctx.scale * grad_out * w
        if ctx.needs_input_grad[1]:
            ScaledProduct.calls["grad_w"] += 1
            grad_w = ctx.scale * grad_out * x
        return grad_x, grad_w, None  # None for scale: it is not a tensor


# %%
# With a fixed ``w`` (it does not require grad), only the gradient for ``x``
# is computed.

w = torch.tensor([4.0, 5.0, 6.0], dtype=torch.float64)  # no requires_grad
ScaledProduct.apply(x, w, 0.5).sum().backward()
print("needs_input_grad:", ScaledProduct.last_needs)
print("calls:", ScaledProduct.calls)
print("x.grad:", x.grad)

assert ScaledProduct.last_needs == (True, False, False)
assert ScaledProduct.calls == {"grad_x": 1, "grad_w": 0}
assert torch.equal(x.grad, 0.5 * w)

# %%
# When ``w`` requires grad as well, both gradients are computed.

x.grad = None
w.requires_grad_(True)
ScaledProduct.apply(x, w, 0.5).sum().backward()
print("needs_input_grad:", ScaledProduct.last_needs)
print("calls:", ScaledProduct.calls)
assert ScaledProduct.last_needs == (True, True, False)
assert ScaledProduct.calls == {"grad_x": 2, "grad_w": 1}
assert torch.equal(w.grad, 0.5 * x.detach())


def half_product(a, b):
    return ScaledProduct.apply(a, b, 0.5)


check(half_product, double_input(3), double_input(3))

# %%
# Returning too few values is caught as soon as ``backward`` returns. This
# Function forgets the ``None`` for its second input:


class MissingNone(Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return scale * x

    @staticmethod
    def backward(ctx, grad_out):
        return ctx.scale * grad_out  # one value, but forward had two inputs


try:
    MissingNone.apply(x, 2.0).sum().backward()
except RuntimeError as error:
    count_message = str(error)
    print("RuntimeError:", count_message)
assert "incorrect number of gradients (expected 2, got 1)" in count_message

# %%
# Extra ``None`` values at the end, however, are accepted without a word.
# This Function returns one ``None`` too many:


class ExtraNone(Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return scale * x

    @staticmethod
    def backward(ctx, grad_out):
        return ctx.scale * grad_out, None, None  # three values for two inputs


(grad_x,) = torch.autograd.grad(ExtraNone.apply(x, 2.0).sum(), x)
print("gradient with an extra None:", grad_x)
assert torch.equal(grad_x, torch.full_like(x, 2.0))

# %%
# Rule 3: never modify the incoming gradient in place
# ---------------------------------------------------
#
# The gradient that ``backward`` receives is not its own copy. Autograd
# passes the same tensor to several places when it can: an addition, for
# example, hands one gradient tensor to both of its operands, and the tensor
# you pass as ``grad_outputs`` goes straight in. Changing it in place changes
# it for everyone who shares it.
#
# ``TwiceInPlace`` computes :math:`2x`, and its backward doubles the gradient
# with ``mul_``.


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


# %%
# Use it in :math:`3x + 2x`, whose derivative is :math:`5`. The addition
# gives the same gradient tensor ``v`` to both branches. Here the engine runs
# ``TwiceInPlaceBackward`` first; it doubles ``v``, and the branch
# :math:`3x` then reads the doubled gradient. The result is
# :math:`2 + 3 \cdot 2 = 8`, and the caller's ``v`` has changed too.

v = torch.ones(3, dtype=torch.float64)
three_x = 3 * x
total = three_x + TwiceInPlace.apply(x)
(bad_grad,) = torch.autograd.grad(total, x, grad_outputs=v)
print("in place:     gradient", bad_grad.tolist(), "and v is now", v.tolist())
assert torch.equal(bad_grad, torch.full_like(x, 8.0))  # wrong
assert torch.equal(v, torch.full_like(v, 2.0))  # the caller's tensor changed

v = torch.ones(3, dtype=torch.float64)
three_x = 3 * x
total = three_x + Twice.apply(x)
(good_grad,) = torch.autograd.grad(total, x, grad_outputs=v)
print("out of place: gradient", good_grad.tolist(), "and v is still", v.tolist())
assert torch.equal(good_grad, torch.full_like(x, 5.0))  # right
assert torch.equal(v, torch.ones_like(v))

check(Twice.apply, double_input(3))

# %%
# Whether the in-place version gives a wrong gradient depends on the order in
# which the engine runs the nodes. Create the two branches in the other order
# and the branch :math:`3x` runs first: the gradient comes out right, yet the
# caller's ``v`` is still changed. A bug like this can hide for a long time,
# so always compute a new tensor.

v = torch.ones(3, dtype=torch.float64)
twice_x = TwiceInPlace.apply(x)  # created before 3 * x this time
total = twice_x + 3 * x
(lucky_grad,) = torch.autograd.grad(total, x, grad_outputs=v)
print("other order:  gradient", lucky_grad.tolist(), "and v is now", v.tolist())
assert torch.equal(lucky_grad, torch.full_like(x, 5.0))
assert torch.equal(v, torch.full_like(v, 2.0))

# %%
# Rule 4: tensors go to ``save_for_backward``, everything else on ``ctx``
# -----------------------------------------------------------------------
#
# ``ctx.save_for_backward`` takes tensors only: inputs, outputs, or ``None``.
# Any other value that ``backward`` needs, such as a number, a string or a
# shape, is stored as a plain attribute of ``ctx``. The ``ctx`` object is the
# node that autograd attaches to the output, so the attribute can even be read
# back from ``out.grad_fn``.


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
(grad_x,) = torch.autograd.grad(out.sum(), x)
print("out.grad_fn.scale:", out.grad_fn.scale)
print("gradient:", grad_x)
assert out.grad_fn.scale == 0.5
assert torch.equal(grad_x, x.detach())  # 2 * 0.5 * x

check(lambda t: ScaledSquare.apply(t, 0.5), double_input(3))

# %%
# Saving a tensor that is neither an input nor an output (an intermediate
# result of ``forward``) works for the first derivative but can silently
# break the second; :ref:`lesson-saving-intermediates` and
# :ref:`lesson-ctx-mistake` show how and why.
#
# Saved tensors are checked for in-place changes
# ----------------------------------------------
#
# Each tensor has a version counter that every in-place operation
# increments. ``save_for_backward`` remembers the version, and
# ``saved_tensors`` compares it when ``backward`` runs. Here the saved input
# is changed in place between forward and backward, the way an optimizer step
# would change a weight.

a = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
out = ScaledSquare.apply(a, 0.5)
print("version of a when saved:", a._version)
with torch.no_grad():
    a.add_(1.0)
print("version of a now:", a._version)
assert a._version == 1

try:
    out.sum().backward()
except RuntimeError as error:
    inplace_message = str(error).split(" Hint:")[0]
    print("RuntimeError:", inplace_message)
assert (
    "one of the variables needed for gradient computation has been modified "
    "by an inplace operation" in inplace_message
)

# %%
# We printed the message up to its hint about anomaly detection. The check
# keeps ``backward`` from computing with values that ``forward`` never saw.
#
# Rule 5: ``mark_dirty`` for an input changed in place
# ----------------------------------------------------
#
# A Function may change an input in place, to save memory. It must then tell
# autograd with ``ctx.mark_dirty``, and return that same tensor. Autograd then
# moves the tensor's history: the tensor now comes from this Function.
#
# ``ExpInPlace`` replaces its input by :math:`e^{x}`. The derivative
# :math:`e^{x}` is the output itself, so it saves the output (the changed
# input), which is allowed.


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


# %%
# On a tensor that is not a leaf it works: the output *is* the input tensor,
# its ``grad_fn`` is now the node of ``ExpInPlace``, and the gradient of
# :math:`e^{2x}` is the expected :math:`2e^{2x}`.

y = 2 * x
z = ExpInPlace.apply(y)
print("z is y:", z is y)
print("y.grad_fn:", type(y.grad_fn).__name__)

(grad_x,) = torch.autograd.grad(z.sum(), x)
print("gradient:", grad_x)
assert z is y
assert type(y.grad_fn).__name__ == "ExpInPlaceBackward"
assert torch.allclose(grad_x, 2 * torch.exp(2 * x))

# %%
# ``gradcheck`` passes its inputs as leaves, so the checked function works on
# a copy made with ``clone()``.

check(lambda t: ExpInPlace.apply(t.clone()), double_input(3))

# %%
# On a leaf that requires grad, autograd refuses. A leaf is where gradients
# end, so it cannot also become the output of a Function.

leaf = torch.zeros(3, dtype=torch.float64, requires_grad=True)
try:
    ExpInPlace.apply(leaf)
except RuntimeError as error:
    leaf_message = str(error)
    print("RuntimeError:", leaf_message)
assert "a leaf Variable that requires grad has been used" in leaf_message

# %%
# Note that the check runs after ``forward`` has returned. By then
# ``forward`` had already overwritten the leaf: it now holds
# :math:`e^{0} = 1` instead of :math:`0`.

print("leaf after the error:", leaf.detach())
assert torch.equal(leaf.detach(), torch.ones(3, dtype=torch.float64))

# %%
# Rule 6: ``mark_non_differentiable`` for outputs such as indices
# ---------------------------------------------------------------
#
# Some outputs have no meaningful gradient: integer indices, masks, counts.
# ``ctx.mark_non_differentiable`` says so; such an output does not require
# grad. ``SortWithIndices`` sorts a 1-D tensor and returns the sorted values
# and the positions they came from. Its backward sends each value's gradient
# back to the position it came from, and ignores the gradient given for the
# indices.


class SortWithIndices(Function):
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return values, indices

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        (indices,) = ctx.saved_tensors
        return torch.zeros_like(grad_values).scatter(0, indices, grad_values)


s = torch.tensor([3.0, 1.0, 2.0], dtype=torch.float64, requires_grad=True)
values, indices = SortWithIndices.apply(s)
print("values:", values.detach(), "requires_grad:", values.requires_grad)
print("indices:", indices, "requires_grad:", indices.requires_grad)
assert values.requires_grad and not indices.requires_grad
assert indices.dtype == torch.int64

# %%
# Weighting the sorted values by 10, 20 and 30 shows where each gradient
# lands: the smallest input (at position 1) gets 10, and so on.

weights = torch.tensor([10.0, 20.0, 30.0], dtype=torch.float64)
(grad_s,) = torch.autograd.grad((values * weights).sum(), s)
print("gradient:", grad_s)
expected = torch.tensor([30.0, 10.0, 20.0], dtype=torch.float64)
assert torch.equal(grad_s, expected)

check(lambda t: SortWithIndices.apply(t)[0], double_input(5))

# %%
# Rule 7: ``set_materialize_grads(False)`` and ``None`` gradients
# ---------------------------------------------------------------
#
# When a Function has several outputs and the loss uses only some of them,
# autograd by default fills in a tensor of zeros for each unused output
# before it calls ``backward``. With ``ctx.set_materialize_grads(False)`` it
# passes ``None`` instead, which saves creating those zeros, but ``backward``
# must then handle ``None``.
#
# ``SinCos`` returns :math:`\sin x` and :math:`\cos x`. A flag (a plain Python
# value, so its gradient is ``None``) chooses the behaviour, and ``backward``
# records what it received.


class SinCos(Function):
    history = []  # what backward received, one pair per call

    @staticmethod
    def forward(ctx, x, materialize):
        ctx.set_materialize_grads(materialize)
        ctx.save_for_backward(x)
        return torch.sin(x), torch.cos(x)

    @staticmethod
    def backward(ctx, grad_sin, grad_cos):
        SinCos.received = (grad_sin, grad_cos)
        SinCos.history.append(SinCos.received)
        (x,) = ctx.saved_tensors
        grad_x = torch.zeros_like(x)
        if grad_sin is not None:
            grad_x = grad_x + grad_sin * torch.cos(x)
        if grad_cos is not None:
            grad_x = grad_x - grad_cos * torch.sin(x)
        return grad_x, None


# %%
# Only the sine is used. By default, ``backward`` receives zeros for the
# cosine; with ``materialize=False`` it receives ``None``. The gradient is
# :math:`\cos x` either way.

for materialize in (True, False):
    sin_x, cos_x = SinCos.apply(x, materialize)
    (grad_x,) = torch.autograd.grad(sin_x.sum(), x)
    grad_sin, grad_cos = SinCos.received
    print(f"materialize={materialize}: grad_cos received =", grad_cos)
    assert torch.allclose(grad_x, torch.cos(x))
    if materialize:
        assert torch.equal(grad_cos, torch.zeros_like(x))
    else:
        assert grad_cos is None

# %%
# Both ways of calling it pass the checks: with both outputs, and with only
# the first one. Both send ``None`` into ``backward``: ``gradcheck``
# differentiates one output at a time, so even with both outputs,
# ``backward`` receives ``None`` for the other output.


def nones_received(fn):
    """Run the checks on fn; say which gradient backward ever got alone as None."""
    SinCos.history.clear()
    check(fn, double_input(3))
    cos_alone = any(s is not None and c is None for s, c in SinCos.history)
    sin_alone = any(s is None and c is not None for s, c in SinCos.history)
    return cos_alone, sin_alone


cos_alone, sin_alone = nones_received(lambda t: SinCos.apply(t, False))
print(f"both outputs: grad_cos alone None: {cos_alone}, grad_sin alone None: {sin_alone}")
assert cos_alone and sin_alone

cos_alone, sin_alone = nones_received(lambda t: SinCos.apply(t, False)[0])
print(f"first output: grad_cos alone None: {cos_alone}, grad_sin alone None: {sin_alone}")
assert cos_alone and not sin_alone

# %%
# Rule 8: ``once_differentiable`` when backward has no derivative
# ---------------------------------------------------------------
#
# If a ``backward`` cannot be differentiated (it leaves PyTorch, or you
# simply have not made it differentiable yet), say so by decorating it with
# ``once_differentiable``. The decorated ``backward`` runs without recording
# anything. When its incoming gradient requires grad, its results also get a
# node that raises a clear error if a later backward pass reaches it.

from torch.autograd.function import once_differentiable


class SquareOnce(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 2 * x * grad_out


# %%
# The first derivative is fine. A gradient penalty, which differentiates the
# gradient again, stops with a message that names the cause.

first_ok = gradcheck(SquareOnce.apply, (double_input(3),))
print("gradcheck:", first_ok)
assert first_ok

out = torch.tanh(SquareOnce.apply(x))
(grad_x,) = torch.autograd.grad(out.sum(), x, create_graph=True)
penalty = grad_x.pow(2).sum()
try:
    penalty.backward()
except RuntimeError as error:
    once_message = str(error)
    print("RuntimeError:", once_message)
assert "marked with @once_differentiable" in once_message

# %%
# Only a backward pass that runs the error node raises. The node hangs off a
# detached copy of the result, not off ``x``, so ``torch.autograd.grad`` with
# explicit inputs never reaches it and, with ``allow_unused=True``, quietly
# returns ``None``. :ref:`lesson-untracked-backward` shows every case.

out = torch.tanh(SquareOnce.apply(x))
(grad_x,) = torch.autograd.grad(out.sum(), x, create_graph=True)
(penalty_grad,) = torch.autograd.grad(grad_x.pow(2).sum(), x, allow_unused=True)
print("torch.autograd.grad with allow_unused=True:", penalty_grad)
assert penalty_grad is None

# %%
# This Function does not claim double backward, and ``gradgradcheck`` agrees:
# it fails. We print the first line of its message.

from torch.autograd.gradcheck import GradcheckError

try:
    gradgradcheck(SquareOnce.apply, (double_input(3),))
except GradcheckError as error:
    once_check_line = str(error).splitlines()[0]
    print("GradcheckError:", once_check_line)
assert once_check_line.startswith("Jacobian mismatch")

# %%
# The marker cannot catch every case: when the incoming gradient is a
# constant, it has nothing to attach its error to.
# :ref:`lesson-untracked-backward` shows such a case. ``gradgradcheck``
# remains the test that settles it.
#
# Rule 9: ``forward`` without ``ctx``, plus ``setup_context``
# -----------------------------------------------------------
#
# In the newer style, ``forward`` takes only the inputs, and a separate
# staticmethod ``setup_context(ctx, inputs, output)`` fills ``ctx``. Its
# ``inputs`` is the tuple of arguments that ``forward`` received and its
# ``output`` is what ``forward`` returned. ``backward`` is unchanged.
#
# The ``torch.func`` transforms (``grad``, ``vmap``, ``jacrev``, ...) need this
# split. ``vmap`` also needs a vmap rule (``generate_vmap_rule = True`` or a
# ``vmap`` staticmethod), see :ref:`lesson-torch-func`. The older style, in
# which ``forward`` takes ``ctx``, is fine for ordinary autograd (this cube
# passes both checks), but the transforms refuse it:


class CubeOldStyle(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * grad_out


check(CubeOldStyle.apply, double_input(3))

two = torch.tensor(2.0, dtype=torch.float64)
try:
    torch.func.grad(CubeOldStyle.apply)(two)
except RuntimeError as error:
    func_message = str(error).split(". ")[0]
    print("RuntimeError:", func_message)
assert "it must override the setup_context staticmethod" in func_message

# %%
# We printed the first sentence; the rest of the message is a link to the
# PyTorch documentation. The same cube in the newer style:


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


# %%
# ``torch.func.grad`` of a function of one scalar returns its derivative, as
# a function. Applied twice and three times, it gives :math:`3x^2 = 12`,
# :math:`6x = 12` and :math:`6` at :math:`x = 2`.

from torch.func import grad as func_grad

first = func_grad(Cube.apply)(two)
second = func_grad(func_grad(Cube.apply))(two)
third = func_grad(func_grad(func_grad(Cube.apply)))(two)
print("first:", first.item())
print("second:", second.item())
print("third:", third.item())
assert (first.item(), second.item(), third.item()) == (12.0, 12.0, 6.0)

check(Cube.apply, double_input(3))

# %%
# This cube has no vmap rule, so ``vmap`` still refuses it. We print the first
# sentence of the message.

try:
    torch.func.vmap(Cube.apply)(double_input(3))
except RuntimeError as error:
    vmap_message = str(error).split(". ")[0]
    print("RuntimeError:", vmap_message)
assert "does not have vmap support" in vmap_message

# %%
# Summary
# -------
#
# * Only tensors passed directly to ``forward`` are tracked; a tensor inside a
#   list or dictionary gets no gradient.
# * ``backward`` returns one value per input of ``forward``: ``None`` for
#   non-tensors and for inputs that need no gradient. Check
#   ``ctx.needs_input_grad`` to skip work.
# * Never change the incoming gradient in place; it may be shared.
# * Save tensors (inputs, outputs, or ``None``) with ``save_for_backward``;
#   keep other values as attributes of ``ctx``. Saved tensors must not be
#   changed in place before ``backward`` runs.
# * Call ``mark_dirty`` for an input that ``forward`` changes in place, and
#   ``mark_non_differentiable`` for outputs such as indices.
# * With ``set_materialize_grads(False)``, ``backward`` must handle ``None``.
# * Mark a ``backward`` that cannot be differentiated with
#   ``once_differentiable``, and still test with ``gradgradcheck``.
# * Use ``forward`` without ``ctx`` and a separate ``setup_context`` so that
#   ``torch.func`` transforms work.
#
# Next, :ref:`lesson-custom-layer` puts these rules together in a complete
# layer.
