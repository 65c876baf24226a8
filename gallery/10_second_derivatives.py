r"""
.. _lesson-second-derivatives:

Beyond: why second derivatives matter
=====================================

The earlier lessons made custom Functions pass ``gradgradcheck``. This lesson
shows what that buys: three common techniques need the derivative of a
gradient, and each runs through every custom Function in the model. Through a
Function without a correct double backward, each one fails with an error or,
worse, gives silently wrong numbers, as
:ref:`lesson 05 <lesson-untracked-backward>` shows. The three are a
Hessian-vector product, a gradient penalty (as in WGAN-GP), and a
physics-informed loss that needs :math:`u''(x)` and, for training, a third
derivative.
"""

# %%
# Two smooth activations
# ----------------------
#
# The physics-informed loss needs an activation with a second derivative that
# is not zero everywhere: through ReLU, :math:`u''` is zero. A gradient
# penalty still reaches the weights through ReLU, but a smooth activation
# brings its own second derivative into all three uses. We write two as
# custom Functions.
#
# ``SmoothReLU`` is the softplus function. Its derivative is the logistic
# sigmoid :math:`\sigma`:
#
# .. math::
#
#    f(x) = \log\left(1 + e^{x}\right), \quad
#    f'(x) = \sigma(x) = \frac{1}{1 + e^{-x}}
#
# Its backward needs only the input, so it saves the input (pattern 1).
#
# ``Tanh`` computes :math:`\tanh`. Its derivative can be written with its
# own output :math:`y = \tanh(x)`:
#
# .. math::
#
#    f'(x) = 1 - y^2
#
# So it saves the output (pattern 2). In both cases ``backward`` computes the
# exact derivative times the incoming gradient with differentiable PyTorch
# operations on a saved input or output, so autograd can differentiate it
# again (:ref:`the model of lesson 01 <backward-as-a-function>`); the third
# order of ``Tanh``, which the physics-informed loss needs, is checked
# below.

import torch
import torch.nn.functional as F


class SmoothReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return F.softplus(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)


class Tanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return grad_out * (1 - y * y)


# %%
# Checking both Functions
# -----------------------
#
# Before using a Function in a model, test it, as in every lesson.

from torch.autograd import gradcheck, gradgradcheck

torch.manual_seed(0)
x = torch.randn(5, dtype=torch.float64, requires_grad=True)

for function in (SmoothReLU, Tanh):
    first_ok = gradcheck(function.apply, (x,))
    second_ok = gradgradcheck(function.apply, (x,))
    name = function.__name__
    print(f"{name}: gradcheck: {first_ok}, gradgradcheck: {second_ok}")
    assert first_ok and second_ok

# %%
# Use 1: Hessian-vector products
# ------------------------------
#
# :ref:`Lesson 08 <lesson-forward-mode>` says what a Hessian-vector product
# :math:`Hv` is, what uses it, and computes it forward over reverse. Double
# backward gives it too, without building :math:`H`. First compute the
# gradient :math:`g` with ``create_graph=True``. Then differentiate the scalar
# :math:`g \cdot v`, with :math:`v` held constant:
#
# .. math::
#
#    \nabla \left( g^{\top} v \right) = H v
#
# Here the loss is a small two-layer network with the ``SmoothReLU``
# activation. All its parameters are packed into one vector ``theta``, so
# the loss is a function of a single tensor.

torch.manual_seed(0)
inputs = torch.randn(20, 3, dtype=torch.float64)
targets = torch.randn(20, 1, dtype=torch.float64)


def mlp_loss(theta, activation=SmoothReLU.apply):
    w1, b1, w2 = torch.split(theta, [8 * 3, 8, 8])
    hidden = activation(inputs @ w1.view(8, 3).T + b1)
    prediction = hidden @ w2.view(8, 1)
    return ((prediction - targets) ** 2).mean()


theta = torch.randn(40, dtype=torch.float64, requires_grad=True)
v = torch.randn(theta.shape, dtype=torch.float64)
print("number of parameters:", theta.numel())

# %%
# The two calls to :func:`torch.autograd.grad`:

(g,) = torch.autograd.grad(mlp_loss(theta), theta, create_graph=True)
(hv,) = torch.autograd.grad(g @ v, theta)
print("Hv, first 4 entries:")
print(hv[:4])

# %%
# PyTorch has a ready-made function for the same product,
# :func:`torch.autograd.functional.hvp`. It returns the value of the function
# and :math:`H v`. For a network this small we can also build the whole Hessian
# with ``torch.autograd.functional.hessian`` and multiply. All three agree,
# but all three go through ``SmoothReLU``'s double backward; the product for
# the same network with PyTorch's own softplus, which does not, agrees too.

from torch.autograd.functional import hessian, hvp

_, hv_reference = hvp(mlp_loss, theta.detach(), v)
full_hessian = hessian(mlp_loss, theta.detach())
print("hvp, first 4 entries:")
print(hv_reference[:4])
print("Hessian shape:", tuple(full_hessian.shape))

_, hv_builtin = hvp(lambda t: mlp_loss(t, F.softplus), theta.detach(), v)
assert torch.allclose(hv, hv_reference)
assert torch.allclose(hv, full_hessian @ v)
assert torch.allclose(hv, hv_builtin)

# %%
# The graph behind a Hessian-vector product
# -----------------------------------------
#
# The second call works because, with ``create_graph=True``, autograd also
# recorded the graph that computed :math:`g`. Drawn for a tiny case (three
# inputs through ``SmoothReLU`` and a squared loss :math:`y^2`), it holds the
# operations of ``SmoothReLU.backward`` (``SigmoidBackward0`` and the
# ``MulBackward0`` that makes ``g``) and those of the loss's backward, which
# computes the incoming gradient :math:`2y`. That gradient reaches ``x``
# through ``SmoothReLUBackward``, the sigmoid reaches it directly: the
# result depends on both, and the second backward walks both from :math:`g`
# back to ``x``. ``node_names`` below collects the class name of every node
# under a node.

from torchviz import make_dot

torch.manual_seed(0)
x_tiny = torch.randn(3, dtype=torch.float64, requires_grad=True)
loss_tiny = (SmoothReLU.apply(x_tiny) ** 2).sum()
(g_tiny,) = torch.autograd.grad(loss_tiny, x_tiny, create_graph=True)


def node_names(node):
    """The class names of every node in the graph below ``node``."""
    if node is None:
        return set()
    found = {type(node).__name__}
    for next_node, _ in node.next_functions:
        found |= node_names(next_node)
    return found


print("nodes in the graph of g:", sorted(node_names(g_tiny.grad_fn)))
assert type(g_tiny.grad_fn).__name__ == "MulBackward0"
assert {"SigmoidBackward0", "SmoothReLUBackward"} <= node_names(g_tiny.grad_fn)
incoming, sigmoid = (node for node, _ in g_tiny.grad_fn.next_functions)
assert type(sigmoid).__name__ == "SigmoidBackward0"
assert "SmoothReLUBackward" in node_names(incoming)
assert "SmoothReLUBackward" not in node_names(sigmoid)
assert all(node.variable is x_tiny for node, _ in sigmoid.next_functions)

make_dot(g_tiny, params={"x": x_tiny, "g": g_tiny})

# %%
# .. _gradient-penalty:
#
# Use 2: a gradient penalty
# -------------------------
#
# A Wasserstein GAN with gradient penalty (WGAN-GP) trains a *critic*
# :math:`D` that scores samples: high for a real sample :math:`x_r`, low for
# a generated ("fake") one :math:`x_f`. The Wasserstein distance that the
# critic estimates asks for a critic whose gradient with respect to its input
# has norm at most 1. WGAN-GP asks for it softly: the critic's loss adds a
# penalty that pushes the norm of that gradient towards 1, averaged over a
# batch:
#
# .. math::
#
#    L = D(x_f) - D(x_r)
#    + \lambda \left( \left\| \nabla_{\hat{x}} D(\hat{x}) \right\|_2
#    - 1 \right)^2
#
# The point :math:`\hat{x} = \epsilon x_r + (1 - \epsilon) x_f`, with
# :math:`\epsilon` drawn uniformly from :math:`[0, 1]`, lies on the segment
# between a real and a fake sample. The penalty contains a gradient, so
# training it needs the gradient of a gradient: double backward through every
# layer of the critic, including our ``SmoothReLU``.
#
# The critic below is a small ``nn.Module``. ``make_critic`` takes the
# activation as an argument, so that we can later build a twin with PyTorch's
# own softplus.

from torch import nn


class SmoothReLULayer(nn.Module):
    def forward(self, x):
        return SmoothReLU.apply(x)


def make_critic(activation):
    torch.manual_seed(1)
    return nn.Sequential(
        nn.Linear(2, 16),
        activation(),
        nn.Linear(16, 16),
        activation(),
        nn.Linear(16, 1),
    ).double()


critic = make_critic(SmoothReLULayer)
print(critic)

# %%
# The data are two clouds of points: the real samples are centered at
# :math:`(2, 2)`, the fake ones at the origin. The penalty function builds the
# mixed points, asks for the critic's gradient at them with
# ``create_graph=True``, and returns the mean of
# :math:`\left( \|\nabla D\|_2 - 1 \right)^2`. One call on the sum of the
# scores gives every point's own gradient, since each score depends only on
# its own point. It works for samples of any shape, single numbers included:
# ``mix`` holds one number per sample, broadcast over the sample's other
# dimensions, and the norm is taken over each flattened sample. On a batch of
# small images it matches a loop over the samples, one at a time; on a batch
# of numbers, with the sine as the critic, it matches the penalty computed
# from the cosine.

torch.manual_seed(2)
real = 0.5 * torch.randn(64, 2, dtype=torch.float64) + 2.0
fake = torch.randn(64, 2, dtype=torch.float64)


def gradient_penalty(critic, real, fake):
    ones = [1] * (real.dim() - 1)
    mix = torch.rand(real.shape[0], *ones, dtype=real.dtype, device=real.device)
    x_hat = (mix * real + (1 - mix) * fake).requires_grad_(True)
    score = critic(x_hat).sum()
    (grad_x_hat,) = torch.autograd.grad(score, x_hat, create_graph=True)
    return ((grad_x_hat.reshape(len(grad_x_hat), -1).norm(2, dim=1) - 1) ** 2).mean()


torch.manual_seed(7)
images_real, images_fake = torch.randn(2, 8, 3, 8, 8, dtype=torch.float64)
image_critic = nn.Sequential(
    nn.Flatten(), nn.Linear(3 * 8 * 8, 16), SmoothReLULayer(), nn.Linear(16, 1)
).double()
torch.manual_seed(8)
batched = gradient_penalty(image_critic, images_real, images_fake)
torch.manual_seed(8)
mixes = torch.rand(8, dtype=torch.float64)  # the same numbers as in the call above
one_at_a_time = []
for m, r, f in zip(mixes, images_real, images_fake, strict=True):
    x_hat = (m * r + (1 - m) * f).unsqueeze(0).requires_grad_(True)
    (grad_x_hat,) = torch.autograd.grad(image_critic(x_hat).sum(), x_hat)
    one_at_a_time.append((grad_x_hat.norm() - 1) ** 2)
one_at_a_time = torch.stack(one_at_a_time).mean()
print(f"images: batched {batched.item():.6f}, one at a time {one_at_a_time.item():.6f}")
assert torch.allclose(batched, one_at_a_time)

torch.manual_seed(9)
numbers_real, numbers_fake = torch.randn(2, 8, dtype=torch.float64)
torch.manual_seed(8)
numbers = gradient_penalty(torch.sin, numbers_real, numbers_fake)
x_hat = mixes * numbers_real + (1 - mixes) * numbers_fake  # the same mixes
assert torch.allclose(numbers, ((torch.cos(x_hat).abs() - 1) ** 2).mean())


# %%
# The penalty reaches the parameters
# ----------------------------------
#
# The penalty is a function of the critic's gradient, and that gradient
# depends on the weights. Differentiating the penalty with respect to the
# weights is therefore a second derivative, and it passes through the
# derivative of ``SmoothReLU.backward``. Every weight matrix gets a nonzero
# gradient from the penalty alone. It would with ``nn.ReLU`` too, whose
# second derivative is zero: the critic's gradient with respect to its input
# depends on the weights of the linear layers directly.
#
# One parameter gets none: the bias of the last layer. It shifts the critic's
# score by a constant, so it does not change the critic's gradient with
# respect to its input. With ``allow_unused=True``, autograd returns ``None``
# for it.

torch.manual_seed(3)
penalty = gradient_penalty(critic, real, fake)
names = [name for name, _ in critic.named_parameters()]
params = list(critic.parameters())
penalty_grads = torch.autograd.grad(penalty, params, allow_unused=True)
for name, grad in zip(names, penalty_grads, strict=True):
    norm = "None" if grad is None else f"{grad.norm():.4f}"
    print(f"{name:9s} gradient norm from the penalty: {norm}")

relu_critic = make_critic(nn.ReLU)
torch.manual_seed(3)
relu_penalty = gradient_penalty(relu_critic, real, fake)
relu_grads = torch.autograd.grad(relu_penalty, list(relu_critic.parameters()), allow_unused=True)
weights = [i for i, name in enumerate(names) if name.endswith("weight")]
print("with nn.ReLU, weight gradient norms:", [f"{relu_grads[i].norm():.4f}" for i in weights])
for i in weights:
    assert penalty_grads[i].norm() > 0 and relu_grads[i].norm() > 0
assert penalty_grads[names.index("4.bias")] is None

# %%
# These gradients are not only nonzero, they are right. A twin critic with the
# same weights but PyTorch's built-in softplus gives the same penalty and the
# same gradients, with the same random mixing (same seed).


class BuiltinSoftplus(nn.Module):
    def forward(self, x):
        return F.softplus(x)


twin = make_critic(BuiltinSoftplus)
twin.load_state_dict(critic.state_dict())

torch.manual_seed(3)
twin_penalty = gradient_penalty(twin, real, fake)
twin_params = list(twin.parameters())
twin_grads = torch.autograd.grad(
    twin_penalty,
    twin_params,
    allow_unused=True,
)
print(f"penalty: custom {penalty.item():.6f}")
print(f"penalty: built-in {twin_penalty.item():.6f}")

assert torch.allclose(penalty, twin_penalty)
for grad, twin_grad in zip(penalty_grads, twin_grads, strict=True):
    assert (grad is None) == (twin_grad is None)
    assert grad is None or torch.allclose(grad, twin_grad)

# %%
# A few training steps
# --------------------
#
# A full critic step puts everything together: the Wasserstein term, the
# penalty with weight :math:`\lambda = 10`, ``loss.backward()`` and an
# optimizer step. The loss goes down, and the penalty stays finite.

torch.manual_seed(4)
optimizer = torch.optim.Adam(params, lr=1e-3, betas=(0.5, 0.9))
penalty_weight = 10.0

for step in range(5):
    penalty = gradient_penalty(critic, real, fake)
    wasserstein = critic(fake).mean() - critic(real).mean()
    loss = wasserstein + penalty_weight * penalty
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(
        f"step {step}: loss {loss.item():.4f},",
        f"penalty {penalty.item():.4f}",
    )
    assert torch.isfinite(penalty)
    if step == 0:
        first_loss = loss.item()

assert loss.item() < first_loss

# %%
# Use 3: a physics-informed residual
# ----------------------------------
#
# A physics-informed neural network (PINN) learns the solution :math:`u(x)`
# of a differential equation. The loss has no known values of :math:`u`
# inside the interval: it measures how badly :math:`u` breaks the equation
# at a set of points (the *collocation points*), plus how far :math:`u` is
# from its values at the boundary. Here the equation is
#
# .. math::
#
#    u''(x) = -\pi^2 \sin(\pi x), \quad u(0) = u(1) = 0
#
# on the interval :math:`[0, 1]`. Its solution is :math:`u(x) = \sin(\pi x)`.
# The network is a small multilayer perceptron with our custom ``Tanh``.


class TanhLayer(nn.Module):
    def forward(self, x):
        return Tanh.apply(x)


def make_net(activation):
    torch.manual_seed(5)
    return nn.Sequential(
        nn.Linear(1, 16),
        activation(),
        nn.Linear(16, 16),
        activation(),
        nn.Linear(16, 1),
    ).double()


net = make_net(TanhLayer)
points = torch.linspace(0, 1, 32, dtype=torch.float64).unsqueeze(1)
points = points.requires_grad_(True)

# %%
# Two derivatives with autograd
# -----------------------------
#
# Each output of the network depends only on its own input point, so the
# gradient of ``u.sum()`` with respect to the points is :math:`u'(x)` at each
# point. Doing it again on ``du.sum()`` gives :math:`u''(x)`. Both calls use
# ``create_graph=True``: the first because we differentiate its result again,
# the second because the loss will contain :math:`u''` and must be trained.


def derivatives(net, x):
    u = net(x)
    (du,) = torch.autograd.grad(u.sum(), x, create_graph=True)
    (d2u,) = torch.autograd.grad(du.sum(), x, create_graph=True)
    return u, du, d2u


u, du, d2u = derivatives(net, points)
print("u''(x) at the first 4 points:")
print(d2u[:4, 0].detach())
d2u_relu = derivatives(make_net(nn.ReLU), points)[2]
print("u''(x) through ReLU, largest magnitude:", d2u_relu.abs().max().item())
assert torch.equal(d2u_relu, torch.zeros_like(d2u_relu)) and d2u.abs().max() > 0

# %%
# Checking the second derivative
# -------------------------------
#
# A second difference of the network's output estimates :math:`u''` without
# any autograd:
#
# .. math::
#
#    u''(x) \approx \frac{u(x + h) - 2 u(x) + u(x - h)}{h^2}
#
# In ``float64`` with :math:`h = 10^{-4}`, this estimate is accurate to better
# than :math:`10^{-6}`, and it agrees with the double backward result.

h = 1e-4
with torch.no_grad():
    u_plus, u_minus = net(points + h), net(points - h)
    d2u_numerical = (u_plus - 2 * net(points) + u_minus) / h**2

print(f"largest difference: {(d2u - d2u_numerical).abs().max():.1e}")
assert torch.allclose(d2u, d2u_numerical, rtol=0, atol=1e-6)

# %%
# The loss needs a third derivative
# ---------------------------------
#
# The loss below contains :math:`u''`, which already uses the second
# derivative of the activation. Its gradient with respect to the weights
# therefore uses the *third* derivative of ``Tanh``. That works because
# ``Tanh.backward`` computes the exact derivative with tracked operations on
# the saved output :math:`y`: differentiating it leads back through :math:`y`
# to the node of ``Tanh``, whose ``backward`` runs again, recorded again.
#
# :func:`~torch.autograd.gradgradcheck` compares second derivatives. To test
# the third, apply it to the first derivative of ``Tanh``, written as a
# function of ``x``: the second derivative of that function is the third
# derivative of ``Tanh``.


def tanh_derivative(x):
    y = Tanh.apply(x)
    (dy,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    return dy


torch.manual_seed(6)
x = torch.randn(4, dtype=torch.float64, requires_grad=True)
third_ok = gradgradcheck(tanh_derivative, (x,))
print("gradgradcheck of Tanh's derivative (third order):", third_ok)
assert third_ok

# %%
# The loss is the mean squared residual of the equation, plus the squared
# values at the two boundary points. Its gradients with respect to the
# weights match those of a twin network that uses ``torch.tanh``.

boundary = torch.tensor([[0.0], [1.0]], dtype=torch.float64)


def pinn_loss(net):
    u, du, d2u = derivatives(net, points)
    residual = d2u + torch.pi**2 * torch.sin(torch.pi * points)
    return (residual**2).mean() + (net(boundary) ** 2).mean()


class BuiltinTanh(nn.Module):
    def forward(self, x):
        return torch.tanh(x)


twin_net = make_net(BuiltinTanh)
twin_net.load_state_dict(net.state_dict())

loss = pinn_loss(net)
loss.backward()
twin_loss = pinn_loss(twin_net)
twin_loss.backward()
print(f"loss: custom {loss.item():.6f}")
print(f"loss: built-in {twin_loss.item():.6f}")

assert torch.allclose(loss, twin_loss)
pairs = zip(net.parameters(), twin_net.parameters(), strict=True)
for p, twin_p in pairs:
    assert torch.allclose(p.grad, twin_p.grad)

# %%
# Training the PINN
# -----------------
#
# Sixty steps of Adam are enough on this tiny problem: the loss falls by more
# than a factor of ten.

optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
losses = []
for step in range(60):
    loss = pinn_loss(net)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
    if step % 10 == 0:
        print(f"step {step:2d}: loss {loss.item():.4f}")

final_loss = pinn_loss(net).item()
print(f"after training: loss {final_loss:.4f}")
assert final_loss < losses[0] / 10

# %%
# Summary
# -------
#
# * A Hessian-vector product by double backward is a gradient with
#   ``create_graph=True`` followed by a second gradient of :math:`g \cdot v`.
#   It matched :func:`torch.autograd.functional.hvp` through our custom
#   ``SmoothReLU``.
# * A gradient penalty trains the weights through the derivative of every
#   layer's ``backward``. The custom activation gave the same penalty gradients
#   as PyTorch's own softplus.
# * A physics-informed loss with :math:`u''` needs the third derivative of the
#   activation. A ``backward`` that computes the exact derivative with
#   differentiable PyTorch operations on saved inputs or outputs is
#   differentiated again at each order, as far as those operations allow
#   (``tanh`` and ``sigmoid``: every order). Test the third order with
#   :func:`~torch.autograd.gradgradcheck` applied to the first derivative.
#
# When a model's second derivatives are wrong and you do not know which
# Function is to blame, read :ref:`the next lesson <lesson-diagnosing>`.
