r"""
.. _lesson-diagnosing:

Beyond: diagnosing a broken double backward
===========================================

A custom Function with a broken double backward rarely announces itself. The
first derivative is right, training runs, and only the second derivatives are
wrong. When ``gradgradcheck`` finally fails, you need two skills: reading what
its error message says, and finding which Function in a model is to blame.

You will learn:

* the parts of a ``gradgradcheck`` error message, and what an all-zero
  analytical Jacobian means;
* the different message you get when backward cannot be tracked at all;
* two ways to find the broken Function in a model: checking each module on its
  own, and walking the graph that double backward records.
"""

# %%
# A Function that detaches in backward
# ------------------------------------
#
# Take :math:`f(x) = \log(\cosh x)`. Its derivative is :math:`\tanh x`, and
# its second derivative is :math:`1 - \tanh^2 x`.
#
# The backward below computes :math:`\tanh x` from a *detached* copy of the
# saved input. Code like this can come from a wish to save memory, or from
# copying code that was written for inference. The first derivative is still
# right, so ``gradcheck`` passes.

import torch
from torch.autograd import gradcheck, gradgradcheck


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
first_ok = gradcheck(LogCoshDetached.apply, (x,))
print("gradcheck:", first_ok)
assert first_ok

# %%
# Reading a gradgradcheck failure
# -------------------------------
#
# ``gradgradcheck`` raises ``GradcheckError`` (a subclass of
# ``RuntimeError``, importable from ``torch.autograd.gradcheck``). We catch
# exactly that class and print the message.

from torch.autograd.gradcheck import GradcheckError

MISMATCH = "Jacobian mismatch for output 0 with respect to input 0"

try:
    gradgradcheck(LogCoshDetached.apply, (x,))
except GradcheckError as error:
    message = str(error)
    print(message)

assert issubclass(GradcheckError, RuntimeError)
assert message.startswith(MISMATCH)

# %%
# To read the message, remember what ``gradgradcheck`` tests. It builds a new
# function from your backward: it takes the inputs :math:`x` and a random
# output gradient :math:`v`, and returns what backward returns,
# :math:`v \cdot f'(x)`. Then it runs ``gradcheck`` on that new function.
# So, in the message:
#
# * **"output 0"** is the first value that backward returns: the gradient
#   with respect to ``x``.
# * **"input 0"** is ``x``. The inputs of the new function are first the
#   inputs of your Function, then the output gradients, so "input 1" would
#   be :math:`v`. The check stops at the first pair that disagrees.
# * **numerical** is the Jacobian of backward's result, estimated by finite
#   differences. It has one row per entry of the input and one column per
#   entry of the output. Here it is diagonal, with :math:`v \cdot f''(x)` on
#   the diagonal.
# * **analytical** is the same Jacobian as autograd computes it, by
#   differentiating the graph that backward recorded.
#
# An **all-zero analytical Jacobian** means that backward's result is not
# connected to the input in the graph. Somewhere, backward used a value that
# came from the input but was cut off from it: a ``.detach()``, a tensor kept
# as an attribute of ``ctx``, a computation under ``torch.no_grad()``, or a
# backward decorated with ``@once_differentiable``.
#
# We can confirm both parts directly, with our own :math:`v`. A finite
# difference of backward's result gives :math:`v \cdot f''(x)`, as in the
# numerical Jacobian. But autograd finds no path from that result back to
# ``x``: the gradient that backward returns depends on :math:`v` only.

v = torch.randn(3, dtype=torch.float64, requires_grad=True)


def backward_result(x_value):
    x_leaf = x_value.detach().requires_grad_(True)
    y = LogCoshDetached.apply(x_leaf)
    return torch.autograd.grad(y, x_leaf, v)[0]


h = 1e-6
difference = (backward_result(x + h) - backward_result(x - h)) / (2 * h)
expected = v * (1 - torch.tanh(x) ** 2)
print("finite difference:", difference)
assert torch.allclose(difference, expected, atol=1e-8)

y = LogCoshDetached.apply(x)
(grad_x,) = torch.autograd.grad(y, x, v, create_graph=True)
(through_x,) = torch.autograd.grad(grad_x.sum(), x, allow_unused=True)
print("grad_x requires grad:", grad_x.requires_grad)
print("derivative of grad_x with respect to x:", through_x)
assert grad_x.requires_grad and through_x is None

# %%
# The decorator ``@once_differentiable`` gives the same all-zero analytical
# Jacobian. It runs backward under ``torch.no_grad()`` and hangs the result
# off an error node that ``gradgradcheck`` never runs, so the result is
# connected to neither ``x`` nor :math:`v`.

from torch.autograd.function import once_differentiable


class LogCoshOnce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.log(torch.cosh(x))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.tanh(x)


try:
    gradgradcheck(LogCoshOnce.apply, (x,))
except GradcheckError as error:
    once_message = str(error)
    print(once_message)

assert once_message.startswith(MISMATCH)
all_zero = str(torch.zeros(3, 3, dtype=torch.float64))
assert "analytical:" + all_zero in once_message

y = LogCoshOnce.apply(x)
(grad_x,) = torch.autograd.grad(y, x, v, create_graph=True)
through = torch.autograd.grad(grad_x.sum(), (x, v), allow_unused=True)
print("derivatives of grad_x with respect to x and v:", through)
assert through == (None, None)

# %%
# A backward that autograd cannot see
# -----------------------------------
#
# A different message appears when nothing in backward is tracked at all.
# This version computes :math:`\tanh x` with NumPy and wraps the result back
# into a tensor. Autograd records nothing, not even the multiplication by
# :math:`v`.

import numpy as np


class LogCoshNumPy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.log(torch.cosh(x))

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        x_np, grad_np = x.detach().numpy(), grad_out.detach().numpy()
        return torch.from_numpy(np.asarray(np.tanh(x_np) * grad_np))


first_ok = gradcheck(LogCoshNumPy.apply, (x,))
print("gradcheck:", first_ok)
assert first_ok

try:
    gradgradcheck(LogCoshNumPy.apply, (x,))
except GradcheckError as error:
    message = str(error)
    print(message)

expected = "Numerical gradient for function expected to be zero"
assert message == expected

# %%
# Here backward's result does not require grad, so the function that
# ``gradgradcheck`` built has no differentiable output. In that case
# ``gradcheck`` expects the numerical Jacobian to be zero, and checks only
# that. It is not zero, hence the message.

y = LogCoshNumPy.apply(x)
(grad_x,) = torch.autograd.grad(y, x, v, create_graph=True)
print("grad_x requires grad:", grad_x.requires_grad)
assert not grad_x.requires_grad

# %%
# What the message tells you
# --------------------------
#
# * "Jacobian mismatch ... analytical" all zero: backward's result is
#   connected to the output gradient but not to the input. Look for
#   ``.detach()``, tensors kept on ``ctx`` as attributes, and
#   ``torch.no_grad()`` blocks in backward. A backward decorated with
#   ``@once_differentiable`` gives the same message; its result is connected
#   to neither.
# * "Numerical gradient for function expected to be zero": nothing in
#   backward is tracked. Backward runs code that autograd cannot see (NumPy,
#   SciPy, a C++ extension). Wrap that code in a second custom Function with
#   its own backward.
# * "Jacobian mismatch" with a nonzero analytical Jacobian that differs from
#   the numerical one: backward is tracked, but part of it is cut off or the
#   formula is wrong. This is also what a single broken Function looks like
#   inside a larger model, as the next sections show.

# %%
# A small model with one broken Function
# --------------------------------------
#
# The model has four layers, each a custom Function inside an ``nn.Module``:
# a linear map, a softplus, a tanh and a per-feature scale. One of them is
# planted broken: the softplus computes the sigmoid in forward and keeps it
# as an attribute of ``ctx``, to reuse it in backward. The sigmoid is the
# derivative of softplus, so the first derivative is right.


class LinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        return x @ weight.T + bias

    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        return grad_out @ weight, grad_out.T @ x, grad_out.sum(0)


class SoftplusFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.sigmoid = torch.sigmoid(x)  # the planted mistake
        return torch.nn.functional.softplus(x)

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
    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        return x * weight

    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        return grad_out * weight, (grad_out * x).sum(0)


# %%
# The modules hold the parameters and call the Functions.

from collections import OrderedDict

from torch import nn


class LinearLayer(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        weight = torch.randn(n_out, n_in) / n_in**0.5
        self.weight = nn.Parameter(weight)
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x):
        return LinearFunction.apply(x, self.weight, self.bias)


class SoftplusLayer(nn.Module):
    def forward(self, x):
        return SoftplusFunction.apply(x)


class TanhLayer(nn.Module):
    def forward(self, x):
        return TanhFunction.apply(x)


class ScaleLayer(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(0.5, 1.5, n))

    def forward(self, x):
        return ScaleFunction.apply(x, self.weight)


torch.manual_seed(0)
layers = OrderedDict(
    linear=LinearLayer(3, 4),
    softplus=SoftplusLayer(),
    tanh=TanhLayer(),
    scale=ScaleLayer(4),
)
model = nn.Sequential(layers).double()
print(model)

# %%
# Checking the whole model
# ------------------------
#
# ``gradgradcheck`` on the whole model, with respect to its input, finds the
# problem. Its message names only the model's output and input, though. The
# analytical Jacobian is not zero this time, because the other layers
# contribute to it; it is simply different from the numerical one.

x = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
first_ok = gradcheck(model, (x,))
print("gradcheck:", first_ok)
assert first_ok

try:
    gradgradcheck(model, (x,))
except GradcheckError as error:
    message = str(error)
    print(message)

assert message.startswith(MISMATCH)

# %%
# As before, we can confirm the claim about the analytical Jacobian directly:
# the gradient with respect to ``x`` is connected to ``x`` in the graph, and
# differentiating it again gives a nonzero result.

(grad_x,) = torch.autograd.grad(model(x).sum(), x, create_graph=True)
(through_x,) = torch.autograd.grad(grad_x.sum(), x)
print("derivative of grad_x with respect to x:")
print(through_x)
assert through_x.abs().max() > 0

# %%
# Technique 1: check each module on its own
# -----------------------------------------
#
# The simplest search runs both checks on each layer separately. A layer with
# parameters is turned into a plain function of its input *and* its
# parameters with ``torch.func.functional_call``, so that the checks cover
# the gradients of the weights too. Each layer gets a small random
# ``float64`` input.

from torch.func import functional_call


def check_module(module, n_features):
    names = [name for name, _ in module.named_parameters()]

    def function(x, *params):
        named_params = dict(zip(names, params, strict=True))
        return functional_call(module, named_params, (x,))

    x = torch.randn(2, n_features, dtype=torch.float64)
    x.requires_grad_(True)
    params = [p.detach().clone() for p in module.parameters()]
    params = [p.requires_grad_(True) for p in params]
    results = []
    for check in (gradcheck, gradgradcheck):
        try:
            results.append(check(function, (x, *params)))
        except GradcheckError:
            results.append(False)
    return results


# %%
# The loop prints one line per layer. Only the softplus fails, and only its
# second-order check.

in_features = {"linear": 3, "softplus": 4, "tanh": 4, "scale": 4}


def check_all(model):
    failing = []
    print(f"{'module':10s} {'gradcheck':10s} gradgradcheck")
    for name, module in model.named_children():
        first_ok, second_ok = check_module(module, in_features[name])
        print(f"{name:10s} {str(first_ok):10s} {second_ok}")
        if not (first_ok and second_ok):
            failing.append(name)
    return failing


torch.manual_seed(1)
failing = check_all(model)
print("failing modules:", failing)
assert failing == ["softplus"]

# %%
# The loop above turns every failure into ``False``. To see the message for
# the broken layer, run its check once more without that loop. The message
# is the all-zero case of the first section: the sigmoid kept on ``ctx`` has
# no link to the input.

torch.manual_seed(2)
x = torch.randn(3, dtype=torch.float64, requires_grad=True)
first_ok = gradcheck(SoftplusFunction.apply, (x,))
print("gradcheck:", first_ok)
assert first_ok

try:
    gradgradcheck(SoftplusFunction.apply, (x,))
except GradcheckError as error:
    message = str(error)
    print(message)

assert message.startswith(MISMATCH)
zeros = "[[0., 0., 0.],\n        [0., 0., 0.],\n        [0., 0., 0.]]"
assert "analytical:tensor(" + zeros in message

# %%
# Technique 2: walk the graph
# ---------------------------
#
# Checking modules one by one needs to know their input shapes, and it does
# not see Functions that are called outside a module. The second technique
# looks at the graph of a real backward pass instead.
#
# First, walk the graph of the model's output through ``next_functions`` and
# collect the nodes that belong to custom Functions. Their class is a
# subclass of ``torch.autograd.function.BackwardCFunction``, and its name is
# the Function's name followed by ``Backward``.

from torch.autograd.function import BackwardCFunction


def custom_nodes(output):
    found, seen, stack = [], set(), [output.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if isinstance(node, BackwardCFunction):
            found.append(node)
        stack.extend(next_node for next_node, _ in node.next_functions)
    return found


x = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
out = model(x)
nodes = custom_nodes(out)
for node in nodes:
    print(type(node).__name__)
assert len(nodes) == 4

# %%
# Next, ask of each node: when its backward ran with ``create_graph=True``,
# was the result connected to anything besides the incoming gradient? A
# healthy backward uses a saved input, output or weight, so its result leads
# back to a leaf of the graph (the input ``x`` or a parameter). A broken one,
# like our softplus, only multiplies the incoming gradient by a constant, so
# every path from its result passes through the incoming gradient.
#
# A hook registered on a node with ``register_hook`` receives the gradients
# that its backward returned and the gradients it received. The helper below
# walks the graph of the returned gradients, stops at the node of the
# incoming gradient, and reports whether it found a leaf.


def reaches_a_leaf(tensors, stop_nodes):
    stack = [t.grad_fn for t in tensors if t is not None]
    seen = set(stop_nodes)
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        # An AccumulateGrad node has a .variable: it stands for a leaf.
        if hasattr(node, "variable"):
            return True
        stack.extend(next_node for next_node, _ in node.next_functions)
    return False


connected = {}


def record(grad_inputs, grad_outputs, name):
    stop = [g.grad_fn for g in grad_outputs if g is not None]
    connected[name] = reaches_a_leaf(grad_inputs, stop)


# %%
# Register the hook on every custom node, run one backward pass with
# ``create_graph=True``, and remove the hooks. The node whose backward is cut
# off from the graph is the culprit.

from functools import partial

handles = []
for node in nodes:
    hook = partial(record, name=type(node).__name__)
    handles.append(node.register_hook(hook))

(grad_x,) = torch.autograd.grad(out.sum(), x, create_graph=True)
for handle in handles:
    handle.remove()

for name, ok in connected.items():
    print(f"{name:25s} backward connected to the graph: {ok}")
culprits = [name for name, ok in connected.items() if not ok]
print("culprit:", culprits)
assert culprits == ["SoftplusFunctionBackward"]

# %%
# This test has two blind spots. A Function that is linear in all its inputs,
# such as multiplication by a fixed number, has a backward that rightly uses
# no saved tensor, and the walk would flag it too. Treat a flagged node as a
# suspect, and confirm with ``gradgradcheck`` as in technique 1.
#
# The other blind spot hides a real bug. A backward that cuts only one of two
# saved tensors (here with ``weight.detach()``) still reaches a leaf through
# the other one, so the walk reports it as connected. A clean walk proves
# nothing; only ``gradgradcheck`` does.


class ScaleHalfDetached(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        return x * weight

    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        return grad_out * weight.detach(), (grad_out * x).sum(0)  # one cut


x_half = torch.randn(2, 4, dtype=torch.float64, requires_grad=True)
w_half = torch.randn(4, dtype=torch.float64, requires_grad=True)
out_half = ScaleHalfDetached.apply(x_half, w_half)
handle = out_half.grad_fn.register_hook(partial(record, name="half"))
torch.autograd.grad(out_half.sum(), (x_half, w_half), create_graph=True)
handle.remove()
print("ScaleHalfDetachedBackward connected to the graph:", connected["half"])
assert connected.pop("half")

try:
    gradgradcheck(ScaleHalfDetached.apply, (x_half, w_half))
except GradcheckError as error:
    half_line = str(error).splitlines()[0]
    print("GradcheckError:", half_line)
assert half_line.startswith("Jacobian mismatch for output 0 with respect to input 1")

# %%
# One more clue is at hand. The node of a custom Function is also its
# ``ctx`` object, so the attributes that forward set on ``ctx`` can be read
# from the node. A tensor found there is a tensor that was not saved with
# ``save_for_backward``.


def tensors_on_ctx(node):
    attributes = vars(node).items()
    return [k for k, v in attributes if isinstance(v, torch.Tensor)]


kept = {type(node).__name__: tensors_on_ctx(node) for node in nodes}
for name, keys in kept.items():
    print(f"{name:25s} tensors kept on ctx: {keys}")

assert kept["SoftplusFunctionBackward"] == ["sigmoid"]
assert sum(len(keys) for keys in kept.values()) == 1

# %%
# Seeing the cut
# --------------
#
# Draw the second-order graph of the first two layers, the linear map and the
# broken softplus. ``grad_x`` is the gradient of their output with respect to
# ``x``, computed with ``create_graph=True``. It hangs from the weight only,
# through ``MmBackward0``: the linear map's backward multiplied by the weight.
# No path leads from ``grad_x`` to ``LinearFunctionBackward``, the node that
# produced the softplus's input. That missing path is the derivative of the
# sigmoid, which the softplus's backward never recorded.
#
# Orange boxes are tensors that a custom Function saved with
# ``save_for_backward``. ``LinearFunctionBackward`` has two (``x`` and the
# weight); ``SoftplusFunctionBackward`` has none, which is a clue in itself.

from torchviz import make_dot

x = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
out = model[:2](x)
(grad_x,) = torch.autograd.grad(out.sum(), x, create_graph=True)

labels = {"x": x, "grad_x": grad_x, "out": out}
labels.update(model.named_parameters())
graph = make_dot((grad_x, x, out), params=labels)
graph.comment = (
    "Second-order graph of a linear layer followed by the broken "
    "softplus: grad_x comes from MmBackward0 and the linear weight "
    "only, with no path back to x."
)
graph

# %%
# The lesson checks what the picture shows: the softplus saved no tensor, and
# the graph of ``grad_x`` reaches the weight of the linear map, but not ``x``.


def reaches(node, leaf):
    if node is None:
        return False
    if getattr(node, "variable", None) is leaf:
        return True
    return any(reaches(nxt, leaf) for nxt, _ in node.next_functions)


weight = model.linear.weight
linear_node = out.grad_fn.next_functions[0][0]
assert type(linear_node).__name__ == "LinearFunctionBackward"
print("tensors saved by the linear map:", len(linear_node.saved_tensors))
assert len(linear_node.saved_tensors) == 2
print("tensors saved by the softplus:", len(out.grad_fn.saved_tensors))
print("grad_x depends on the weight:", reaches(grad_x.grad_fn, weight))
print("grad_x depends on x:", reaches(grad_x.grad_fn, x))
assert len(out.grad_fn.saved_tensors) == 0
assert reaches(grad_x.grad_fn, weight)
assert not reaches(grad_x.grad_fn, x)

# %%
# The fix
# -------
#
# Save the input with ``save_for_backward`` and compute the sigmoid inside
# backward, where autograd records it. Replace the layer in the model and run
# both techniques again: nothing is reported.


class FixedSoftplusFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.nn.functional.softplus(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)


class FixedSoftplusLayer(nn.Module):
    def forward(self, x):
        return FixedSoftplusFunction.apply(x)


model.softplus = FixedSoftplusLayer()

torch.manual_seed(1)
failing = check_all(model)
print("failing modules:", failing)
assert failing == []

# %%
# The graph walk agrees.

x = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
out = model(x)
connected.clear()
handles = []
for node in custom_nodes(out):
    hook = partial(record, name=type(node).__name__)
    handles.append(node.register_hook(hook))

torch.autograd.grad(out.sum(), x, create_graph=True)
for handle in handles:
    handle.remove()
for name, ok in connected.items():
    print(f"{name:30s} backward connected to the graph: {ok}")
assert all(connected.values()) and len(connected) == 4

# %%
# Now the second-order graph of the first two layers has the path that was
# missing: ``SigmoidBackward0`` leads from ``grad_x`` back to
# ``LinearFunctionBackward`` and on to ``x``. The fixed softplus also has its
# saved input, the orange box without a name.

out = model[:2](x)
(grad_x,) = torch.autograd.grad(out.sum(), x, create_graph=True)
assert len(out.grad_fn.saved_tensors) == 1
assert reaches(grad_x.grad_fn, x)


def node_names(node):
    """The class names of all nodes in the backward graph under node."""
    if node is None:
        return set()
    names = {type(node).__name__}
    for next_node, _ in node.next_functions:
        names |= node_names(next_node)
    return names


under_grad_x = node_names(grad_x.grad_fn)
assert {"SigmoidBackward0", "LinearFunctionBackward"} <= under_grad_x

labels = {"x": x, "grad_x": grad_x, "out": out}
labels.update(model.named_parameters())
graph = make_dot((grad_x, x, out), params=labels)
graph.comment = (
    "Second-order graph of the linear layer followed by the fixed "
    "softplus: grad_x now leads through SigmoidBackward0 to "
    "LinearFunctionBackward and back to x."
)
graph

# %%
# Summary
# -------
#
# * ``gradgradcheck`` raises ``GradcheckError``. "Output" means a gradient
#   returned by backward; "input" means an input of your Function, or after
#   them an output gradient.
# * An all-zero analytical Jacobian means that backward's result is cut off
#   from the input: look for ``.detach()``, tensors kept on ``ctx``,
#   ``torch.no_grad()``, and ``@once_differentiable``. "Numerical gradient
#   for function expected to be zero" means that nothing in backward was
#   tracked.
# * In a model, check each module on its own in ``float64``, or walk the
#   graph with hooks on the custom nodes to find the backward whose result
#   reaches no leaf.
#
# For the uses that make this worth the effort, see
# :ref:`lesson-second-derivatives`. For the rules of all the lessons on one
# page, read the :doc:`/summary`.
