r"""
.. _lesson-custom-layer:

A custom layer: a linear map with its own backward
==================================================

So far the Functions in these lessons took one tensor and returned one. A
real layer takes several: an input, a weight and an optional bias, and
backward must return a gradient for each of them. This lesson builds a linear
layer from scratch, as a custom Function inside an ``nn.Module``, checks it
against PyTorch's own ``torch.nn.functional.linear``, trains it, and then
makes it support double backward.

It ends with the advice that matters most: put as little as possible inside
your own Function.
"""

# %%
# The formulas
# ------------
#
# A linear layer maps an input :math:`x` with ``in_features`` columns to an
# output with ``out_features`` columns:
#
# .. math::
#
#    y = x W^\top + b
#
# The weight :math:`W` has shape ``(out_features, in_features)`` and the bias
# :math:`b` has shape ``(out_features,)``. Given the gradient :math:`g` of the
# loss with respect to :math:`y`, with rows :math:`g_i`, the three gradients
# are:
#
# .. math::
#
#    \frac{\partial L}{\partial x} = g W, \quad
#    \frac{\partial L}{\partial W} = g^\top x, \quad
#    \frac{\partial L}{\partial b} = \sum_i g_i
#
# The input may have extra batch dimensions in front, for example
# ``(batch, time, in_features)``. The weight and the bias are shared by every
# row, so their gradients add up the contributions of all rows. The helper
# below flattens the batch dimensions into one before it multiplies.
#
# The helper takes ``needs``, which ``backward`` passes from
# ``ctx.needs_input_grad`` (:ref:`lesson-extending-rules`, rule 2): a
# gradient nobody wants is not computed, and is returned as ``None``.

import torch


def linear_grads(needs, input, weight, bias, grad_out):
    """Gradients of ``input @ weight.T + bias``."""
    grad_input = grad_weight = grad_bias = None
    rows_in = input.reshape(-1, input.shape[-1])
    rows_out = grad_out.reshape(-1, grad_out.shape[-1])
    if needs[0]:
        grad_input = grad_out @ weight
    if needs[1]:
        grad_weight = rows_out.t() @ rows_in
    if bias is not None and needs[2]:
        grad_bias = rows_out.sum(0)
    return grad_input, grad_weight, grad_bias


# %%
# The Function
# ------------
#
# ``forward`` takes the input, the weight and an optional bias, and saves all
# three. :meth:`~torch.autograd.function.FunctionCtx.save_for_backward` accepts
# ``None``, so a missing bias needs no special case. ``backward`` returns one
# gradient per input of ``forward``; when the bias is missing, its gradient is
# ``None``.
#
# For now, ``backward`` is marked
# :func:`~torch.autograd.function.once_differentiable`
# (:ref:`lesson-untracked-backward`): until its second derivative is checked,
# the Function says that it has none. Later in this lesson we remove the mark.

from torch.autograd.function import once_differentiable


class LinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input @ weight.t()
        if bias is not None:
            output = output + bias
        return output

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        input, weight, bias = ctx.saved_tensors
        needs = ctx.needs_input_grad
        return linear_grads(needs, input, weight, bias, grad_out)


# %%
# In training, the data does not require grad, so ``backward`` is told to skip
# its gradient: one matrix product less per step.

torch.manual_seed(0)
data = torch.randn(5, 3)
w = torch.randn(2, 3, requires_grad=True)
b = torch.randn(2, requires_grad=True)
out = LinearFunction.apply(data, w, b)
print("needs_input_grad:", out.grad_fn.needs_input_grad)
assert out.grad_fn.needs_input_grad == (False, True, True)

# %%
# A module around the Function
# ----------------------------
#
# Users expect a layer, not a Function. The module below holds the weight and
# the bias as ``nn.Parameter`` objects, so that ``parameters()`` finds them and
# an optimizer can update them. Without a bias, it registers ``None`` in its
# place, so ``layer.bias`` still exists.
#
# ``reset_parameters`` gives the parameters the same starting values as
# ``nn.Linear``: a Kaiming uniform weight with ``a = sqrt(5)``, and a bias
# drawn uniformly from :math:`\left( -1/\sqrt{n}, 1/\sqrt{n} \right)`, where
# :math:`n` is ``in_features``. ``extra_repr`` adds the layer's sizes to the
# text that ``print(layer)`` shows.

import math

from torch import nn


class Linear(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        if bias:
            self.bias = nn.Parameter(torch.empty(out_features))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features)
            nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return LinearFunction.apply(input, self.weight, self.bias)

    def extra_repr(self):
        return (
            f"in_features={self.in_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


print(Linear(3, 2))
print(Linear(3, 2, bias=False))

# %%
# Both layers draw their parameters in the same order from the random
# generator. So with the same seed, our layer starts exactly where
# ``nn.Linear`` starts.

torch.manual_seed(1)
ours = Linear(4, 3)
torch.manual_seed(1)
reference = nn.Linear(4, 3)

assert torch.equal(ours.weight, reference.weight)
assert torch.equal(ours.bias, reference.bias)
print("same initial parameters as nn.Linear:", True)

# %%
# Checking against ``torch.nn.functional.linear``
# -----------------------------------------------
#
# :func:`torch.nn.functional.linear` computes the same map with PyTorch's own
# backward. On the same input and the same parameters, our layer must give
# the same output and the same three gradients. The input here has two batch
# dimensions, to test the flattening in ``linear_grads``.

import torch.nn.functional as F

torch.manual_seed(2)
x = torch.randn(2, 5, 4, requires_grad=True)
params = (x, ours.weight, ours.bias)

out_ours = ours(x)
out_ref = F.linear(x, ours.weight, ours.bias)
grads_ours = torch.autograd.grad((out_ours**2).sum(), params)
grads_ref = torch.autograd.grad((out_ref**2).sum(), params)

print("output shape:", tuple(out_ours.shape))
assert torch.allclose(out_ours, out_ref)
names = ("input", "weight", "bias")
for name, g_ours, g_ref in zip(names, grads_ours, grads_ref, strict=True):
    assert torch.allclose(g_ours, g_ref, atol=1e-6)
    print(f"grad of {name} matches F.linear:", True)

# %%
# Checking against finite differences
# -----------------------------------
#
# :func:`~torch.autograd.gradcheck` checks the hand-written backward for all
# three inputs at once, with a bias and without.

from torch.autograd import gradcheck, gradgradcheck

torch.manual_seed(3)
x64 = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
w64 = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
b64 = torch.randn(2, dtype=torch.float64, requires_grad=True)

ok_bias = gradcheck(LinearFunction.apply, (x64, w64, b64))
ok_no_bias = gradcheck(LinearFunction.apply, (x64, w64))
print("gradcheck with bias:", ok_bias)
print("gradcheck without bias:", ok_no_bias)
assert ok_bias and ok_no_bias

# %%
# Training for a few steps
# ------------------------
#
# The last test of a layer is whether it learns. We make up a linear map with
# known weights, generate data from it with a little noise, and fit our layer
# with plain stochastic gradient descent.

torch.manual_seed(4)
true_weight = torch.tensor([[2.0, -1.0, 0.5], [0.0, 3.0, -2.0]])
true_bias = torch.tensor([1.0, -0.5])
inputs = torch.randn(64, 3)
noise = 0.01 * torch.randn(64, 2)
targets = inputs @ true_weight.t() + true_bias + noise

layer = Linear(3, 2)
optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
losses = []
for _ in range(50):
    optimizer.zero_grad()
    loss = F.mse_loss(layer(inputs), targets)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

print(f"loss at step 0:  {losses[0]:.4f}")
print(f"loss at step 49: {losses[-1]:.4f}")
assert losses[-1] < 0.01 * losses[0]

# %%
# The loss fell by more than a factor of a hundred, and the learned weight is
# close to the true one.

print("learned weight:", layer.weight.detach().round(decimals=2))
assert torch.allclose(layer.weight, true_weight, atol=0.1)

# %%
# Asking for a second derivative
# ------------------------------
#
# A penalty on the size of a gradient, as used to train some generative models,
# needs double backward. Through the marked ``backward``, the second backward
# pass stops with the marker's error, and :func:`~torch.autograd.gradgradcheck`
# fails.

from torch.autograd.gradcheck import GradcheckError

out = LinearFunction.apply(x64, w64, b64)
(grad_w,) = torch.autograd.grad((out**2).sum(), w64, create_graph=True)
try:
    grad_w.pow(2).sum().backward()
    message = ""
except RuntimeError as err:
    message = str(err)
    print("RuntimeError:", message)
try:
    gradgradcheck(LinearFunction.apply, (x64, w64, b64))
    first_line = ""
except GradcheckError as err:
    first_line = str(err).splitlines()[0]
    print("GradcheckError:", first_line)
assert "marked with @once_differentiable" in message
assert first_line.startswith("Jacobian mismatch for output 0")

# %%
# A backward that autograd can follow
# -----------------------------------
#
# Look again at what ``backward`` does: matrix products and a sum, ordinary
# PyTorch operations on saved inputs and the incoming gradient. That is
# pattern 1 (:ref:`lesson-saving-inputs`): nothing is hidden from autograd,
# so the mark is not needed. The same Function without it passes both checks,
# and its gradient penalty agrees with ``F.linear``'s.


class LinearFunctionDD(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input @ weight.t()
        if bias is not None:
            output = output + bias
        return output

    @staticmethod
    def backward(ctx, grad_out):
        input, weight, bias = ctx.saved_tensors
        needs = ctx.needs_input_grad
        return linear_grads(needs, input, weight, bias, grad_out)


assert gradcheck(LinearFunctionDD.apply, (x64, w64, b64))
assert gradgradcheck(LinearFunctionDD.apply, (x64, w64, b64))


def penalty_grads(linear):
    out = linear(x64, w64, b64)
    (grad_w,) = torch.autograd.grad((out**2).sum(), w64, create_graph=True)
    return torch.autograd.grad(grad_w.pow(2).sum(), (x64, w64, b64))


for ours_g, ref_g in zip(penalty_grads(LinearFunctionDD.apply), penalty_grads(F.linear)):
    assert torch.allclose(ours_g, ref_g)
print("gradcheck, gradgradcheck pass; penalty gradients match F.linear")

# %%
# The graph of the gradient
# -------------------------
#
# Below is the graph behind ``grad_w``, the weight's gradient taken with
# ``create_graph=True`` on a small example. ``grad_w`` comes from
# ``MmBackward0``, the product :math:`g^\top x` recorded inside our
# ``backward``. One branch above it is the incoming gradient :math:`g = 2y`
# (autograd's backward of the square, fed by ``LinearFunctionDDBackward``);
# the other is the saved input. Every path starts at ``x``, ``w`` or ``b``,
# so a second backward reaches all three.

from torchviz import make_dot

torch.manual_seed(5)
x_small = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
w_small = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
b_small = torch.randn(2, dtype=torch.float64, requires_grad=True)
out_small = LinearFunctionDD.apply(x_small, w_small, b_small)
(grad_w_small,) = torch.autograd.grad((out_small**2).sum(), w_small, create_graph=True)
second = torch.autograd.grad(grad_w_small.sum(), (x_small, w_small, b_small), retain_graph=True)
assert type(grad_w_small.grad_fn).__name__ == "MmBackward0"
assert all(g is not None for g in second)

make_dot(grad_w_small, params={"x": x_small, "w": w_small, "b": b_small, "grad_w": grad_w_small})

# %%
# Put as little as possible inside your own Function
# --------------------------------------------------
#
# Every line inside a custom Function is a line whose derivatives you must
# write and test yourself, for first and for second order. Every line outside
# it is differentiated by autograd, correctly, to any order. So keep the
# Function as small as the job allows, and let autograd do the rest.
#
# For a linear layer, the only part worth a custom Function is the matrix
# product, if any part is: that is where you would call a special kernel or
# save memory. The bias is a plain addition, and autograd handles it. The
# version below has a Function for the product only. The bias, and its
# gradient, are ordinary PyTorch code.


class MatMulTransposed(torch.autograd.Function):
    """Computes ``input @ weight.T``, nothing else."""

    @staticmethod
    def forward(ctx, input, weight):
        ctx.save_for_backward(input, weight)
        return input @ weight.t()

    @staticmethod
    def backward(ctx, grad_out):
        input, weight = ctx.saved_tensors
        grad_input, grad_weight, _ = linear_grads(
            ctx.needs_input_grad, input, weight, None, grad_out
        )
        return grad_input, grad_weight


def small_linear(input, weight, bias=None):
    output = MatMulTransposed.apply(input, weight)
    if bias is not None:
        output = output + bias  # autograd differentiates this line
    return output


ok_first = gradcheck(small_linear, (x64, w64, b64))
ok_second = gradgradcheck(small_linear, (x64, w64, b64))
print("gradcheck:", ok_first)
print("gradgradcheck:", ok_second)
assert ok_first and ok_second

# %%
# The Function is shorter, its backward has one job less, and double backward
# still works. For this layer you could go one step further: the whole map is
# ``input @ weight.t() + bias`` in plain PyTorch, which needs no custom
# Function at all. Write one only for the part that autograd cannot do, or
# cannot do well enough.

plain = x64 @ w64.t() + b64
assert torch.allclose(plain, small_linear(x64, w64, b64))
assert torch.allclose(plain, LinearFunctionDD.apply(x64, w64, b64))
print("plain PyTorch gives the same output:", True)

# %%
# Summary
# -------
#
# * A Function with several inputs returns one gradient for each, in order.
#   Use ``ctx.needs_input_grad`` to skip gradients that nobody asked for, and
#   return ``None`` for them and for a missing bias.
# * Wrap the Function in an ``nn.Module`` with ``nn.Parameter`` objects, a
#   ``reset_parameters`` method and an ``extra_repr``.
# * Check it against a reference implementation, with
#   :func:`~torch.autograd.gradcheck`, and by training it.
# * Mark ``backward`` :func:`~torch.autograd.function.once_differentiable`
#   until :func:`~torch.autograd.gradgradcheck` passes without the mark.
# * A backward built from differentiable operations on saved inputs supports
#   double backward by itself.
# * Put as little as possible inside your own Function, and let autograd do
#   the rest.
#
# Next, :ref:`lesson-forward-mode`: the other direction of differentiation,
# and Hessian-vector products that need no second backward pass.
