r"""
.. _lesson-torch-func:

Beyond: custom Functions under torch.func
=========================================

``torch.func`` transforms functions: ``grad`` into its gradient, ``vmap``
into a batched version, ``jacrev``, ``jacfwd`` and ``hessian`` into
derivative matrices. They compose, so ``grad(grad(f))`` is a second
derivative. These transforms, and ``vjp`` and ``jvp``, refuse a custom
Function whose ``forward`` takes ``ctx``: they need the ``setup_context``
style of :ref:`rule 9 in lesson 06 <lesson-extending-rules>`. Beyond that,
some transforms ask for more. This lesson adds those pieces one at a time and
checks every result against a formula or a loop.
"""

# %%
# The newer style, with a generated vmap rule
# -------------------------------------------
#
# In that style, ``Tanh.setup_context`` saves the output, since
# :math:`\tanh'(x) = 1 - \tanh(x)^2`. What ``vmap`` adds is a rule for
# batching the Function; without one, as in ``TanhNoVmapRule``, it refuses the
# Function.
# ``generate_vmap_rule = True`` lets ``vmap`` batch it
# by running its methods under ``vmap`` themselves, which works when they use
# only PyTorch operations that ``vmap`` can batch: no NumPy (shown below), no
# ``.item()``, no ``if`` on a tensor's value.

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
    refused = ""
except RuntimeError as error:
    refused = str(error).split(".")[0]
print("vmap, no rule:", refused)
assert "does not have vmap support" in refused

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
# it works for the reason double backward works. Under ``vmap``, through
# ``Tanh``'s generated rule, it evaluates
# :math:`\tanh''(x) = -2 \tanh(x) (1 - \tanh(x)^2)` at several points at once.

points = torch.tensor([-2.0, -0.5, 0.3, 1.0, 2.5], dtype=torch.float64)
d2 = func.vmap(func.grad(func.grad(Tanh.apply)))(points)
t = torch.tanh(points)
print("grad(grad(tanh)):", d2)
assert torch.allclose(d2, -2 * t * (1 - t**2))

# %%
# ``hessian`` and ``jacfwd`` need a ``jvp`` and a vmap rule
# ---------------------------------------------------------
#
# For :math:`L(x) = \sum_i \tanh(Ax)_i`, with :math:`y = \tanh(Ax)`,
#
# .. math::
#
#    H = A^\top \operatorname{diag}\left( -2 y (1 - y^2) \right) A.
#
# ``jacrev(jacrev(L))`` uses reverse mode twice. It calls the Function outside
# ``vmap`` and runs only the backward pass under ``vmap`` (unless called with
# ``chunk_size=1``, which loops over the rows of the Jacobian instead), where
# the operations of ``backward`` are batched like any others: it needs neither
# a ``jvp`` nor a vmap rule, and works for ``TanhNoVmapRule``. ``hessian`` is
# ``jacfwd(jacrev(L))``: its outer ``jacfwd`` runs the inner computation in
# forward mode (:ref:`lesson 08 <lesson-forward-mode>`), which needs a
# ``jvp``, and pushes all the directions of a basis through it at once under
# ``vmap``, which needs a vmap rule.

A = torch.randn(4, 3, dtype=torch.float64)
x = torch.randn(3, dtype=torch.float64)
y = torch.tanh(A @ x)
H_formula = A.T @ torch.diag(-2 * y * (1 - y**2)) @ A


def result_or_error(transform, function):
    """transform(L) at x for L(x) = sum(function(A x)), or the error's first sentence."""
    try:
        with warnings.catch_warnings():
            # torch.jit.script's deprecation note (lesson 08)
            warnings.filterwarnings(
                "ignore", message="`torch.jit.script` is (deprecated|not supported)"
            )
            return transform(lambda x: function.apply(A @ x).sum())(x)
    except (NotImplementedError, RuntimeError) as error:
        return f"{type(error).__name__}: {str(error).split('. ')[0]}"


def jacrev_jacrev(f):
    return func.jacrev(func.jacrev(f))


assert torch.allclose(result_or_error(jacrev_jacrev, TanhNoVmapRule), H_formula)
no_jvp = result_or_error(func.hessian, Tanh)
print("hessian, no jvp:", no_jvp)
assert "implement the jvp function" in no_jvp

# %%
# ``jvp`` reads what ``setup_context`` passed to ``ctx.save_for_forward`` and
# returns :math:`(1 - y^2)` times the input's tangent. The subclass keeps the
# generated vmap rule, which covers ``jvp`` too; a second subclass turns it
# off, and ``hessian`` fails again, now for want of the rule. ``jacfwd`` on its
# own needs the same two things. Forward over forward (``jacfwd`` of
# ``jacfwd``) gives zeros, with no error, through any Function with a
# ``jvp`` on this PyTorch: a bug
# (`pytorch/pytorch#197867 <https://github.com/pytorch/pytorch/issues/197867>`__).


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


H = result_or_error(func.hessian, TanhWithJvp)
no_rule = result_or_error(func.hessian, TanhWithJvpNoVmapRule)
print("hessian, jvp and vmap rule:\n", H)
print("hessian, jvp only:", no_rule)
assert torch.allclose(H, H_formula)
assert "does not have vmap support" in no_rule

J = func.jacfwd(TanhWithJvp.apply)(x)
assert torch.allclose(J, torch.diag(1 - torch.tanh(x) ** 2))
assert "does not have vmap support" in result_or_error(func.jacfwd, TanhWithJvpNoVmapRule)
assert "implement the jvp function" in result_or_error(func.jacfwd, Tanh)
forward_twice = func.jacfwd(func.jacfwd(lambda u: TanhWithJvp.apply(u).sum()))(x)
assert forward_twice.eq(0).all() and not torch.allclose(forward_twice, H_formula)

# %%
# A Function that ``backward`` calls is another matter. ``TanhCallsGrad``
# computes its ``backward`` with a second Function, ``TanhGrad``, as the cure
# of :ref:`lesson 05 <lesson-untracked-backward>` does. ``jacrev`` then calls
# ``TanhGrad`` under ``vmap``, so ``TanhGrad`` needs a vmap rule (a
# hand-written one if it uses NumPy, as the next section shows);
# ``grad(grad(...))``, which uses no ``vmap``, works without one, and so does
# ``jacrev(jacrev(...))`` when both calls get ``chunk_size=1``: the outer
# ``jacrev`` runs ``backward``, and so ``TanhGrad``, under ``vmap`` too.


class TanhGrad(torch.autograd.Function):
    """b(g, y) = g (1 - y^2), Tanh's backward as a Function of its own."""

    @staticmethod
    def forward(grad_out, y):
        return grad_out * (1 - y * y)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, grad_grad):
        grad_out, y = ctx.saved_tensors
        return grad_grad * (1 - y * y), -2 * grad_grad * grad_out * y


class TanhCallsGrad(TanhNoVmapRule):
    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return TanhGrad.apply(grad_out, y)


calls = result_or_error(jacrev_jacrev, TanhCallsGrad)
print("jacrev(jacrev), backward calls TanhGrad:", calls)
assert "vmap over TanhGrad," in calls
t0 = torch.tanh(points[0])
assert torch.allclose(func.grad(func.grad(TanhCallsGrad.apply))(points[0]), -2 * t0 * (1 - t0**2))
chunked = result_or_error(
    lambda f: func.jacrev(func.jacrev(f, chunk_size=1), chunk_size=1), TanhCallsGrad
)
assert torch.allclose(chunked, H_formula)
inner_only = result_or_error(lambda f: func.jacrev(func.jacrev(f, chunk_size=1)), TanhCallsGrad)
assert "vmap over TanhGrad," in inner_only

# %%
# ``hessian`` and ``jacfwd(jacrev(L))`` ask more of ``TanhGrad``: their outer
# ``jacfwd`` runs the whole backward pass, ``TanhGrad`` included, in forward
# mode under ``vmap``. So ``TanhGrad`` needs what the Function that calls it
# needs: a ``jvp`` and a vmap rule of its own. ``TanhGradWithJvp`` adds both.
# Its ``jvp`` differentiates :math:`b(g, y) = g (1 - y^2)` with respect to both
# inputs, :math:`\dot g (1 - y^2) - 2 g y \dot y`, so ``setup_context`` passes
# both inputs to ``ctx.save_for_forward``. With the generated rule but no
# ``jvp``, as in ``TanhGradNoJvp``, ``hessian`` fails with an opaque
# ``AssertionError`` instead of the clear message about ``jvp`` seen above.


class TanhGradNoJvp(TanhGrad):
    generate_vmap_rule = True


class TanhGradWithJvp(TanhGradNoJvp):
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)
        ctx.save_for_forward(*inputs)

    @staticmethod
    def jvp(ctx, grad_out_tangent, y_tangent):
        grad_out, y = ctx.saved_tensors
        return grad_out_tangent * (1 - y * y) - 2 * grad_out * y * y_tangent


class TanhWithJvpCallsGrad(TanhWithJvp):
    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return TanhGradWithJvp.apply(grad_out, y)


class TanhWithJvpCallsGradNoJvp(TanhWithJvp):
    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return TanhGradNoJvp.apply(grad_out, y)


def jacfwd_jacrev(f):
    return func.jacfwd(func.jacrev(f))


for transform in (func.hessian, jacfwd_jacrev):
    assert torch.allclose(result_or_error(transform, TanhWithJvpCallsGrad), H_formula)
try:
    result_or_error(func.hessian, TanhWithJvpCallsGradNoJvp)
    message = ""
except AssertionError as error:
    message = f"AssertionError: {error}"
print("hessian, TanhGrad with a vmap rule but no jvp:", message)
assert "flat_bdims must not be None" in message

# %%
# .. _func-once-differentiable:
#
# A marked backward: lost terms, and no error
# -------------------------------------------
#
# :func:`~torch.autograd.function.once_differentiable` puts an error node on
# what a ``backward`` returns when grad mode is on and an incoming gradient
# requires grad (:ref:`lesson 05 <lesson-untracked-backward>`). ``grad(grad(f))`` and
# ``jacrev(jacrev(f))`` never raise its error. They take what the marked
# ``backward`` returns as a constant and drop every term of the second
# derivative that passes through it. ``TanhMarked`` is ``Tanh`` with its
# ``backward`` marked; ``incoming`` records whether its incoming gradient
# requires grad. Alone, it gives zeros. In :math:`\tanh(\sin u)`, the term
# :math:`\tanh''(\sin u) \cos^2 u` passes through the marked ``backward`` and
# is lost; only :math:`-\tanh'(\sin u) \sin u` is left. In these cases, and
# in :math:`L` under ``jacrev(jacrev(L))``, nothing but, at most, a sum
# follows ``TanhMarked``: its incoming gradient is a constant, and there is no error
# node at all (case 3 of lesson 05).

from torch.autograd.function import once_differentiable

incoming = []


class TanhMarked(Tanh):
    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        incoming.append(grad_out.requires_grad)  # what the mark tests
        (y,) = ctx.saved_tensors
        return grad_out * (1 - y * y)


def grad_grad(function, inner=lambda u: u, outer=lambda v: v):
    return func.vmap(func.grad(func.grad(lambda u: outer(function.apply(inner(u))))))(points)


ts = torch.tanh(points.sin())
kept = -(1 - ts**2) * points.sin()
lost = -2 * ts * (1 - ts**2) * points.cos() ** 2
print("grad(grad(tanh)), marked:", grad_grad(TanhMarked))
assert torch.allclose(grad_grad(Tanh), -2 * t * (1 - t**2))
assert grad_grad(TanhMarked).eq(0).all()
assert torch.allclose(grad_grad(Tanh, torch.sin), kept + lost)
assert torch.allclose(grad_grad(TanhMarked, torch.sin), kept)
assert lost.abs().min() > 1e-3
assert result_or_error(jacrev_jacrev, TanhMarked).eq(0).all()
assert H_formula.abs().min() > 1e-3
assert incoming and not any(incoming)

# %%
# In :math:`\sin(\tanh u)`, the incoming gradient of ``TanhMarked`` is
# :math:`\cos(\tanh u)`. It depends on :math:`u`, so it requires grad, and
# the error node is made. Built eagerly, this graph raises under
# ``.backward()``, which runs the node. ``grad(grad(f))`` does not run it: it
# returns zeros, with no error, where the second derivative is
# :math:`\cos(\tanh u) \tanh''(u) - \sin(\tanh u) \tanh'(u)^2`. Where
# :func:`torch.autograd.grad` would stop with "appears to not have been used
# in the graph", ``torch.func.grad`` returns zeros for an input it finds no
# path to. Marking ``TanhMarked`` is lesson 07's mistake: its ``backward`` is
# differentiable. A ``backward`` that is not, such as one in NumPy, stops
# under ``grad`` before any of this
# (:ref:`lesson 17 <error-index-no-storage>`).

incoming.clear()
sin_marked = grad_grad(TanhMarked, outer=torch.sin)
print("grad(grad(sin(tanh))), marked:", sin_marked)
assert incoming and all(incoming)
true_d2 = torch.cos(t) * -2 * t * (1 - t**2) - torch.sin(t) * (1 - t**2) ** 2
assert torch.allclose(grad_grad(Tanh, outer=torch.sin), true_d2)
assert sin_marked.eq(0).all() and true_d2.abs().min() > 1e-3

u = points.clone().requires_grad_()
(g,) = torch.autograd.grad(torch.sin(TanhMarked.apply(u)).sum(), u, create_graph=True)
try:
    g.sum().backward()
    eager = ""
except RuntimeError as error:
    eager = str(error)
print("eager .backward():", eager)
assert eager.startswith("trying to differentiate twice")

# %%
# Your own vmap rule
# ------------------
#
# A generated rule is not always possible. This softplus,
# :math:`s(x) = \log(1 + e^{x})` with :math:`s'(x) = \sigma(x)`, computes
# ``forward`` in NumPy. Autograd never differentiates ``forward``, so that is
# fine for derivatives: ``backward`` and ``jvp`` use PyTorch. But under
# ``vmap`` of its input, a generated rule passes ``forward`` a batched tensor,
# and NumPy cannot read it.

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
    message = ""
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
    message = ""
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
# Checking the Functions
# ----------------------
#
# The loop below runs :func:`~torch.autograd.gradcheck` and
# :func:`~torch.autograd.gradgradcheck` on the Functions of this lesson, all
# but ``NumpySoftplusBothRules`` and ``TanhMarked``. It gives ``TanhGrad`` an
# incoming gradient that varies (and, for ``jvp``, a tangent on it). Every
# use above gave ``TanhGrad`` an incoming gradient that does not depend on
# ``x`` (the 1s of
# ``L = sum(...)``; a weighted sum would do the same), so ``grad(grad(...))``,
# the chunked ``jacrev(jacrev(...))`` and ``hessian`` would all have passed
# with the incoming gradient's term of ``backward`` and of ``jvp`` wrong.
# Besides the forward-mode checks of
# :ref:`lesson 08 <lesson-forward-mode>`, it turns on
# ``check_batched_grad=True`` and ``check_batched_forward_grad=True``. These
# batch the gradients that ``backward`` receives and the tangents that ``jvp``
# receives, with an older prototype ``vmap``; they never batch the Function
# itself, so they do not test its vmap rule: ``NumpySoftplusGenerated``,
# whose generated rule failed above, passes gradcheck and gradgradcheck with
# all these options. Test a vmap rule as this lesson does: compare ``vmap``
# with a loop.

from torch.autograd import gradcheck, gradgradcheck


def check(function, has_jvp, n_inputs=1):
    inputs = tuple(torch.randn(3, dtype=torch.float64, requires_grad=True) for _ in range(n_inputs))
    first = gradcheck(
        function.apply,
        inputs,
        check_batched_grad=True,
        check_forward_ad=has_jvp,
        check_batched_forward_grad=has_jvp,
    )
    second = gradgradcheck(
        function.apply, inputs, check_batched_grad=True, check_fwd_over_rev=has_jvp
    )
    return first and second


for function, has_jvp, n_inputs in [
    (Tanh, False, 1),
    (TanhNoVmapRule, False, 1),
    (TanhWithJvp, True, 1),
    (TanhWithJvpNoVmapRule, True, 1),
    (TanhGrad, False, 2),
    (TanhCallsGrad, False, 1),
    (TanhGradNoJvp, False, 2),
    (TanhGradWithJvp, True, 2),
    (TanhWithJvpCallsGrad, True, 1),
    (TanhWithJvpCallsGradNoJvp, False, 1),
    (NumpySoftplus, True, 1),
]:
    assert check(function, has_jvp, n_inputs)
    print(f"{function.__name__}: gradcheck and gradgradcheck pass")
assert check(NumpySoftplusGenerated, True)
print("NumpySoftplusGenerated passes too, with a vmap rule that fails")

# %%
# Summary
# -------
#
# * ``grad``, ``vjp``, ``jvp``, ``vmap`` and the transforms built on them need
#   the ``setup_context`` style
#   (:ref:`rule 9 in lesson 06 <lesson-extending-rules>`).
# * ``vmap`` needs a rule: ``generate_vmap_rule = True`` when every method uses
#   PyTorch operations that ``vmap`` can batch, or a
#   ``vmap(info, in_dims, *args)`` staticmethod.
# * ``grad(grad(f))`` and ``jacrev(jacrev(f))`` need, beyond that style, only a
#   correct ``backward``: no ``jvp``, and no vmap rule for the Function unless
#   they run under ``vmap`` themselves. ``jacrev`` runs ``backward`` under
#   ``vmap``, though (unless every ``jacrev`` gets ``chunk_size=1``), so for it
#   ``backward`` must use operations that ``vmap`` can batch, and a Function
#   that ``backward`` calls needs a vmap rule.
# * ``hessian`` and ``jacfwd`` run forward mode under ``vmap``: they need a
#   ``jvp`` (with ``ctx.save_for_forward``) and a vmap rule. For ``hessian``
#   and ``jacfwd(jacrev(f))``, so does every Function that ``backward`` calls.
# * gradcheck's batched options do not test a vmap rule; compare ``vmap`` with
#   a loop.
#
# Next, :ref:`lesson 10 <lesson-second-derivatives>` puts second derivatives
# to work.
