r"""
.. _lesson-custom-layer:

A custom layer: a linear map with its own backward
==================================================

A layer takes several tensors, an input, a weight and an optional bias, and
its backward returns a gradient for each of them. This lesson builds a linear
layer from scratch, as a custom Function inside an ``nn.Module``, checks it
against PyTorch's own ``torch.nn.functional.linear`` and trains it. Then it
asks for a second derivative: what the ``once_differentiable`` mark does to
this layer, loudly and silently, and why its backward must not carry it.

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
# row, so their gradients add up the contributions of all rows: the helper
# below flattens the batch dimensions into one to compute them, and only
# when one of them is needed (the flattening may copy the input). It gives the
# number of rows, not ``-1``, which ``reshape`` cannot resolve when a row
# has no elements, as in a layer with no input or no output features.
#
# The helper takes ``needs``, which ``backward`` passes from
# ``ctx.needs_input_grad`` (:ref:`rule 2 of lesson 06 <rule-needs-input-grad>`),
# and returns ``None`` for each gradient it skips.

import torch


def linear_grads(needs, input, weight, bias, grad_out):
    """Gradients of ``input @ weight.T + bias``."""
    grad_input = grad_weight = grad_bias = None
    if needs[0]:
        grad_input = grad_out @ weight
    if needs[1] or (bias is not None and needs[2]):
        rows_out = grad_out.reshape(grad_out.shape[:-1].numel(), grad_out.shape[-1])
        if needs[1]:
            rows_in = input.reshape(input.shape[:-1].numel(), input.shape[-1])
            grad_weight = rows_out.t() @ rows_in
        if bias is not None and needs[2]:
            grad_bias = rows_out.sum(0)
    return grad_input, grad_weight, grad_bias


# When only the input needs a gradient, the helper never reads the input.
g_rows = torch.ones(2, 5, 2)
assert linear_grads((True, False, False), None, torch.ones(2, 3), None, g_rows)[1:] == (None, None)


# %%
# The Function
# ------------
#
# ``forward`` takes the input, the weight and an optional bias, and saves all
# three. :meth:`~torch.autograd.function.FunctionCtx.save_for_backward` accepts
# ``None``, so a missing bias needs no special case. ``backward`` always
# returns three values, the last ``None`` when the bias is missing: called
# with two arguments, ``forward`` has two inputs, and autograd accepts a
# ``None`` beyond them (:ref:`rule 2 of lesson 06 <rule-needs-input-grad>`).
# The weight must be a matrix, which ``forward`` asserts.
#
# It is tempting to mark ``backward``
# :func:`~torch.autograd.function.once_differentiable` as a precaution, while
# its second derivative is unchecked. This first version does, to show what
# the mark does; the second half of the lesson shows that the mark is wrong on
# this ``backward``, and removes it.

from torch.autograd.function import once_differentiable


class LinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        assert weight.dim() == 2, "the weight takes the shape (out_features, in_features)"
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
# In training, the data does not require grad, so the first layer's
# ``backward`` skips its gradient: one matrix product less per step. Deeper
# layers receive activations that do require grad.

torch.manual_seed(0)
data = torch.randn(5, 3)
w = torch.randn(2, 3, requires_grad=True)
b = torch.randn(2, requires_grad=True)
out = LinearFunction.apply(data, w, b)
print("needs_input_grad:", out.grad_fn.needs_input_grad)
assert out.grad_fn.needs_input_grad == (False, True, True)
grads = out.grad_fn.apply(torch.ones(5, 2))  # the first layer's backward, run
assert grads[0] is None and grads[1] is not None and grads[2] is not None

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
# :math:`n` is ``in_features`` (a zero bias when :math:`n = 0`). ``extra_repr``
# adds the layer's sizes to the text that ``print(layer)`` shows.
#
# ``function`` names the Function that ``forward`` applies. For now it is the
# marked ``LinearFunction``, a draft: do not copy it as it stands. The second
# half of the lesson replaces it with the final, unmarked one.

import math

from torch import nn


class Linear(nn.Module):
    function = LinearFunction

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
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return self.function.apply(input, self.weight, self.bias)

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
# ``nn.Linear`` starts, even with no input features or no output features.
# At these small sizes, a first backward pass also gives it bit for bit the
# same gradients. On larger layers they agree only up to float rounding:
# ``nn.Linear`` adds the bias inside its one ``addmm``, ours after the
# product, so the outputs, and the gradients computed from them, can differ
# in the last bits.

import warnings


def same_start(in_features, out_features):
    """Our layer, and whether its parameters and their gradients equal nn.Linear's."""
    layers = []
    for make in (Linear, nn.Linear):
        torch.manual_seed(1)
        layer = make(in_features, out_features)
        input = torch.randn(2, 5, in_features, generator=torch.Generator().manual_seed(0))
        (layer(input) ** 2).sum().backward()
        layers.append(layer)
    ours, reference = layers
    same = all(
        torch.equal(p, q) and torch.equal(p.grad, q.grad)
        for p, q in zip(ours.parameters(), reference.parameters(), strict=True)
    )
    return same, ours


same, ours = same_start(4, 3)
with warnings.catch_warnings():  # both say that filling an empty weight does nothing
    warnings.filterwarnings("ignore", "Initializing zero-element tensors is a no-op")
    same_empty = {sizes: same_start(*sizes)[0] for sizes in ((0, 3), (3, 0))}
print("same parameters and gradients as nn.Linear:", same, "| (in, out) =", same_empty)
assert same and all(same_empty.values())

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
    match = torch.allclose(g_ours, g_ref, atol=1e-6)
    print(f"grad of {name} matches F.linear:", match)
    assert match

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

assert gradcheck(LinearFunction.apply, (x64, w64, b64))
assert gradcheck(LinearFunction.apply, (x64, w64))
assert len(LinearFunction.apply(x64, w64).grad_fn.needs_input_grad) == 2  # two inputs

# %%
# Training for a few steps
# ------------------------
#
# The last test of a layer is whether it learns. We make up a linear map with
# known weights, generate data from it with a little noise, and fit our layer
# by gradient descent, each step on the whole data set (``torch.optim.SGD``
# given the full batch).

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
# A penalty on the size of a gradient needs double backward. Here it is the
# squared norm of the weight's gradient of ``(out**2).sum()``. The incoming
# gradient :math:`g = 2y` requires grad, so the marked ``backward`` leaves an
# error node (:ref:`lesson 05 <lesson-untracked-backward>`), and
# ``.backward()`` runs it and raises the mark's error.
# :func:`~torch.autograd.gradgradcheck` fails too.

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
# Where the mark stays silent
# ---------------------------
#
# A gradient penalty on a critic (the network that scores samples in a
# Wasserstein GAN), in the style of WGAN-GP, differentiates the critic's
# score with respect to its input points. The incoming gradient of the
# critic's last layer is then the constant ones of ``score.sum()``, a case
# where the mark makes no error node
# (:ref:`lesson 05 <lesson-untracked-backward>`): the penalty loses every path
# through that layer's weight, without an error.
#
# Below, a small critic ends with our ``Linear`` layer, which still applies
# the marked ``LinearFunction``. Its loss for one training step is its mean
# score plus ten times WGAN-GP's penalty, taken at the points themselves
# rather than at points mixed from real and fake samples
# (:ref:`lesson 10 <gradient-penalty>` trains the full critic loss), and
# ``loss.backward()`` fills ``.grad`` of the last layer's weight. The same
# critic ending with an ``nn.Linear`` of the same parameters is the
# reference. With the mark, the penalty's gradient for that weight is
# ``None``, and its ``.grad`` is the reference's minus the penalty's share.

torch.manual_seed(6)
critic = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), Linear(4, 1)).double()
reference = nn.Sequential(critic[0], critic[1], nn.Linear(4, 1).double())
reference[2].load_state_dict(critic[2].state_dict())
points = torch.randn(8, 3, dtype=torch.float64, requires_grad=True)


def critic_step(model):
    """The penalty's gradient for the last weight, and its .grad after loss.backward()."""
    weight = model[2].weight
    score = model(points)
    (grad_points,) = torch.autograd.grad(score.sum(), points, create_graph=True)
    penalty = (grad_points.norm(dim=1) - 1).pow(2).mean()
    (from_penalty,) = torch.autograd.grad(penalty, weight, retain_graph=True, allow_unused=True)
    model.zero_grad()
    (score.mean() + 10.0 * penalty).backward()
    return from_penalty, weight.grad


marked_penalty, marked_step = critic_step(critic)
ref_penalty, ref_step = critic_step(reference)
print("penalty's gradient for the last weight, marked:", marked_penalty)
print("penalty's gradient for the last weight, nn.Linear:", ref_penalty)
print("its .grad, marked:   ", marked_step)
print("its .grad, nn.Linear:", ref_step)
assert marked_penalty is None and ref_penalty.abs().sum() > 0
assert torch.allclose(marked_step, ref_step - 10.0 * ref_penalty)
assert not torch.allclose(marked_step, ref_step)

# %%
# A backward that autograd can follow
# -----------------------------------
#
# Look again at what ``backward`` does: matrix products and a sum, ordinary
# PyTorch operations on saved inputs and the incoming gradient. That is
# :ref:`pattern 1 <lesson-saving-inputs>`: under ``create_graph=True``
# autograd records them, so this ``backward`` had a second derivative all
# along, and the mark took it away.
# ``LinearFunctionDD`` is the same Function without the mark. It passes
# :func:`~torch.autograd.gradgradcheck`, which confirms that second derivative,
# and both penalties above now agree with ``F.linear`` and ``nn.Linear``. It
# becomes ``Linear.function``: the same critic, unchanged, now passes the
# penalty's gradient to its last weight. To copy it, take
# ``LinearFunction``'s ``forward`` with this ``backward``, without the mark.
# Its ``forward`` takes ``ctx``, which :mod:`torch.func` refuses: for
# ``torch.func.grad`` over the layer, split it as
# :ref:`lesson 06's rule 9 <lesson-extending-rules>` shows; ``vmap`` also
# needs a vmap rule (``generate_vmap_rule = True``,
# :ref:`lesson 09 <lesson-torch-func>`).
#
# Hence the rule: never mark a ``backward`` that autograd can differentiate;
# mark only one that it cannot, such as one that runs NumPy.


class LinearFunctionDD(LinearFunction):
    @staticmethod
    def backward(ctx, grad_out):  # the same backward, without the mark
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
Linear.function = LinearFunctionDD
dd_penalty, dd_step = critic_step(critic)
print("critic, LinearFunctionDD: penalty's gradient for the last weight:", dd_penalty)
assert torch.allclose(dd_penalty, ref_penalty) and torch.allclose(dd_step, ref_step)

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
# so a second backward reaches all three. From the gradient of the marked
# ``LinearFunction`` it reaches none, though :math:`g` requires grad and an
# error node is there (case 2 of :ref:`lesson 05 <lesson-untracked-backward>`).

from torchviz import make_dot

torch.manual_seed(5)
x_small = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
w_small = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
b_small = torch.randn(2, dtype=torch.float64, requires_grad=True)
small = (x_small, w_small, b_small)


def reached(linear):
    """Which of x, w, b a second backward from the weight's gradient reaches."""
    (grad_w,) = torch.autograd.grad((linear(*small) ** 2).sum(), w_small, create_graph=True)
    second = torch.autograd.grad(grad_w.sum(), small, retain_graph=True, allow_unused=True)
    return grad_w, [g is not None for g in second]


grad_w_small, reached_dd = reached(LinearFunctionDD.apply)
grad_w_marked, reached_marked = reached(LinearFunction.apply)
print("reaches x, w, b: LinearFunctionDD", reached_dd, "| LinearFunction", reached_marked)
assert type(grad_w_small.grad_fn).__name__ == "MmBackward0"
assert type(grad_w_marked.grad_fn).__name__ == "Error"  # the mark's error node
assert reached_dd == [True] * 3 and reached_marked == [False] * 3

make_dot(grad_w_small, params={"x": x_small, "w": w_small, "b": b_small, "grad_w": grad_w_small})

# %%
# Put as little as possible inside your own Function
# --------------------------------------------------
#
# Every line inside a custom Function is a line whose first derivative you
# must write, and whose first and second derivatives you must test. A PyTorch
# operation outside it is differentiated by PyTorch's own derivative
# formulas, which you need neither write nor test. Most of those formulas can
# be differentiated again, but not all: on the CPU, double backward through
# ``ctc_loss``, or through ``torch.cdist`` unless it computes Euclidean
# distances with matrix products, stops inside PyTorch with an error.
# :ref:`Lesson 18 <error-index-builtins>` says when ``cdist`` takes
# that path, and lists more such operators. So keep the Function as small as
# the job allows, and let autograd do the rest.
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
        assert weight.dim() == 2, "the weight takes the shape (out_features, in_features)"
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


assert gradcheck(small_linear, (x64, w64, b64))
assert gradgradcheck(small_linear, (x64, w64, b64))

# %%
# The Function is shorter, its backward has one job less, and double backward
# still works. For this layer you could go one step further: the whole map is
# ``input @ weight.t() + bias`` in plain PyTorch, which needs no custom
# Function at all. Write one only for the part that autograd cannot do, or
# cannot do well enough.

plain = x64 @ w64.t() + b64
same = torch.allclose(plain, small_linear(x64, w64, b64)) and torch.allclose(
    plain, LinearFunctionDD.apply(x64, w64, b64)
)
print("plain PyTorch gives the same output:", same)
assert same

# %%
# Summary
# -------
#
# * A Function with several inputs returns one gradient for each, in order:
#   ``None`` for a missing bias (not a tensor) and, to skip the work, for
#   each input that ``ctx.needs_input_grad`` marks ``False``.
# * Wrap the Function in an ``nn.Module`` with ``nn.Parameter`` objects, a
#   ``reset_parameters`` method and an ``extra_repr``.
# * Check it against a reference implementation, with
#   :func:`~torch.autograd.gradcheck`, and by training it.
# * Never mark with :func:`~torch.autograd.function.once_differentiable` a
#   ``backward`` that autograd can differentiate: on this layer the mark broke
#   double backward, and where the incoming gradient was a constant, as in a
#   critic's gradient penalty, it did so without an error. Mark only a
#   ``backward`` that autograd cannot differentiate.
# * A backward made only of differentiable PyTorch operations on the saved
#   inputs or outputs and the incoming gradient is recorded under
#   ``create_graph=True``, so it has a second derivative, as this layer's
#   does; :func:`~torch.autograd.gradgradcheck` confirms it (a saved
#   intermediate whose derivative is not zero,
#   :ref:`lesson 04 <lesson-ctx-mistake>`, or anything that cuts such a path
#   out of autograd, such as ``detach``, ``no_grad`` or NumPy, makes it
#   fail).
# * Put as little as possible inside your own Function, and let autograd do
#   the rest.
#
# Next, :ref:`forward mode <lesson-forward-mode>`: the other direction of
# differentiation, and Hessian-vector products that need no second backward
# pass.
