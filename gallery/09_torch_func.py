r"""
.. _lesson-torch-func:

Beyond: custom Functions under torch.func
=========================================

``torch.func`` offers function transforms: ``grad`` turns a function into
its gradient function, ``vmap`` turns a function on one example into a
function on a batch, and ``jacrev``, ``jacfwd`` and ``hessian`` build whole
derivative matrices. The transforms compose, so ``grad(grad(f))`` is a
second derivative and ``vmap(grad(f))`` gives one gradient per example.

A custom Function can take part in all of this, but it has to be written in
a slightly different style, and each transform asks for something specific.
This lesson builds the same Function step by step until every transform
accepts it, and checks each result against a formula.

You will learn:

* the split of ``forward`` and ``setup_context`` that ``torch.func`` needs;
* how to support ``vmap``, with ``generate_vmap_rule = True`` or with your
  own ``vmap`` staticmethod;
* why ``torch.func.hessian`` needs a ``jvp`` staticmethod while
  ``grad(grad(f))`` does not.
"""

# %%
# The classic style is rejected
# -----------------------------
#
# In the lessons so far, ``forward`` took ``ctx`` as its first argument and
# saved tensors on it. ``torch.func`` transforms refuse such a Function, even
# though ordinary autograd is happy with it. We print the first sentence of
# the error; the rest is a link to the PyTorch documentation.

import torch
from torch import func


class ClassicTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return grad_out * (1 - y * y)


x0 = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
(classic_grad,) = torch.autograd.grad(ClassicTanh.apply(x0), x0)
print("ordinary autograd:", classic_grad)
assert torch.allclose(classic_grad, 1 - torch.tanh(x0) ** 2)

try:
    func.grad(ClassicTanh.apply)(x0)
except RuntimeError as error:
    message = str(error)

print(message.split(" For more details")[0])
assert "must override the setup_context staticmethod" in message

# %%
# The newer style: forward without ctx, plus setup_context
# --------------------------------------------------------
#
# The newer style splits the work of the classic ``forward`` in two:
#
# * ``forward(x)`` takes only the inputs and computes the output. It has no
#   ``ctx``.
# * ``setup_context(ctx, inputs, output)`` receives the tuple of inputs and
#   the output of ``forward``, and saves what ``backward`` needs.
#
# ``backward`` does not change. Here it uses the saved output, because
# :math:`\tanh'(x) = 1 - \tanh(x)^2`, and it is written with PyTorch
# operations, so it supports double backward (see
# :ref:`lesson-saving-outputs`).
#
# The class attribute ``generate_vmap_rule = True`` is explained in the next
# step.


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


# %%
# The Function is still called with ``Tanh.apply``, and ordinary autograd works
# as before. ``torch.func.grad`` now accepts it too. For a function with a
# scalar output, ``func.grad(f)(x)`` returns the same gradient as
# ``torch.autograd.grad``.

x = torch.tensor([-1.0, 0.2, 2.0], dtype=torch.float64, requires_grad=True)
(autograd_grad,) = torch.autograd.grad(Tanh.apply(x).sum(), x)
func_grad = func.grad(lambda x: Tanh.apply(x).sum())(x.detach())

print("torch.autograd.grad:", autograd_grad)
print("torch.func.grad:    ", func_grad)
assert torch.allclose(func_grad, autograd_grad)
assert torch.allclose(func_grad, 1 - torch.tanh(x.detach()) ** 2)

# %%
# vmap with a generated rule
# --------------------------
#
# ``vmap(f)`` runs ``f`` on a whole batch at once, as if it had been called on
# each example separately. For built-in operations PyTorch knows how to do
# that. For a custom Function it needs a batching rule, and there are two ways
# to provide one.
#
# The easy way is ``generate_vmap_rule = True``. PyTorch then batches the
# Function by running ``forward``, ``setup_context``, ``backward`` (and
# ``jvp``, if there is one) under ``vmap`` themselves. This works when those
# methods only use PyTorch operations, as in ``Tanh``.
#
# Without the attribute, and without a ``vmap`` staticmethod, ``vmap`` stops
# with an error. A subclass that turns the attribute off shows it.


class TanhNoVmapRule(Tanh):
    generate_vmap_rule = False


torch.manual_seed(0)
batch = torch.randn(5, 3, dtype=torch.float64)
try:
    func.vmap(TanhNoVmapRule.apply)(batch)
except RuntimeError as error:
    message = str(error)

print(message.split(" Please override")[0])
assert "does not have vmap support" in message

# %%
# With the generated rule, ``vmap`` gives the same result as a Python loop over
# the examples.

batched = func.vmap(Tanh.apply)(batch)
looped = torch.stack([Tanh.apply(row) for row in batch])
print(batched)
assert torch.allclose(batched, looped)

# %%
# ``vmap`` composes with ``grad``. Here each example :math:`a_i` (a row of
# ``batch``) has its own loss :math:`\tanh(a_i \cdot w)^2`, and
# ``vmap(grad(...))`` returns one gradient with respect to :math:`w` per
# example. The ``in_dims=(None, 0)`` argument says that ``w`` is shared and
# the examples are stacked along dimension 0.


def example_loss(w, a):
    return Tanh.apply(a @ w) ** 2


w = torch.randn(3, dtype=torch.float64)
per_example = func.vmap(func.grad(example_loss), in_dims=(None, 0))(w, batch)
looped = torch.stack([func.grad(example_loss)(w, a) for a in batch])
print("per-example gradients:", per_example.shape)
assert torch.allclose(per_example, looped)

# %%
# Second derivatives: grad of grad
# --------------------------------
#
# ``func.grad`` returns an ordinary function, so it can be transformed again.
# ``grad(grad(f))`` is the second derivative of a function from a scalar to a
# scalar. For :math:`\tanh`:
#
# .. math::
#
#    \frac{d^2}{dx^2} \tanh(x) = -2 \tanh(x) \left( 1 - \tanh(x)^2 \right).
#
# The inner ``grad`` runs ``Tanh.backward``; the outer ``grad``
# differentiates what it did. So this works for the same reason double
# backward works: ``backward`` uses PyTorch operations on the saved output.
# Wrapping it in ``vmap`` evaluates it at several points at once.

second_derivative = func.grad(func.grad(Tanh.apply))
points = torch.tensor([-2.0, -0.5, 0.3, 1.0, 2.5], dtype=torch.float64)
d2 = func.vmap(second_derivative)(points)

t = torch.tanh(points)
expected = -2 * t * (1 - t**2)
print("grad(grad(tanh)):", d2)
print("formula:         ", expected)
assert torch.allclose(d2, expected)
assert torch.allclose(second_derivative(points[1]), expected[1])

# %%
# Hessians: jacrev of jacrev works, hessian does not (yet)
# --------------------------------------------------------
#
# Take the scalar function :math:`L(x) = \sum_i \tanh(Ax)_i` of a vector
# :math:`x`. With :math:`y = \tanh(Ax)`, its Hessian is
#
# .. math::
#
#    H = A^\top \operatorname{diag}\left( -2 y (1 - y^2) \right) A.
#
# ``func.jacrev(func.jacrev(L))`` computes it with reverse mode twice, which
# our ``Tanh`` supports.

A = torch.randn(4, 3, dtype=torch.float64)
x = torch.randn(3, dtype=torch.float64)


def L(x):
    return Tanh.apply(A @ x).sum()


y = torch.tanh(A @ x)
H_formula = A.T @ torch.diag(-2 * y * (1 - y**2)) @ A
H_rev_rev = func.jacrev(func.jacrev(L))(x)
print(H_rev_rev)
assert torch.allclose(H_rev_rev, H_formula)

# %%
# ``torch.func.hessian`` is defined as ``jacfwd(jacrev(f))``: forward mode on
# the outside, as in :ref:`lesson-forward-mode`. Forward mode needs the
# Function's ``jvp`` staticmethod, and ``Tanh`` has none, so it fails.

try:
    func.hessian(L)(x)
except NotImplementedError as error:
    message = str(error)

print(message)
assert "implement the jvp function" in message

# %%
# Adding a jvp
# ------------
#
# Two additions are enough, so a subclass of ``Tanh`` can keep the rest:
#
# * ``setup_context`` also saves the output with ``ctx.save_for_forward``,
#   which is where ``jvp`` reads its tensors from;
# * ``jvp(ctx, x_tangent)`` returns the tangent of the output,
#   :math:`(1 - y^2)` times the tangent of the input.
#
# ``jvp`` uses only PyTorch operations, so the generated vmap rule covers it
# too.


class TanhWithJvp(Tanh):
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)

    @staticmethod
    def jvp(ctx, x_tangent):
        (y,) = ctx.saved_tensors
        return x_tangent * (1 - y * y)


def L_jvp(x):
    return TanhWithJvp.apply(A @ x).sum()


# %%
# Now ``func.hessian`` works. We compare it with the formula, with reverse
# over reverse, and with ``torch.autograd.functional.hessian`` applied to the
# same expression written with the built-in ``torch.tanh``.

from torch.autograd.functional import hessian as reference_hessian

H = func.hessian(L_jvp)(x)
H_builtin = reference_hessian(lambda x: torch.tanh(A @ x).sum(), x)
print(H)
assert torch.allclose(H, H_formula)
assert torch.allclose(H, H_rev_rev)
assert torch.allclose(H, H_builtin)

# %%
# ``func.jacfwd`` also works now. The Jacobian of an elementwise function is
# diagonal.

J = func.jacfwd(TanhWithJvp.apply)(x)
assert torch.allclose(J, torch.diag(1 - torch.tanh(x) ** 2))
print(J)

# %%
# Your own vmap rule
# ------------------
#
# The generated rule is not always possible. Suppose ``forward`` calls NumPy,
# here for softplus, :math:`s(x) = \log(1 + e^{x})`, whose derivative is the
# sigmoid :math:`\sigma(x)`. Autograd never differentiates ``forward``
# itself, so NumPy there does not affect derivatives. Only ``backward`` and
# ``jvp`` must use PyTorch operations, and they do.
#
# But NumPy cannot read the batched tensors that ``vmap`` passes to
# ``forward`` when it generates the rule, so a generated rule fails.

import numpy as np


class NumpySoftplusGenerated(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        result = np.logaddexp(0.0, x.detach().cpu().numpy())
        return torch.from_numpy(np.asarray(result)).to(x.device)

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

print(message)
assert "doesn't have storage" in message

# %%
# The other way is a ``vmap`` staticmethod, with the signature
# ``vmap(info, in_dims, *args)``:
#
# * ``info.batch_size`` is the size of the batch (and ``info.randomness``
#   tells how ``vmap`` treats random operations);
# * ``in_dims`` has one entry per input of ``forward``: the position of the
#   batch dimension in that input, or ``None`` if it is not batched;
# * ``args`` are the inputs as ordinary tensors, with the batch dimension
#   still inside them.
#
# It returns the batched output and ``out_dims``, the position of the batch
# dimension in the output. Softplus acts on each element separately, so the
# rule can apply the Function to the whole batched tensor at once: the batch
# dimension stays where it was. The subclass turns the generated rule off,
# because PyTorch does not accept both (shown below).


class NumpySoftplus(NumpySoftplusGenerated):
    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, x):
        (x_batch_dim,) = in_dims
        return NumpySoftplus.apply(x), x_batch_dim


for dim in (0, 1):
    batched = func.vmap(NumpySoftplus.apply, in_dims=dim)(batch)
    looped = torch.stack([NumpySoftplus.apply(part) for part in batch.unbind(dim)])
    print(f"in_dims={dim}: output shape {tuple(batched.shape)}")
    assert torch.allclose(batched, looped)
    expected = torch.nn.functional.softplus(batch).movedim(dim, 0)
    assert torch.allclose(batched, expected)

# %%
# A subclass that keeps the ``vmap`` staticmethod but turns the generated rule
# back on is refused, because PyTorch cannot tell which rule to use.


class NumpySoftplusBothRules(NumpySoftplus):
    generate_vmap_rule = True


try:
    func.vmap(NumpySoftplusBothRules.apply)(batch)
except RuntimeError as error:
    message = str(error)

print(message.split(" Please set")[0])
assert "has both generate_vmap_rule=True and an overridden vmap" in message

# %%
# ``grad`` of ``grad`` and ``hessian`` work through this Function too. The second
# derivative of softplus is :math:`\sigma(x) (1 - \sigma(x))`, and the Hessian
# of :math:`\sum_i s(Ax)_i` matches the built-in ``softplus``.

d2 = func.vmap(func.grad(func.grad(NumpySoftplus.apply)))(points)
s = torch.sigmoid(points)
assert torch.allclose(d2, s * (1 - s))
print("grad(grad(softplus)):", d2)

H = func.hessian(lambda x: NumpySoftplus.apply(A @ x).sum())(x)
H_builtin = reference_hessian(lambda x: torch.nn.functional.softplus(A @ x).sum(), x)
assert torch.allclose(H, H_builtin)
print(H)

# %%
# Checking every Function
# -----------------------
#
# As always, ``gradcheck`` and ``gradgradcheck`` in ``float64``. Two options
# are useful here:
#
# * ``check_batched_grad=True`` also computes the gradients under ``vmap``,
#   and ``check_batched_forward_grad=True`` does the same for ``jvp``;
# * ``check_forward_ad=True`` and ``check_fwd_over_rev=True`` test forward
#   mode, which only the Functions with a ``jvp`` support.

from torch.autograd import gradcheck, gradgradcheck

inputs = (torch.randn(3, 2, dtype=torch.float64, requires_grad=True),)

for function, has_jvp in [(Tanh, False), (TanhWithJvp, True), (NumpySoftplus, True)]:
    first_ok = gradcheck(
        function.apply,
        inputs,
        check_batched_grad=True,
        check_forward_ad=has_jvp,
        check_batched_forward_grad=has_jvp,
    )
    second_ok = gradgradcheck(
        function.apply,
        inputs,
        check_batched_grad=True,
        check_fwd_over_rev=has_jvp,
    )
    print(f"{function.__name__}: gradcheck: {first_ok}, gradgradcheck: {second_ok}")
    assert first_ok and second_ok

# %%
# Summary
# -------
#
# * ``torch.func`` needs the newer style: ``forward`` without ``ctx``, and a
#   ``setup_context(ctx, inputs, output)`` staticmethod that saves tensors.
# * ``vmap`` needs a batching rule: ``generate_vmap_rule = True`` when
#   ``forward``, ``backward`` and ``jvp`` only use PyTorch operations, or a
#   ``vmap(info, in_dims, *args)`` staticmethod that returns the output and
#   its batch dimension.
# * ``grad(grad(f))`` and ``jacrev(jacrev(f))`` use reverse mode twice: a
#   ``backward`` written with PyTorch operations is enough.
# * ``hessian`` and ``jacfwd`` use forward mode, so the Function also needs a
#   ``jvp`` staticmethod and ``ctx.save_for_forward``.
# * Test every Function with ``gradcheck`` and ``gradgradcheck`` in
#   ``float64``, with the batched and forward-mode options turned on.
#
# Next, :ref:`lesson-second-derivatives` puts second derivatives to work:
# Hessian-vector products, a gradient penalty and a physics-informed loss.
