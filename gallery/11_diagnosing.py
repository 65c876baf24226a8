r"""
.. _lesson-diagnosing:

Beyond: diagnosing a broken double backward
===========================================

A broken double backward rarely announces itself: the first derivative is
right and training runs. When ``gradgradcheck`` finally fails, you need to
read its message, to know which of its options to reach for, and to find the
Function to blame in a model. This lesson does all three.
"""

# %%
# A Function that detaches in backward
# ------------------------------------
#
# :math:`f(x) = \log(\cosh x)` has :math:`f'(x) = \tanh x` and
# :math:`f''(x) = 1 - \tanh^2 x`. This backward computes :math:`\tanh x` from
# the saved input *detached* (``x.detach()``, an alias cut off from the
# graph), as code written for inference might. The first derivative is right.

import re

import torch
from torch.autograd import gradcheck, gradgradcheck
from torch.autograd.gradcheck import GradcheckError


class LogCoshDetached(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.log(torch.cosh(x))

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.tanh(x.detach())  # the mistake


torch.manual_seed(0)
x = torch.randn(3, dtype=torch.float64, requires_grad=True)
v = torch.randn(3, dtype=torch.float64, requires_grad=True)
assert gradcheck(LogCoshDetached.apply, (x,))

# %%
# Reading a gradgradcheck failure
# -------------------------------
#
# :func:`~torch.autograd.gradgradcheck` checks what ``backward`` returns, here
# :math:`v \, f'(x)`, as a function of :math:`x` and of an output gradient
# :math:`v` (:ref:`the model of lesson 01 <backward-as-a-function>`). We pass
# our own :math:`v` as ``grad_outputs``. It must require grad, as the random
# default does: otherwise this cut reads differently (see below).

MISMATCH = "Jacobian mismatch for output 0 with respect to input 0"


def analytical_entries(message):
    """The numbers of the analytical Jacobian in a gradcheck message."""
    analytical = message.split("analytical:")[1].split("dtype")[0]
    return [float(number) for number in re.findall(r"-?\d+\.\d*(?:e[-+]?\d+)?", analytical)]


try:
    gradgradcheck(LogCoshDetached.apply, (x,), grad_outputs=(v,))
    message = ""
except GradcheckError as error:
    message = str(error)
    print(message)
assert message.startswith(MISMATCH)
assert not any(analytical_entries(message))

# %%
# * **output 0** is the first gradient ``backward`` returns, for an input that
#   requires grad, that is not ``None`` and has a graph (the others are
#   skipped, a blind spot shown below): here the gradient for ``x``.
#   **input 0** is ``x``: the inputs that require grad are counted first,
#   then the output gradients that do, so ``input 1`` is :math:`v`. The check stops at the first pair that
#   disagrees.
# * **numerical** is the Jacobian of that result by finite differences, one
#   row per entry of the input. Here it is diagonal, with :math:`v f''(x)`.
# * **analytical** is the same Jacobian through the graph that ``backward``
#   recorded. **All zeros**, unless an input lies within ``eps`` of a kink
#   (where even a correct ``backward`` jumps) or ``backward`` is
#   nondeterministic (``VeryJittery`` below, whose second derivative is truly
#   zero: the numerical side is its noise), means the result is cut off from
#   the input: look
#   for ``.detach()``, a tensor kept on ``ctx``, an intermediate of
#   ``forward`` saved with ``save_for_backward``
#   (:ref:`lesson 04 <lesson-ctx-mistake>`), part of ``backward`` under
#   ``torch.no_grad()``, code autograd cannot see (NumPy, whose
#   ``.numpy(force=True)`` detaches silently, or an operator with no autograd
#   kernel, :ref:`lesson 12 <lesson-custom-ops>`), or
#   :func:`@once_differentiable <torch.autograd.function.once_differentiable>`
#   on ``backward``, whose own error does not always fire
#   (:ref:`lesson 05 <lesson-untracked-backward>`).
#
# Both sides, confirmed by hand: a central difference of ``backward``'s result
# gives the numerical diagonal, and autograd finds no path back to ``x``.


def backward_result(x_value):
    leaf = x_value.detach().requires_grad_()
    return torch.autograd.grad(LogCoshDetached.apply(leaf), leaf, v)[0]


h = 1e-6
diagonal = (backward_result(x + h) - backward_result(x - h)) / (2 * h)
print("finite difference:", diagonal)
assert torch.allclose(diagonal, v * (1 - torch.tanh(x) ** 2), atol=1e-8)
assert all(f"{d:.4f}" in message for d in diagonal.tolist())

(grad_x,) = torch.autograd.grad(LogCoshDetached.apply(x), x, v, create_graph=True)
print("path to x:", torch.autograd.grad(grad_x.sum(), x, allow_unused=True)[0])
assert torch.autograd.grad(grad_x.sum(), x, allow_unused=True)[0] is None

# %%
# Other failures give other messages, or the same one for another reason.
# The error index lists the causes of each message and their fixes:
# :ref:`"Jacobian mismatch" <error-index-mismatch>` and
# :ref:`"Numerical gradient for function expected to be zero"
# <error-index-expected-zero>`. Three of them, shown here: the detach of
# ``LogCoshDetached`` with a :math:`v` that does not require grad, which
# reads "expected to be zero"; PyTorch's own ``torch.abs`` at its kink, with
# an all-zero analytical side; and its ``torch.tanh`` in ``float32``, with a
# non-zero one. Both pass away from the kink and in ``float64``.


import warnings


def gradgradcheck_message(function, inputs, **options):
    """The message of gradgradcheck's failure, or "" if it passes."""
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", r"Input #\d+ requires gradient and is not a double")
            gradgradcheck(function, inputs, **options)
    except GradcheckError as error:
        return str(error)
    return ""


EXPECTED_ZERO = "Numerical gradient for function expected to be zero"
no_grad_v = gradgradcheck_message(LogCoshDetached.apply, (x,), grad_outputs=(v.detach(),))
print("detach, v not requiring grad:", no_grad_v)
assert no_grad_v == EXPECTED_ZERO
kink = torch.tensor([0.0, 1.0, -2.0], dtype=torch.float64, requires_grad=True)
abs_at_kink = gradgradcheck_message(torch.abs, (kink,))
tanh32 = gradgradcheck_message(torch.tanh, (x.detach().float().requires_grad_(),))
print(
    "abs at 0:",
    abs_at_kink.splitlines()[0].rstrip(","),
    "| analytical:",
    analytical_entries(abs_at_kink),
)
print(
    "tanh in float32:",
    tanh32.splitlines()[0].rstrip(","),
    "| analytical:",
    analytical_entries(tanh32),
)
assert abs_at_kink.startswith(MISMATCH) and not any(analytical_entries(abs_at_kink))
assert gradgradcheck(torch.abs, (kink + 0.5,))
assert tanh32.startswith(MISMATCH) and any(analytical_entries(tanh32))
assert gradgradcheck(torch.tanh, (x,))

# %%
# The options that matter
# -----------------------
#
# * ``eps``, ``atol``, ``rtol``: the finite-difference step and the
#   tolerances. In ``float32`` a correct Function can fail at the defaults
#   (:ref:`lesson 01 <lesson-saving-inputs>`). ``Square`` is the easy case:
#   its central difference has no truncation error at any step (only
#   rounding, which a larger step shrinks), so a larger ``eps`` alone
#   (``1e-3``) makes it pass, and the default tolerances still catch a
#   backward that is half a percent off. The sum of cubes of 50 numbers is
#   large: the ``float32`` rounding of the sum, divided by the step, is the
#   larger error up to ``eps=1e-3``, and at ``1e-1`` the error of the central
#   difference on a cube, :math:`\epsilon^2`, is. For these 50 numbers, none
#   of the steps tried from ``1e-6`` to ``1e-1`` passes at the default
#   tolerances, while the cube of one number passes at ``1e-3``. For some
#   other draws a step between them passes (one is checked below): luck, not
#   a method. There, loosen ``atol`` only as far as a
#   deliberately wrong backward still fails.
#   In ``float64`` the defaults work for both.


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 2 * x * grad_out


class SquareSlightlyOff(Square):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 2.01 * x * grad_out  # half a percent too large


class CubeSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (x**3).sum()

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * grad_out


class CubeSumSlightlyOff(CubeSum):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 3.015 * x**2 * grad_out  # half a percent too large


def correct_and_wrong(functions, x, **options):
    """gradcheck's verdict on a correct Function and on a slightly wrong one."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Input #0 requires gradient and is not a double")
        return [gradcheck(f.apply, (x,), raise_exception=False, **options) for f in functions]


def as_float64(x):
    return x.detach().double().requires_grad_()


squares, cubes = (Square, SquareSlightlyOff), (CubeSum, CubeSumSlightlyOff)
x32, x32_50 = torch.randn(4, 3).requires_grad_(), torch.randn(50).requires_grad_()
square32 = {eps: correct_and_wrong(squares, x32, eps=eps) for eps in (1e-6, 1e-3)}
cube32 = {eps: correct_and_wrong(cubes, x32_50, eps=eps) for eps in (1e-6, 1e-4, 1e-3, 1e-2, 1e-1)}
cube32_loose = correct_and_wrong(cubes, x32_50, eps=1e-2, atol=1e-3)
one_cube32 = correct_and_wrong(cubes, x32_50[:1].detach().requires_grad_(), eps=1e-3)
lucky_draw = torch.randn(50, generator=torch.Generator().manual_seed(1096)).requires_grad_()
lucky = {eps: correct_and_wrong(cubes, lucky_draw, eps=eps) for eps in (1e-2, 10**-2.25, 1e-3)}


def rounding_error(x, eps):
    """How far float32 central differences of the sum of cubes are from exact ones."""
    steps = eps * torch.eye(x.numel())
    differences = ((x + steps) ** 3).sum(1) - ((x - steps) ** 3).sum(1)
    exact = 3 * x.double() ** 2 + eps**2  # a cube's central difference, in exact arithmetic
    return (differences.double() / (2 * eps) - exact).abs().max().item()


rounding = {eps: rounding_error(x32_50.detach(), eps) for eps in cube32}
float64 = [
    correct_and_wrong(squares, as_float64(x32)),
    correct_and_wrong(cubes, as_float64(x32_50)),
]
print("float32, square, correct and wrong, by eps:", square32)
print("float32, cubes, correct and wrong, by eps:", cube32)
print("float32, cubes, eps=1e-2 and atol=1e-3:", cube32_loose)
print("float32, the cube of one number, eps=1e-3:", one_cube32)
print("float32, cubes of another draw, by eps:", lucky)
print("rounding error, by eps:", {eps: f"{error:.0e}" for eps, error in rounding.items()})
print("float64, both, correct and wrong, defaults:", float64)
assert square32 == {1e-6: [False, False], 1e-3: [True, False]}
assert all(verdict == [False, False] for verdict in cube32.values())
assert cube32_loose == [True, False]
assert one_cube32 == [True, False]
assert lucky == {1e-2: [False, False], 10**-2.25: [True, False], 1e-3: [False, False]}
assert all(rounding[eps] > eps**2 for eps in (1e-6, 1e-4, 1e-3)) and rounding[1e-1] < 1e-1**2
assert float64 == [[True, False], [True, False]]

# %%
# * ``fast_mode=True`` compares one random projection of the Jacobians instead
#   of all of them: much faster for large inputs, and here it still catches
#   the detach. On a failure, its message gives the projected numbers, then
#   the full matrices, which it recomputes the slow way.

try:
    gradgradcheck(LogCoshDetached.apply, (x,), fast_mode=True)
    fast = ""
except GradcheckError as error:
    fast = str(error)
print("\n".join(fast.splitlines()[:3]))
assert fast.startswith(MISMATCH) and "fast mode" in fast

# %%
# * ``nondet_tol``: :func:`~torch.autograd.gradcheck` also runs ``backward``
#   twice and requires the same result. A nondeterministic backward (atomic
#   additions on a GPU, say) fails that, and ``nondet_tol`` is how much
#   difference to accept. :func:`~torch.autograd.gradgradcheck` records
#   ``backward`` once and differentiates that record twice, so there this
#   check sees only a nondeterministic double backward. A nondeterministic
#   ``backward`` shows there as noise in the finite differences, divided by
#   ``eps``: ``Jittery``'s is small enough to pass, ``VeryJittery``'s gives
#   a "Jacobian mismatch" that no ``nondet_tol`` absorbs. In ``fast_mode``,
#   ``nondet_tol`` is also the tolerance of the "expected to be zero" check,
#   so a loose one can hide a cut: keep it small.


class Jittery(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return 2 * x

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * (2 + 1e-12 * torch.randn_like(grad_out))  # not reproducible


class VeryJittery(Jittery):
    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * (2 + 1e-7 * torch.randn_like(grad_out))


try:
    gradcheck(Jittery.apply, (x,))
    jitter = ""
except GradcheckError as error:
    jitter = str(error)
print(
    jitter.split(",")[0],
    "| with nondet_tol=1e-10:",
    gradcheck(Jittery.apply, (x,), nondet_tol=1e-10),
)
assert jitter.startswith("Backward is not reentrant")
assert gradcheck(Jittery.apply, (x,), nondet_tol=1e-10)
very = gradgradcheck_message(VeryJittery.apply, (x,), nondet_tol=1e-3)
print(
    "gradgradcheck: Jittery",
    gradgradcheck(Jittery.apply, (x,)),
    "| VeryJittery:",
    very.splitlines()[0].rstrip(","),
)
assert very.startswith(MISMATCH) and not any(analytical_entries(very))  # no cut: noise
assert gradcheck(VeryJittery.apply, (x,), nondet_tol=1e-3)
loose = {
    fast_mode: gradgradcheck_message(
        LogCoshDetached.apply, (x,), grad_outputs=(v.detach(),), fast_mode=fast_mode, nondet_tol=10
    )
    for fast_mode in (False, True)
}
print("detach, v not requiring grad, nondet_tol=10, by fast_mode:", loose)
assert loose == {False: EXPECTED_ZERO, True: ""}  # fast mode hides the cut

# %%
# * ``check_undefined_grad`` (on by default) calls ``backward`` with
#   undefined gradients, which autograd passes as ``None`` after
#   ``ctx.set_materialize_grads(False)``; no other check does that for a
#   Function with one output. A ``backward`` that assumes a tensor passes
#   every other check and fails this one, here with a ``TypeError`` raised by
#   ``backward`` itself.


class TwiceNoMaterialize(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return 2 * x

    @staticmethod
    def backward(ctx, grad_out):
        return 2 * grad_out  # fails when grad_out is None


try:
    gradcheck(TwiceNoMaterialize.apply, (x,))
    undefined = ""
except TypeError as error:
    undefined = str(error)
print("TypeError:", undefined)
assert "NoneType" in undefined
assert gradcheck(TwiceNoMaterialize.apply, (x,), check_undefined_grad=False)

# %%
# A small model with one broken Function
# --------------------------------------
#
# Four layers, each a custom Function in an ``nn.Module``: a linear map, a
# softplus, a tanh and a per-feature scale. The softplus is planted broken: it
# keeps the sigmoid, its derivative, on ``ctx``.


class LinearFunction(torch.autograd.Function):
    """x @ weight.T + bias, for a batch of rows x; a bias of at most 2 dimensions
    broadcasts against the result (one with more would add dimensions to it)."""

    @staticmethod
    def forward(ctx, x, weight, bias):
        assert x.dim() == 2, "LinearFunction takes a batch of rows"
        assert bias.dim() <= 2, "the bias must not add dimensions to the result"
        ctx.save_for_backward(x, weight)
        ctx.bias_shape = bias.shape
        return x @ weight.T + bias

    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        return grad_out @ weight, grad_out.T @ x, grad_out.sum_to_size(ctx.bias_shape)


class SoftplusFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z):
        ctx.sigmoid = torch.sigmoid(z)  # the planted mistake
        return torch.nn.functional.softplus(z)

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * ctx.sigmoid


class TanhFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return grad_out * (1 - y * y)


class ScaleFunction(torch.autograd.Function):
    """x * weight, with broadcasting: each gradient is summed back to its input's shape."""

    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        return x * weight

    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        return (grad_out * weight).sum_to_size(x.shape), (grad_out * x).sum_to_size(weight.shape)


from collections import OrderedDict

from torch import nn


class Layer(nn.Module):
    """A module that calls a Function on its input and its parameters."""

    def __init__(self, function, *params):
        super().__init__()
        self.function = function
        self.params = nn.ParameterList(params)

    def forward(self, x):
        return self.function.apply(x, *self.params)


torch.manual_seed(0)
model = nn.Sequential(
    OrderedDict(
        linear=Layer(LinearFunction, torch.randn(4, 3) / 3**0.5, torch.zeros(4)),
        softplus=Layer(SoftplusFunction),
        tanh=Layer(TanhFunction),
        scale=Layer(ScaleFunction, torch.linspace(0.5, 1.5, 4)),
    )
).double()

# %%
# :func:`~torch.autograd.gradgradcheck` on the whole model fails, but its
# message names no layer: output 0 is the gradient for ``x`` and input 0 is
# ``x`` itself. And the analytical side is not zero: the tanh's own second
# derivative contributes to it. The first two layers alone, the linear map
# and the softplus, give all zeros.

x = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
assert gradcheck(model, (x,))
try:
    gradgradcheck(model, (x,))
    message = ""
except GradcheckError as error:
    message = str(error)
    print(message)
assert message.startswith(MISMATCH) and any(analytical_entries(message))
try:
    gradgradcheck(model[:2], (x,))
    first_two = ""
except GradcheckError as error:
    first_two = str(error)
print("first two layers, analytical side all zeros:", not any(analytical_entries(first_two)))
assert first_two.startswith(MISMATCH) and not any(analytical_entries(first_two))

# %%
# Technique 1: check each module on its own
# -----------------------------------------
#
# ``torch.func.functional_call`` turns a layer into a function of its input
# *and* its parameters, so the checks cover the weights' gradients too. Only
# the softplus fails, and only at second order.

from torch.func import functional_call

in_features = {"linear": 3, "softplus": 4, "tanh": 4, "scale": 4}


def check_module(module, n_features):
    names = [name for name, _ in module.named_parameters()]

    def function(x, *params):
        return functional_call(module, dict(zip(names, params, strict=True)), (x,))

    x = torch.randn(2, n_features, dtype=torch.float64, requires_grad=True)
    params = [p.detach().clone().requires_grad_() for p in module.parameters()]
    return [
        check(function, (x, *params), raise_exception=False) for check in (gradcheck, gradgradcheck)
    ]


def check_all(model):
    failing = []
    for name, module in model.named_children():
        first_ok, second_ok = check_module(module, in_features[name])
        print(f"{name:9} gradcheck: {first_ok!s:5}  gradgradcheck: {second_ok}")
        if not (first_ok and second_ok):
            failing.append(name)
    return failing


torch.manual_seed(1)
assert check_all(model) == ["softplus"]
assert check_module(model.softplus, in_features["softplus"]) == [True, False]

# %%
# Technique 2: walk the graph
# ---------------------------
#
# Checking module by module needs their input shapes and misses Functions
# called outside a module. Instead, look at a real backward pass. A custom
# Function's node is a ``torch.autograd.function.BackwardCFunction``, named
# after the Function plus ``Backward``. A hook registered on it with
# ``register_hook`` receives the gradients its backward returned and the ones
# it received. Under ``create_graph=True``, the result of a healthy backward
# of a Function whose derivative is not piecewise constant depends on what it
# saved, so it leads back to a leaf of the forward pass (``x`` or a
# parameter); a broken one only scales the incoming gradient, so every path
# from its result stops at the node of that gradient, at a leaf that is not
# one of the forward pass (a saved tensor that requires grad but has no
# ``grad_fn``, shown below), or nowhere. So the walk counts only the leaves of
# the forward pass. Autograd runs only the nodes on a path to the tensors
# passed as ``inputs``: pass every tensor the second derivative is taken with
# respect to, parameters included.

from functools import partial

from torch.autograd.function import BackwardCFunction


def graph_nodes(output):
    """Every node of the graph below ``output``."""
    found, seen, stack = [], set(), [output.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        found.append(node)
        stack.extend(next_node for next_node, _ in node.next_functions)
    return found


def reaches_a_leaf(tensors, stop_nodes, leaves):
    stack, seen = [t.grad_fn for t in tensors if t is not None], set(stop_nodes)
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if hasattr(node, "variable"):  # an AccumulateGrad node: a leaf
            if any(node.variable is leaf for leaf in leaves):
                return True
            continue
        stack.extend(next_node for next_node, _ in node.next_functions)
    return False


def connected_backwards(output, inputs):
    """For each custom Function on a path to inputs: did its backward's result reach a leaf?"""
    nodes = graph_nodes(output)
    leaves = [node.variable for node in nodes if hasattr(node, "variable")]
    connected = {}

    def record(grad_inputs, grad_outputs, name):
        stop = [g.grad_fn for g in grad_outputs if g is not None]
        ok = reaches_a_leaf(grad_inputs, stop, leaves)
        connected[name] = connected.get(name, True) and ok  # every call of it

    handles = [
        node.register_hook(partial(record, name=type(node).__name__))
        for node in nodes
        if isinstance(node, BackwardCFunction)
    ]
    torch.autograd.grad(output.sum(), inputs, create_graph=True)
    for handle in handles:
        handle.remove()
    return connected


x = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
connected = connected_backwards(model(x), (x, *model.parameters()))
print(connected)
assert [name for name, ok in connected.items() if not ok] == ["SoftplusFunctionBackward"]

w = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
on_weight = TanhFunction.apply(x @ SoftplusFunction.apply(w))  # the broken softplus on a weight
only_x, with_w = connected_backwards(on_weight, x), connected_backwards(on_weight, (x, w))
print("inputs x:", only_x, "| inputs x and w:", with_w)
assert only_x == {"TanhFunctionBackward": True}
assert with_w == {"TanhFunctionBackward": True, "SoftplusFunctionBackward": False}

# %%
# :func:`@once_differentiable <torch.autograd.function.once_differentiable>`
# makes such leaves too. When the incoming gradient requires grad, a
# ``backward`` marked with it returns results that hang from an ``Error`` node
# (:ref:`lesson 05 <lesson-untracked-backward>`), and that node hangs from new
# leaves of its own, detached aliases of the results. A walk that accepted any
# leaf would pass it.

from torch.autograd.function import once_differentiable


class SoftplusOnce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return torch.nn.functional.softplus(z)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        (z,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(z)


out = TanhFunction.apply(SoftplusOnce.apply(x))
(grad_x,) = torch.autograd.grad(out.sum(), x, create_graph=True)
error_inputs = [node for node, _ in grad_x.grad_fn.next_functions]
print(type(grad_x.grad_fn).__name__, "hangs from", [type(n).__name__ for n in error_inputs])
assert type(grad_x.grad_fn).__name__ == "Error"
assert all(hasattr(n, "variable") and n.variable is not x for n in error_inputs)
assert error_inputs[0].variable.data_ptr() == grad_x.data_ptr()  # an alias of the result
once = connected_backwards(out, x)
print(once)
assert once == {"TanhFunctionBackward": True, "SoftplusOnceBackward": False}

# With output gradients that do not require grad, there is no Error node
# either: the results have no graph, and the check says "expected to be zero".
try:
    gradgradcheck(SoftplusOnce.apply, (x,), grad_outputs=(torch.randn_like(x),))
    once_line = ""
except GradcheckError as error:
    once_line = str(error)
print("grad_outputs not requiring grad:", once_line)
assert once_line == "Numerical gradient for function expected to be zero"
try:
    gradgradcheck(SoftplusOnce.apply, (x,))
    once_default = ""
except GradcheckError as error:
    once_default = str(error)
assert once_default.startswith(MISMATCH) and not any(analytical_entries(once_default))

# %%
# The walk has blind spots. A Function whose backward rightly uses nothing
# that leads to a leaf (one whose derivative is a constant, such as
# ``2 * x``, one that uses its saved tensors only through comparisons or
# indices, such as a ReLU or a max pooling, or one whose saved tensors require
# no grad) is flagged too, so a flagged node is a suspect to confirm with
# :func:`~torch.autograd.gradgradcheck`. Worse, a backward that cuts only
# one of two saved tensors still reaches a leaf through the other and passes
# the walk: a clean walk proves nothing.


class ScaleHalfDetached(ScaleFunction):
    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        grad_x = (grad_out * weight.detach()).sum_to_size(x.shape)  # the mistake: detach
        return grad_x, (grad_out * x).sum_to_size(weight.shape)


w_half = torch.randn(3, dtype=torch.float64, requires_grad=True)
half = connected_backwards(ScaleHalfDetached.apply(x, w_half), (x, w_half))
print(half)
try:
    gradgradcheck(ScaleHalfDetached.apply, (x, w_half))
    half_line = ""
except GradcheckError as error:
    half_line = str(error).splitlines()[0]
    print("gradgradcheck:", half_line)
assert half == {"ScaleHalfDetachedBackward": True}
assert half_line.startswith("Jacobian mismatch for output 0 with respect to input 1")


class TimesTwo(torch.autograd.Function):
    """Its derivative is constant: its backward rightly uses nothing saved; the walk flags it."""

    @staticmethod
    def forward(ctx, x):
        return 2 * x

    @staticmethod
    def backward(ctx, grad_out):
        return 2 * grad_out


class ReLUFunction(torch.autograd.Function):
    """Saves its input, but its backward uses it only through a comparison."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * (x > 0)


assert connected_backwards(TimesTwo.apply(x), x) == {"TimesTwoBackward": False}
assert gradgradcheck(TimesTwo.apply, (x,))
assert connected_backwards(ReLUFunction.apply(x), x) == {"ReLUFunctionBackward": False}
assert gradgradcheck(ReLUFunction.apply, (x,))

# %%
# :func:`~torch.autograd.gradgradcheck` has a blind spot too: it checks only
# the gradients that have a graph. ``ScaleGradDetached`` detaches the whole
# gradient for ``x``, and passes both the check and the walk; the check fails
# ("expected to be zero") only when ``w`` does not require grad, so that no
# gradient for an input that requires grad has a graph. A direct test catches
# it: under ``create_graph=True``, with an output gradient that requires
# grad, every gradient that ``backward`` returns should require grad too
# (unless it is zero by design).


class ScaleGradDetached(ScaleFunction):
    @staticmethod
    def backward(ctx, grad_out):
        grad_x, grad_weight = ScaleFunction.backward(ctx, grad_out)
        return grad_x.detach(), grad_weight  # the mistake: detach


def gradients_with_graph(function, *inputs):
    """For each input, does the gradient that backward returns have a graph?"""
    out = function.apply(*inputs)
    grad_out = torch.randn_like(out, requires_grad=True)
    grads = torch.autograd.grad(out, inputs, grad_out, create_graph=True)
    return [grad.requires_grad for grad in grads]


detached = connected_backwards(ScaleGradDetached.apply(x, w_half), (x, w_half))
try:
    gradgradcheck(ScaleGradDetached.apply, (x, w_half.detach()))
    zero_line = ""
except GradcheckError as error:
    zero_line = str(error)
passes = gradgradcheck(ScaleGradDetached.apply, (x, w_half))
print(detached, "| gradgradcheck:", passes)
print("gradgradcheck, w not requiring grad:", zero_line)
print("gradients with a graph:", gradients_with_graph(ScaleGradDetached, x, w_half))
assert detached == {"ScaleGradDetachedBackward": True} and passes
assert zero_line == "Numerical gradient for function expected to be zero"
assert gradients_with_graph(ScaleFunction, x, w_half) == [True, True]
assert gradients_with_graph(ScaleGradDetached, x, w_half) == [False, True]

# %%
# One more clue: the node is the ``ctx`` of its Function
# (:ref:`lesson 06 <lesson-extending-rules>`), so the tensors that ``forward``
# kept as its attributes can be read from it, and so can its
# ``saved_tensors``. A saved input comes back as the input itself (a frozen
# weight, a buffer or a target included), and is no clue, unless saved-tensor
# hooks such as ``torch.autograd.graph.save_on_cpu`` are active: they give it
# back as a new tensor, with the input's ``grad_fn``, so a leaf input (a
# parameter, the model's input, a frozen weight) comes back without one and
# looks like a clue. Run this check without them.
# A saved output comes back with the node itself as its ``grad_fn``. Any
# other saved tensor was computed in ``forward``, where autograd records
# nothing, so it has no ``grad_fn``, even a view of an input, which still
# requires grad: a mask or indices, which are safe (:ref:`lesson 04
# <safe-intermediates>`), or an intermediate or a view, which cuts the second
# derivative like an attribute. So the clue is a saved tensor that is not one
# of the inputs and has no ``grad_fn``. In the model only the softplus keeps a
# tensor attribute. ``SoftplusSavesSigmoid`` saves its sigmoid with
# ``save_for_backward`` instead, and ``SquareSavesView`` a reshaped view of
# its input: no attribute, an untracked saved tensor, and a wrong second
# derivative. With output gradients that do not require grad, the sigmoid,
# which requires no grad either, makes the check say "expected to be zero",
# but the view, which does, still gives a "Jacobian mismatch".


class SoftplusSavesSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(torch.sigmoid(z))  # the mistake: an intermediate
        return torch.nn.functional.softplus(z)

    @staticmethod
    def backward(ctx, grad_out):
        (sigmoid,) = ctx.saved_tensors
        return grad_out * sigmoid


class SquareSavesView(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x.reshape(-1))  # the mistake: a view made in forward
        return x * x

    @staticmethod
    def backward(ctx, grad_out):
        (flat,) = ctx.saved_tensors
        return grad_out * 2 * flat.view_as(grad_out)


def clues(output, inputs):
    """Tensor attributes of output's custom node, and how many of its saved
    tensors are not among the inputs and have no grad_fn."""
    node = output.grad_fn
    attributes = [k for k, v in vars(node).items() if isinstance(v, torch.Tensor)]
    computed = [t for t in node.saved_tensors if not any(t is i for i in inputs)]
    return attributes, sum(t.grad_fn is None for t in computed)


kept = {}
h = x
for layer in model:
    out = layer(h)
    kept[type(out.grad_fn).__name__] = clues(out, (h, *layer.params))
    h = out
kept["SoftplusSavesSigmoidBackward"] = clues(SoftplusSavesSigmoid.apply(x), (x,))
kept["SquareSavesViewBackward"] = clues(SquareSavesView.apply(x), (x,))
print(kept)
assert {name: found for name, found in kept.items() if found != ([], 0)} == {
    "SoftplusFunctionBackward": (["sigmoid"], 0),
    "SoftplusSavesSigmoidBackward": ([], 1),
    "SquareSavesViewBackward": ([], 1),
}
# A frozen weight is saved as an input that requires no grad: no clue, and
# gradgradcheck passes. Counting every saved tensor that requires no grad
# would have flagged it.
w_frozen = w_half.detach()
scale_frozen = ScaleFunction.apply(x, w_frozen)
assert clues(scale_frozen, (x, w_frozen)) == ([], 0)
assert sum(not t.requires_grad for t in scale_frozen.grad_fn.saved_tensors) == 1
assert gradgradcheck(ScaleFunction.apply, (x, w_frozen))
# Under saved-tensor hooks, the two healthy saved inputs count as clues.
# Both are leaves: a non-leaf input comes back with its own grad_fn.
with torch.autograd.graph.save_on_cpu():
    scale_hooked = ScaleFunction.apply(x, w_half)
    h_tanh = torch.tanh(x)
    scale_hooked_tanh = ScaleFunction.apply(h_tanh, w_half)
assert clues(scale_hooked, (x, w_half)) == ([], 2)
assert clues(scale_hooked_tanh, (h_tanh, w_half)) == ([], 1)
assert [type(t.grad_fn).__name__ for t in scale_hooked_tanh.grad_fn.saved_tensors] == [
    "TanhBackward0",
    "NoneType",
]
assert clues(ScaleFunction.apply(x, w_half), (x, w_half)) == ([], 0)
try:
    gradgradcheck(SoftplusSavesSigmoid.apply, (x,))
    saved_message = ""
except GradcheckError as error:
    saved_message = str(error)
assert saved_message.startswith(MISMATCH) and not any(analytical_entries(saved_message))
(view,) = SquareSavesView.apply(x).grad_fn.saved_tensors
assert view.requires_grad and view.grad_fn is None  # requires grad, yet untracked
try:
    gradgradcheck(SquareSavesView.apply, (x,))
    view_message = ""
except GradcheckError as error:
    view_message = str(error)
assert view_message.startswith(MISMATCH)
ones = torch.ones_like(x)  # output gradients that do not require grad
sigmoid_no_grad_v = gradgradcheck_message(SoftplusSavesSigmoid.apply, (x,), grad_outputs=(ones,))
view_no_grad_v = gradgradcheck_message(SquareSavesView.apply, (x,), grad_outputs=(ones,))
print("grad_outputs not requiring grad, sigmoid:", sigmoid_no_grad_v)
print("grad_outputs not requiring grad, view:", view_no_grad_v.splitlines()[0].rstrip(","))
assert sigmoid_no_grad_v == EXPECTED_ZERO and view_no_grad_v.startswith(MISMATCH)
assert not any(analytical_entries(view_no_grad_v))

# %%
# Seeing the cut
# --------------
#
# The second-order graph of the first two layers: ``grad_x`` hangs from the
# linear weight only, through ``MmBackward0``. No path leads from it to
# ``LinearFunctionBackward``, which made the softplus's input: that missing
# path is the sigmoid's derivative, which the broken backward never recorded.
# The softplus saved nothing (no dashed line).

from torchviz import make_dot

out = model[:2](x)
(grad_x,) = torch.autograd.grad(out.sum(), x, create_graph=True)
weight = model.linear.params[0]
to_weight, to_x = torch.autograd.grad(
    grad_x.sum(), (weight, x), allow_unused=True, retain_graph=True
)
assert to_weight is not None and to_x is None and not out.grad_fn.saved_tensors
bias = model.linear.params[1]
labels = {"x": x, "grad_x": grad_x, "out": out, "linear weight": weight, "linear bias": bias}
make_dot((grad_x, x, out), params=labels)

# %%
# The fix
# -------
#
# Save the input and compute the sigmoid inside ``backward``, where autograd
# records it. With the fixed layer, both techniques report nothing, and the
# graph has the missing path through ``SigmoidBackward0`` back to ``x``.


class FixedSoftplusFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return torch.nn.functional.softplus(z)

    @staticmethod
    def backward(ctx, grad_out):
        (z,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(z)


model.softplus = Layer(FixedSoftplusFunction)
torch.manual_seed(1)
assert check_all(model) == []
fixed = connected_backwards(model(x), (x, *model.parameters()))
assert len(fixed) == len(model) and all(fixed.values())  # every layer walked, none cut

out = model[:2](x)
(grad_x,) = torch.autograd.grad(out.sum(), x, create_graph=True)
to_weight, to_x = torch.autograd.grad(
    grad_x.sum(), (weight, x), allow_unused=True, retain_graph=True
)
assert to_weight is not None and to_x is not None
assert "SigmoidBackward0" in {type(node).__name__ for node in graph_nodes(grad_x)}
labels.update({"grad_x": grad_x, "out": out})
make_dot((grad_x, x, out), params=labels)

# %%
# Summary
# -------
#
# * In a :func:`~torch.autograd.gradgradcheck` message, "output" counts the
#   gradients that have a graph, among those for inputs that require grad,
#   and "input" those inputs, then the output gradients that require grad.
#   An all-zero analytical side means a cut (away from kinks, with a
#   deterministic ``backward``): ``.detach()``,
#   ``ctx`` attributes, an intermediate passed to ``save_for_backward``,
#   ``torch.no_grad()``, code autograd cannot see (NumPy, an operator with no
#   autograd kernel),
#   :func:`@once_differentiable <torch.autograd.function.once_differentiable>`.
# * Test in ``float64``. In ``float32``, try a larger ``eps`` first, and
#   loosen ``atol`` or ``rtol`` only as far as a deliberately wrong
#   ``backward`` still fails. Use ``fast_mode`` for large inputs, a small
#   ``nondet_tol`` for a nondeterministic ``backward`` in
#   :func:`~torch.autograd.gradcheck`; ``check_undefined_grad`` is
#   what tests ``None`` gradients.
# * In a model, check each module with its parameters, or walk the graph with
#   hooks on the custom nodes, counting only the leaves of the forward pass.
#   Confirm every suspect with :func:`~torch.autograd.gradgradcheck`, check
#   that every gradient ``backward`` returns has a graph, and do not trust a
#   clean walk.
#
# For every pattern on one page, see :doc:`the summary </summary>`. Next,
# :ref:`lesson 12 <lesson-custom-ops>`: custom operators, the newer way to
# extend PyTorch, and double backward through them.
