r"""
.. _lesson-torch-func:

Beyond: custom Functions under torch.func
=========================================

``torch.func`` transforms functions: ``grad`` into its gradient, ``vmap``
into a batched version, ``jacrev``, ``jacfwd`` and ``hessian`` into
derivative matrices. They compose, so ``grad(grad(f))`` is a second
derivative. A custom Function takes part when it is written in the
``setup_context`` style, and each transform asks for something more. This
lesson adds those pieces one at a time and checks every result against a
formula.
"""

# %%
# The newer style, with a generated vmap rule
# -------------------------------------------
#
# ``forward`` takes only the inputs; ``setup_context(ctx, inputs, output)``
# (:ref:`lesson-extending-rules`, rule 9) saves what ``backward`` needs, here
# the output, since :math:`\tanh'(x) = 1 - \tanh(x)^2`.
# ``generate_vmap_rule = True`` lets
# ``vmap`` batch the Function by running its methods under ``vmap``
# themselves, which works when they use only PyTorch operations.

import warnings

import torch

# sphinx_gallery_thumbnail_path = "_static/thumbs/09_torch_func.svg"
from torch import func


class Tanh(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.tanh(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return grad_out * (1 - y * y)


class TanhNoVmapRule(Tanh):
    generate_vmap_rule = False


torch.manual_seed(0)
batch = torch.randn(5, 3, dtype=torch.float64)
batched = func.vmap(Tanh.apply)(batch)
assert torch.allclose(batched, torch.stack([Tanh.apply(row) for row in batch]))
try:
    func.vmap(TanhNoVmapRule.apply)(batch)
except RuntimeError as error:
    message = str(error)
print("without a vmap rule:", message.split(" Please override")[0])
assert "does not have vmap support" in message

# %%
# ``vmap(grad(...))`` gives one gradient per example. Each row :math:`a_i` of
# ``batch`` has the loss :math:`\tanh(a_i \cdot w)^2`; ``in_dims=(None, 0)``
# says that ``w`` is shared and the examples are stacked along dimension 0.


def example_loss(w, a):
    return Tanh.apply(a @ w) ** 2


w = torch.randn(3, dtype=torch.float64)
per_example = func.vmap(func.grad(example_loss), in_dims=(None, 0))(w, batch)
looped = torch.stack([func.grad(example_loss)(w, a) for a in batch])
print("per-example gradients:", tuple(per_example.shape))
assert torch.allclose(per_example, looped)

# %%
# Second derivatives: grad of grad
# --------------------------------
#
# ``grad(grad(f))`` runs ``Tanh.backward`` and differentiates what it did, so
# it works for the reason double backward works. Under ``vmap`` it evaluates
# :math:`\tanh''(x) = -2 \tanh(x) (1 - \tanh(x)^2)` at several points at once.

points = torch.tensor([-2.0, -0.5, 0.3, 1.0, 2.5], dtype=torch.float64)
d2 = func.vmap(func.grad(func.grad(Tanh.apply)))(points)
t = torch.tanh(points)
print("grad(grad(tanh)):", d2)
assert torch.allclose(d2, -2 * t * (1 - t**2))

# %%
# Hessians need a jvp and a vmap rule
# -----------------------------------
#
# For :math:`L(x) = \sum_i \tanh(Ax)_i`, with :math:`y = \tanh(Ax)`,
#
# .. math::
#
#    H = A^\top \operatorname{diag}\left( -2 y (1 - y^2) \right) A.
#
# ``jacrev(jacrev(L))`` uses reverse mode twice and works.
# ``hessian`` is ``jacfwd(jacrev(L))``: its outer ``jacfwd`` runs the inner
# computation in forward mode (:ref:`lesson-forward-mode`), which needs a
# ``jvp``, and under ``vmap``, one call per column, which needs a vmap rule.

A = torch.randn(4, 3, dtype=torch.float64)
x = torch.randn(3, dtype=torch.float64)
y = torch.tanh(A @ x)
H_formula = A.T @ torch.diag(-2 * y * (1 - y**2)) @ A


def hessian_or_error(function):
    try:
        with warnings.catch_warnings():
            # PyTorch's own deprecation note when forward mode first loads (lesson 08)
            warnings.filterwarnings("ignore", message="`torch.jit.script` is deprecated")
            return func.hessian(lambda x: function.apply(A @ x).sum())(x)
    except (NotImplementedError, RuntimeError) as error:
        return f"{type(error).__name__}: {str(error).split('. ')[0]}"


assert torch.allclose(func.jacrev(func.jacrev(lambda x: Tanh.apply(A @ x).sum()))(x), H_formula)
no_jvp = hessian_or_error(Tanh)
print("hessian, no jvp:", no_jvp)
assert "implement the jvp function" in no_jvp

# %%
# ``jvp`` reads what ``setup_context`` passed to ``ctx.save_for_forward`` and
# returns :math:`(1 - y^2)` times the input's tangent. The subclass keeps the
# generated vmap rule, which covers ``jvp`` too; a second subclass turns it
# off, and ``hessian`` fails again, now for want of the rule.


class TanhWithJvp(Tanh):
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)

    @staticmethod
    def jvp(ctx, x_tangent):
        (y,) = ctx.saved_tensors
        return x_tangent * (1 - y * y)


class TanhWithJvpNoVmapRule(TanhWithJvp):
    generate_vmap_rule = False


H = hessian_or_error(TanhWithJvp)
no_rule = hessian_or_error(TanhWithJvpNoVmapRule)
print("hessian, jvp and vmap rule:\n", H)
print("hessian, jvp only:", no_rule)
assert torch.allclose(H, H_formula)
assert "does not have vmap support" in no_rule
J = func.jacfwd(TanhWithJvp.apply)(x)
assert torch.allclose(J, torch.diag(1 - torch.tanh(x) ** 2))

# %%
# Your own vmap rule
# ------------------
#
# A generated rule is not always possible. This softplus,
# :math:`s(x) = \log(1 + e^{x})` with :math:`s'(x) = \sigma(x)`, computes
# ``forward`` in NumPy. Autograd never differentiates ``forward``, so that is
# fine for derivatives: ``backward`` and ``jvp`` use PyTorch. But NumPy
# cannot read the batched tensors that a generated rule passes to
# ``forward``.

import numpy as np


class NumpySoftplusGenerated(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.as_tensor(np.logaddexp(0.0, x.detach().cpu().numpy())).to(x.device)

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)

    @staticmethod
    def jvp(ctx, x_tangent):
        (x,) = ctx.saved_tensors
        return x_tangent * torch.sigmoid(x)


try:
    func.vmap(NumpySoftplusGenerated.apply)(batch)
except RuntimeError as error:
    message = str(error)
print("generated rule:", message)
assert "doesn't have storage" in message

# %%
# A ``vmap(info, in_dims, *args)`` staticmethod receives the inputs with their
# batch dimension still inside, and ``in_dims``, where that dimension is in
# each input (``None`` if it is not batched; ``info.batch_size`` gives the
# size). It returns the batched output and the output's batch dimension.
# Softplus acts on each element, so the rule applies the Function to the
# whole tensor and the batch dimension stays where it was. PyTorch refuses a
# Function that has both kinds of rule, so the subclass turns the generated
# one off.


class NumpySoftplus(NumpySoftplusGenerated):
    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, x):
        (x_batch_dim,) = in_dims
        return NumpySoftplus.apply(x), x_batch_dim


class NumpySoftplusBothRules(NumpySoftplus):
    generate_vmap_rule = True


for dim in (0, 1):
    batched = func.vmap(NumpySoftplus.apply, in_dims=dim)(batch)
    assert torch.allclose(batched, torch.nn.functional.softplus(batch).movedim(dim, 0))
try:
    func.vmap(NumpySoftplusBothRules.apply)(batch)
except RuntimeError as error:
    message = str(error)
print("both rules:", message.split(" Please set")[0])
assert "has both generate_vmap_rule=True and an overridden vmap" in message

d2 = func.vmap(func.grad(func.grad(NumpySoftplus.apply)))(points)
H = func.hessian(lambda x: NumpySoftplus.apply(A @ x).sum())(x)
s = torch.sigmoid(A @ x)
assert torch.allclose(d2, torch.sigmoid(points) * (1 - torch.sigmoid(points)))
assert torch.allclose(H, A.T @ torch.diag(s * (1 - s)) @ A)
print("grad(grad(softplus)) and hessian match their formulas")

# %%
# Checking every Function
# -----------------------
#
# ``check_batched_grad=True`` also computes the gradients under ``vmap``;
# ``check_forward_ad``, ``check_batched_forward_grad`` and
# ``check_fwd_over_rev`` test ``jvp``, for the Functions that have one.

from torch.autograd import gradcheck, gradgradcheck

inputs = (torch.randn(3, 2, dtype=torch.float64, requires_grad=True),)
for function, has_jvp in [(Tanh, False), (TanhWithJvp, True), (NumpySoftplus, True)]:
    assert gradcheck(
        function.apply,
        inputs,
        check_batched_grad=True,
        check_forward_ad=has_jvp,
        check_batched_forward_grad=has_jvp,
    )
    assert gradgradcheck(
        function.apply, inputs, check_batched_grad=True, check_fwd_over_rev=has_jvp
    )
    print(f"{function.__name__}: gradcheck and gradgradcheck pass")

# %%
# Summary
# -------
#
# * :mod:`torch.func` needs ``forward`` without ``ctx`` and a
#   ``setup_context``.
# * ``vmap`` needs a rule: ``generate_vmap_rule = True`` when every method uses
#   PyTorch operations, or a ``vmap(info, in_dims, *args)`` staticmethod.
# * ``grad(grad(f))`` and ``jacrev(jacrev(f))`` need only a ``backward``
#   written with PyTorch operations.
# * ``hessian`` and ``jacfwd`` run forward mode under ``vmap``: they need a
#   ``jvp`` (with ``ctx.save_for_forward``) and a vmap rule.
#
# Next, :ref:`lesson-second-derivatives` puts second derivatives to work.
