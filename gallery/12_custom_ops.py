r"""
.. _lesson-custom-ops:

Today: custom operators with torch.library
==========================================

``torch.library.custom_op`` turns a Python function into a PyTorch operator:
the way to wrap Python code PyTorch cannot see into (NumPy, or a library's
bindings to C++ or CUDA) so that ``torch.compile`` and autograd treat it as one opaque
operation, though ``torch.func`` does not differentiate it. Its gradient is
registered with ``register_autograd``, and what the patterns taught still
holds: double backward needs that backward to be made of operations autograd
can differentiate, and to be a correct vector-Jacobian product
(:ref:`lesson 01 <lesson-saving-inputs>`).
This lesson builds one, breaks it, repairs it, and tests it with
``torch.library.opcheck``.
"""

# %%
# A sine computed by NumPy
# ------------------------
#
# Three pieces make an operator with a gradient that :func:`torch.compile` can
# trace:
#
# * the implementation, decorated with :func:`~torch.library.custom_op`, whose
#   type hints become the operator's schema (``mutates_args=()`` says it
#   changes no input);
# * :func:`~torch.library.register_fake`: what the output looks like (shape,
#   dtype, device, strides), computed without data, so that :func:`torch.compile` can
#   trace through it;
# * ``register_autograd(backward, setup_context=...)``, with the
#   ``setup_context(ctx, inputs, output)`` and ``backward`` of a
#   :class:`torch.autograd.Function` in the newer style
#   (:ref:`lesson 06 <lesson-extending-rules>`). ``setup_context`` must use
#   these exact parameter names (with keyword-only arguments, also
#   ``keyword_only_inputs``): PyTorch passes them by keyword.

import warnings

import numpy as np
import torch

# sphinx_gallery_thumbnail_path = "_static/thumbs/12_custom_ops.svg"


@torch.library.custom_op("dbw::numpy_sin", mutates_args=())
def numpy_sin(x: torch.Tensor) -> torch.Tensor:
    return torch.as_tensor(np.sin(x.numpy(force=True)), device=x.device)


@numpy_sin.register_fake
def _(x):
    return torch.empty_like(x)


def save_input(ctx, inputs, output):
    (x,) = inputs
    ctx.save_for_backward(x)


def sin_backward(ctx, grad_out):
    (x,) = ctx.saved_tensors
    return grad_out * torch.cos(x)


numpy_sin.register_autograd(sin_backward, setup_context=save_input)

# %%
# The backward multiplies by ``torch.cos(x)`` of the saved input:
# :ref:`pattern 1 <lesson-saving-inputs>`. Autograd records it, so double
# backward works although the forward is NumPy.

from torch.autograd import gradcheck, gradgradcheck

torch.manual_seed(0)
x = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
assert gradcheck(numpy_sin, (x,)) and gradgradcheck(numpy_sin, (x,))
(grad_x,) = torch.autograd.grad(numpy_sin(x).sum(), x, create_graph=True)
(second,) = torch.autograd.grad(grad_x.sum(), x)
print("gradcheck and gradgradcheck pass; second derivative is -sin(x):", end=" ")
print(torch.allclose(second, -torch.sin(x)))
assert torch.allclose(second, -torch.sin(x))

# %%
# A backward that leaves PyTorch
# ------------------------------
#
# If the backward calls another NumPy operator, ``numpy_cos``, that has no
# gradient of its own, the second derivative is lost, as in
# :ref:`lesson 05 <lesson-untracked-backward>`. How it is lost depends on how
# the backward reaches NumPy, and is the same whether a
# :class:`torch.autograd.Function` or a custom operator holds that backward.
# NumPy called directly is silently a constant, or an error (lesson 05 shows
# when). NumPy wrapped with :func:`~torch.library.custom_op` without a
# registered gradient is never silently a constant in reverse mode: the
# autograd kernel that ``custom_op`` gives the operator raises, so a second
# pass in reverse mode that reaches it stops, be it ``.backward()`` or
# :func:`torch.autograd.grad` (three ways below); :func:`torch.func.grad`
# refuses even the first pass (see below). Forward mode over such a
# ``backward`` is another matter: :func:`torch.func.hessian` can give zeros
# (below). Here it stops both for a custom operator and for a Function whose
# backward calls ``numpy_cos``:


@torch.library.custom_op("dbw::numpy_cos", mutates_args=())
def numpy_cos(x: torch.Tensor) -> torch.Tensor:
    return torch.as_tensor(np.cos(x.numpy(force=True)), device=x.device)


@numpy_cos.register_fake
def _(x):
    return torch.empty_like(x)


@torch.library.custom_op("dbw::numpy_sin_untracked", mutates_args=())
def numpy_sin_untracked(x: torch.Tensor) -> torch.Tensor:
    return numpy_sin(x)


@numpy_sin_untracked.register_fake
def _(x):
    return torch.empty_like(x)


numpy_sin_untracked.register_autograd(
    lambda ctx, grad_out: grad_out * numpy_cos(ctx.saved_tensors[0]), setup_context=save_input
)


class SinFunction(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return torch.sin(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * numpy_cos(x)


assert gradcheck(numpy_sin_untracked, (x,)) and gradcheck(SinFunction.apply, (x,))


def second_passes():
    """Three ways to ask for the second derivative."""
    yield lambda grad: grad.sum().backward()
    yield lambda grad: torch.autograd.grad(grad.sum(), x)
    yield lambda grad: torch.autograd.grad(grad.sum(), x, allow_unused=True)


messages = []
for sin in (numpy_sin_untracked, SinFunction.apply):
    for second_pass in second_passes():
        (grad_x,) = torch.autograd.grad(sin(x).sum(), x, create_graph=True)
        try:
            second_pass(grad_x)
        except RuntimeError as error:
            messages.append(str(error))
print("RuntimeError:", messages[0])
assert len(messages) == 6 and all("through dbw.numpy_cos.default but no" in m for m in messages)

# %%
# That error comes from ``custom_op``. An operator defined the lower-level way,
# with ``torch.library.define`` and ``torch.library.impl`` (or
# ``torch.library.Library``), or in C++ with ``TORCH_LIBRARY``, has one kernel
# per dispatch key: one per device, and Autograd keys for autograd's kernel.
# A kernel registered for a device (``"cpu"``, ``"cuda"``; in C++,
# ``TORCH_LIBRARY_IMPL(ns, CPU, m)``) or for ``"default"`` (the
# CompositeExplicitAutograd key: every device) leaves the Autograd keys empty
# unless a kernel is registered there too. Autograd then runs the kernel with
# grad mode on, on the tensor that requires grad, and only warns, when a
# backward pass goes through the operator's output (a ``UserWarning`` that
# this "may lead to silently incorrect behavior"): calling it shows nothing. A
# kernel made of PyTorch operations is recorded operation by operation
# (checked below). In one that leaves PyTorch, plain ``x.numpy()`` raises;
# ``x.numpy(force=True)``, as in this page's kernels, or
# ``x.detach().numpy()`` detaches first, and the result is a constant that
# passes no gradient on. A ``custom_op`` kernel called with an input that
# requires grad, as ``x`` here, runs with grad mode off (``custom_op``'s
# autograd kernel sees to it), and ``x.numpy()`` refuses a tensor that
# requires grad only in grad mode, so plain ``x.numpy()`` works there too.
# Called with no such input, the kernel runs in the caller's grad mode, and
# no input needs detaching. (``force=True`` also copies a GPU tensor to the
# CPU.) The same three
# passes through a Function whose backward calls such an operator raise no
# error of the operator: ``.backward()`` leaves ``x.grad`` at ``None``,
# :func:`torch.autograd.grad` gives autograd's generic message, and
# ``allow_unused=True`` gives ``None``. With another term in the loss, that
# term's gradient alone comes out, wrong. Wrap such code with ``custom_op``,
# or give the operator a gradient with ``torch.library.register_autograd``,
# which takes an operator defined with ``torch.library.define`` or, as
# PyTorch's own route for C++ and CUDA kernels, with ``TORCH_LIBRARY``.

torch.library.define("dbw::numpy_cos_raw", "(Tensor x) -> Tensor")


@torch.library.impl("dbw::numpy_cos_raw", "cpu")
def _(x):
    return torch.as_tensor(np.cos(x.numpy(force=True)))


class SinRawCos(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return torch.sin(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.ops.dbw.numpy_cos_raw(x)


assert gradcheck(SinRawCos.apply, (x,))
outcomes = []
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for second_pass in second_passes():
        (grad_x,) = torch.autograd.grad(SinRawCos.apply(x).sum(), x, create_graph=True)
        try:
            outcomes.append(second_pass(grad_x))
        except RuntimeError as error:
            outcomes.append(f"RuntimeError: {error}")
    y = x.detach().requires_grad_()
    (grad_y,) = torch.autograd.grad(SinRawCos.apply(y).sum(), y, create_graph=True)
    (grad_y.sum() + (y**2).sum()).backward()  # right: 2y - sin(y)
for asked, outcome in zip((".backward(), then x.grad:", "grad:", "grad, allow_unused:"), outcomes):
    print(f"{asked:27}", x.grad if outcome is None else outcome)
print("with a y**2 term, y.grad is 2y alone:", torch.allclose(y.grad, 2 * y))
assert outcomes[0] is None and x.grad is None and outcomes[2] == (None,)
assert outcomes[1].startswith("RuntimeError: ") and "not have been used" in outcomes[1]
assert torch.allclose(y.grad, 2 * y) and not torch.allclose(y.grad, 2 * y - torch.sin(y))
warned = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
assert len(warned) == 4 and all("numpy_cos_raw: an autograd kernel was not" in m for m in warned)

# The same operator with a kernel of PyTorch operations: recorded, and right in eager mode.
torch.library.define("dbw::torch_cos_raw", "(Tensor x) -> Tensor")


@torch.library.impl("dbw::torch_cos_raw", "cpu")
def _(x):
    return torch.cos(x)


with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    cos_x = torch.ops.dbw.torch_cos_raw(x)
    warned_at_call = len(caught)  # 0: the call itself warns of nothing
    (minus_sin,) = torch.autograd.grad(cos_x.sum(), x)
assert torch.allclose(minus_sin, -torch.sin(x)) and warned_at_call == 0
assert any("torch_cos_raw: an autograd kernel was not" in str(w.message) for w in caught)


# Plain x.numpy(), without force=True: it raises in a "cpu" kernel, not in a custom_op.
def cos_plain(x: torch.Tensor) -> torch.Tensor:
    return torch.as_tensor(np.cos(x.numpy()))


def numpy_error(op):
    """The first sentence of the RuntimeError that op(x) raises, if any."""
    try:
        op(x)
    except RuntimeError as error:
        return str(error).split(". ")[0]
    return ""


torch.library.define("dbw::numpy_cos_plain", "(Tensor x) -> Tensor")
torch.library.impl("dbw::numpy_cos_plain", "cpu", cos_plain)
cos_plain_op = torch.library.custom_op("dbw::numpy_cos_plain_op", cos_plain, mutates_args=())
in_cpu_kernel = numpy_error(torch.ops.dbw.numpy_cos_plain)
print("plain x.numpy() in a cpu kernel: RuntimeError:", in_cpu_kernel)
assert in_cpu_kernel == "Can't call numpy() on Tensor that requires grad"
assert numpy_error(cos_plain_op) == ""


@torch.library.custom_op("dbw::grad_mode_seen", mutates_args=())
def grad_mode_seen(x: torch.Tensor) -> torch.Tensor:
    return torch.tensor(torch.is_grad_enabled())


# Off for an input that requires grad; for one that does not, the caller's.
assert not grad_mode_seen(x) and grad_mode_seen(x.detach())
with torch.no_grad():
    assert not grad_mode_seen(x.detach())

# %%
# A kernel registered for no key (in C++, ``m.def(schema, fn)`` inside
# ``TORCH_LIBRARY``) or for ``"CompositeImplicitAutograd"`` is another matter:
# it serves as the autograd kernel too, so autograd runs it as it is, as if its
# body were written in the caller. Plain ``x.numpy()`` raises there too. A
# body that detaches before leaving PyTorch, as ``x.numpy(force=True)`` does,
# gives a constant without even a warning. The same ``cos`` so registered
# leaves ``SinCiaCos``'s ``backward`` only ``grad_out`` to record. After a
# plain sum, ``grad_out`` is ones: the first gradient does not require grad,
# and with the :math:`y^2` term, ``y.grad`` is :math:`2y` alone, in silence.
# After a sum of :math:`\sin(y)^2`, ``grad_out`` is :math:`2\sin y`: the
# first gradient requires grad, and the second derivative keeps only the part
# through ``grad_out``, :math:`2\cos^2 y` instead of :math:`2\cos 2y`.

torch.library.define("dbw::numpy_cos_cia", "(Tensor x) -> Tensor")


@torch.library.impl("dbw::numpy_cos_cia", "CompositeImplicitAutograd")
def _(x):
    return torch.as_tensor(np.cos(x.numpy(force=True)))


class SinCiaCos(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return torch.sin(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.ops.dbw.numpy_cos_cia(x)


assert gradcheck(SinCiaCos.apply, (x,))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    y = x.detach().requires_grad_()
    (grad_y,) = torch.autograd.grad(SinCiaCos.apply(y).sum(), y, create_graph=True)
    (grad_y.sum() + (y**2).sum()).backward()  # right: 2y - sin(y)
print("first gradient requires grad:", grad_y.requires_grad)
print("y.grad is 2y alone:", torch.allclose(y.grad, 2 * y), "| warnings:", len(caught))
assert not grad_y.requires_grad and caught == []
assert torch.allclose(y.grad, 2 * y) and not torch.allclose(y.grad, 2 * y - torch.sin(y))
(grad_y,) = torch.autograd.grad((SinCiaCos.apply(y) ** 2).sum(), y, create_graph=True)
(second,) = torch.autograd.grad(grad_y.sum(), y)
assert grad_y.requires_grad and torch.allclose(second, 2 * torch.cos(y) ** 2)
assert not torch.allclose(second, 2 * torch.cos(2 * y))
torch.library.define("dbw::numpy_cos_cia_plain", "(Tensor x) -> Tensor")
torch.library.impl("dbw::numpy_cos_cia_plain", "CompositeImplicitAutograd", cos_plain)
assert numpy_error(torch.ops.dbw.numpy_cos_cia_plain).startswith("Can't call numpy() on Tensor")

# %%
# The cure: the inner operator gets a gradient too
# ------------------------------------------------
#
# As in :ref:`pattern 4 <lesson-untracked-backward>`, the operator used by
# the backward gets its own gradient,
# :math:`\cos'(x) = -\sin(x)`. Written with ``numpy_sin``, which has a
# gradient, every higher derivative through ``torch.autograd`` is covered,
# for ``SinFunction`` too. Not through :mod:`torch.func`: its ``grad`` refuses
# ``SinFunction`` even at first order, and ``grad`` of ``grad`` too. What
# decides is where the ``backward`` runs. ``grad`` runs it inside its own
# transform, so the custom operator in ``SinFunction``'s ``backward`` receives
# a tensor the transform tracks. ``vjp`` and ``jacrev`` called outermost run
# it after their transform has ended, and accept ``SinFunction`` at first
# order; a ``vjp`` nested in ``grad`` or in another ``vjp`` refuses it too.
# The message, which asks for a ``setup_context``, is about the Function that
# ``custom_op`` makes for ``numpy_cos`` (see below). The same Function with
# ``torch.cos`` in its ``backward`` goes through ``grad``.


def cos_backward(ctx, grad_out):
    (x,) = ctx.saved_tensors
    return -grad_out * numpy_sin(x)


numpy_cos.register_autograd(cos_backward, setup_context=save_input)

assert gradgradcheck(numpy_sin_untracked, (x,)) and gradgradcheck(SinFunction.apply, (x,))
(grad_x,) = torch.autograd.grad(numpy_sin_untracked(x).sum(), x, create_graph=True)
(second,) = torch.autograd.grad(grad_x.sum(), x, create_graph=True)
(third,) = torch.autograd.grad(second.sum(), x)
print("second and third derivatives right:", end=" ")
print(torch.allclose(second, -torch.sin(x)) and torch.allclose(third, -torch.cos(x)))
assert torch.allclose(second, -torch.sin(x)) and torch.allclose(third, -torch.cos(x))


def sin_sum(u):
    return SinFunction.apply(u).sum()


def refusal(transform, point):
    """The first sentence of the RuntimeError that transform(point) raises, if any."""
    try:
        transform(point)
    except RuntimeError as error:
        return str(error).split(". ")[0]
    return ""


by_grad = refusal(torch.func.grad(sin_sum), x.detach())
by_grad_of_grad = refusal(torch.func.grad(torch.func.grad(sin_sum)), x.detach()[0, 0])
_, vjp_fn = torch.func.vjp(SinFunction.apply, x.detach())  # outermost: accepted below
by_jacrev = torch.func.jacrev(SinFunction.apply)(x.detach()[0])  # outermost: accepted
ones = torch.ones_like(x)


def sin_vjp(u):
    return torch.func.vjp(SinFunction.apply, u)[1](ones)[0]


vjp_in_grad = refusal(torch.func.grad(lambda u: sin_vjp(u).sum()), x.detach())
vjp_in_vjp = refusal(lambda u: torch.func.vjp(sin_vjp, u)[1](ones), x.detach())
print("torch.func.grad of SinFunction: RuntimeError:", by_grad)
for refused in (by_grad, by_grad_of_grad, vjp_in_grad, vjp_in_vjp):
    assert refused.endswith("it must override the setup_context staticmethod")
assert torch.allclose(by_jacrev, torch.diag(torch.cos(x.detach()[0])))


class SinTorchCos(SinFunction):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.cos(x)


# The refusal comes from numpy_cos: without it, grad accepts the Function.
by_torch_cos = torch.func.grad(lambda u: SinTorchCos.apply(u).sum())(x.detach())
assert torch.allclose(by_torch_cos, torch.cos(x))
assert torch.allclose(vjp_fn(torch.ones_like(x))[0], torch.cos(x))

# %%
# Worse, given what :func:`torch.func.hessian` asks of a Function (a vmap rule
# and a ``jvp``), a Function whose ``backward`` calls ``numpy_cos`` goes
# through it without an error and gives zeros: forward mode differentiates the
# ``backward`` and meets the tangent that ``numpy_cos``, a custom operator,
# leaves at zero. A custom operator in the ``jvp`` matters instead to
# ``jacrev`` of ``jacfwd``, which differentiates the ``jvp`` in reverse mode:
# it refuses the Function, and ``hessian`` is right. Two Functions show each
# case alone: ``SinOpInBackward`` calls ``numpy_cos`` in its ``backward``
# only, ``SinOpInJvp`` in its ``jvp`` only.


class SinOpInBackward(SinFunction):
    generate_vmap_rule = True

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)

    @staticmethod
    def jvp(ctx, x_tangent):
        (x,) = ctx.saved_tensors
        return x_tangent * torch.cos(x)


class SinOpInJvp(SinOpInBackward):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.cos(x)

    @staticmethod
    def jvp(ctx, x_tangent):
        (x,) = ctx.saved_tensors
        return x_tangent * numpy_cos(x)


def summed(function):
    return lambda u: function.apply(u).sum()


def rev_fwd(function):
    return torch.func.jacrev(torch.func.jacfwd(function))


point = x.detach()[0]
right = torch.diag(-torch.sin(point))
hessian_backward = torch.func.hessian(summed(SinOpInBackward))(point)
rev_fwd_backward = rev_fwd(summed(SinOpInBackward))(point)
hessian_jvp = torch.func.hessian(summed(SinOpInJvp))(point)
rev_fwd_jvp = refusal(rev_fwd(summed(SinOpInJvp)), point)
print("right second derivatives:       ", right.diagonal())
print("SinOpInBackward, hessian:       ", hessian_backward.diagonal())
print("SinOpInBackward, jacrev(jacfwd):", rev_fwd_backward.diagonal())
print("SinOpInJvp, hessian:            ", hessian_jvp.diagonal())
print("SinOpInJvp, jacrev(jacfwd): RuntimeError:", rev_fwd_jvp)
assert torch.equal(hessian_backward, torch.zeros(3, 3, dtype=torch.float64))
assert torch.allclose(rev_fwd_backward, right)
assert torch.allclose(hessian_jvp, right)
assert rev_fwd_jvp.endswith("it must override the setup_context staticmethod")
for function in (SinOpInBackward, SinOpInJvp):  # torch.autograd gets both right
    assert torch.allclose(torch.autograd.functional.hessian(summed(function), point), right)

# %%
# Zeros, because all of ``SinOpInBackward``'s second derivative passes through
# ``numpy_cos``. Only that operator's part is lost: with :math:`u^2` added to
# the loss, the Hessian has 2 on its diagonal, plausible and wrong. With
# ``torch.cos`` in both staticmethods (``SinTorchRules``), ``hessian`` is
# right. Forward over forward gives zeros for any Function with a ``jvp``,
# whatever it calls (:ref:`lesson 09 <lesson-torch-func>`).


class SinTorchRules(SinOpInBackward):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.cos(x)


def with_square(u):
    return SinOpInBackward.apply(u).sum() + (u**2).sum()


def fwd_fwd(function):
    return torch.func.jacfwd(torch.func.jacfwd(function))


by_func = torch.func.hessian(with_square)(point)
by_autograd = torch.autograd.functional.hessian(with_square, point)
print("with u**2, torch.func.hessian:", by_func.diagonal(), "| autograd:", by_autograd.diagonal())
assert torch.equal(by_func, 2 * torch.eye(3, dtype=torch.float64))
assert torch.allclose(by_autograd, torch.diag(2 - torch.sin(point)))
assert torch.allclose(torch.func.hessian(summed(SinTorchRules))(point), right)
assert torch.equal(fwd_fwd(summed(SinTorchRules))(point), torch.zeros(3, 3, dtype=torch.float64))
assert torch.allclose(fwd_fwd(lambda u: torch.sin(u).sum())(point), right)  # torch.sin: right

# %%
# Testing an operator: opcheck
# ----------------------------
#
# :func:`torch.library.opcheck` tests what :func:`~torch.autograd.gradcheck`
# cannot see: that the schema matches what the function does, that the fake
# implementation agrees with the real one, that a gradient, if there is one,
# is registered to the right dispatch key, and that the operator survives the
# tracing :func:`torch.compile` does. It does not check that a gradient is
# right, and it sees autograd only when a sample input requires grad: give it
# such inputs, as ``x`` below. Then its ``test_aot_dispatch_dynamic`` meets
# the error of a ``custom_op`` without a gradient, and for an operator defined
# the lower-level way without an autograd kernel,
# ``test_autograd_registration`` reports the missing kernel if the kernel is
# made of PyTorch operations. If the kernel detaches and leaves PyTorch, and
# has a fake implementation, the operator passes all the tests (without one,
# two fail for that reason alone), and only gradcheck catches it. Run it beside
# :func:`~torch.autograd.gradcheck` and :func:`~torch.autograd.gradgradcheck`;
# each check it ran reports ``SUCCESS``.

results = torch.library.opcheck(numpy_sin, (x,))
for name, result in results.items():
    print(f"{name:28} {result}")
assert set(results.values()) == {"SUCCESS"}
with warnings.catch_warnings():  # the missing autograd kernel's UserWarning (quoted above)
    warnings.simplefilter("ignore")
    registered = {
        (op, sample.requires_grad): torch.library.opcheck(
            op, (sample,), test_utils="test_autograd_registration", raise_exception=False
        )["test_autograd_registration"]
        for op in (torch.ops.dbw.numpy_cos_raw, torch.ops.dbw.torch_cos_raw)
        for sample in (x, x.detach())
    }
assert registered[torch.ops.dbw.numpy_cos_raw, True] == "SUCCESS"
assert "does not have an autograd kernel" in str(registered[torch.ops.dbw.torch_cos_raw, True])
assert registered[torch.ops.dbw.torch_cos_raw, False] == "SUCCESS"  # no input requires grad


def failed(op, sample):
    """The opcheck tests that op fails on sample, with their errors."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = torch.library.opcheck(op, (sample,), raise_exception=False)
    return {name: result for name, result in results.items() if result != "SUCCESS"}


cos_plain_op.register_fake(lambda x: torch.empty_like(x))  # a custom_op without a gradient
no_gradient = failed(cos_plain_op, x)
assert list(no_gradient) == ["test_aot_dispatch_dynamic"]
assert "no autograd formula" in str(no_gradient["test_aot_dispatch_dynamic"])
assert failed(cos_plain_op, x.detach()) == {}  # no input requires grad
without_fake = failed(torch.ops.dbw.numpy_cos_raw, x)
torch.library.register_fake("dbw::numpy_cos_raw", lambda x: torch.empty_like(x))
assert set(without_fake) == {"test_faketensor", "test_aot_dispatch_dynamic"}
assert all(type(e).__name__ == "UnsupportedOperatorException" for e in without_fake.values())
assert failed(torch.ops.dbw.numpy_cos_raw, x) == {}  # only gradcheck catches it
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    assert not gradcheck(torch.ops.dbw.numpy_cos_raw, (x,), raise_exception=False)

# %%
# An operator whose fake implementation gets the shape wrong passes
# :func:`~torch.autograd.gradcheck` (the real computation and its gradient are
# right) but fails :func:`~torch.library.opcheck`:


@torch.library.custom_op("dbw::numpy_sin_bad_fake", mutates_args=())
def numpy_sin_bad_fake(x: torch.Tensor) -> torch.Tensor:
    return numpy_sin(x)


@numpy_sin_bad_fake.register_fake
def _(x):
    return x.new_empty(x.shape[:-1])  # wrong: drops the last dimension


numpy_sin_bad_fake.register_autograd(sin_backward, setup_context=save_input)
assert gradcheck(numpy_sin_bad_fake, (x,))
try:
    torch.library.opcheck(numpy_sin_bad_fake, (x.detach(),))
    error = None
except Exception as raised:  # OpCheckError, which torch.library does not export
    error = raised
    print(f"{type(error).__name__}:", str(error).split(" (scroll up")[0])
assert type(error).__name__ == "OpCheckError"
assert "test_faketensor failed" in str(error) and "Shapes" in str(error)

# %%
# custom_op or autograd.Function?
# -------------------------------
#
# .. list-table::
#    :header-rows: 1
#
#    * -
#      - :class:`torch.autograd.Function`
#      - :func:`torch.library.custom_op`
#    * - What it wraps
#      - any Python code
#      - Python code PyTorch cannot see into (NumPy, bindings to C++ or
#        CUDA), as one operator
#    * - :func:`torch.compile`
#      - traced into, with the limits of
#        :ref:`lesson 13 <lesson-torch-compile>`
#      - one opaque operator (needs :func:`~torch.library.register_fake`)
#    * - :mod:`torch.func`
#      - yes, with ``setup_context``, and a ``backward`` and a ``jvp`` that
#        call no custom operator where they run inside a transform
#        (``grad``, and any nesting: above); ``vmap``, ``jacfwd`` and
#        ``hessian`` also need a vmap rule, forward mode a ``jvp``
#        (:ref:`lesson 09 <lesson-torch-func>`); but forward over forward
#        gives zeros (a PyTorch bug)
#      - ``grad``, ``vjp``, ``jacrev`` and ``hessian`` refuse it; ``jvp`` and
#        ``jacfwd`` silently give a zero tangent; ``vmap`` runs it, through a
#        slow fallback unless ``register_vmap`` gives it a rule
#    * - Double backward
#      - ``backward`` made of operations that have a gradient
#      - ``backward`` made of operations that have a gradient
#    * - Tests
#      - :func:`~torch.autograd.gradcheck`, :func:`~torch.autograd.gradgradcheck`
#      - the same, plus :func:`~torch.library.opcheck`
#
# The :mod:`torch.func` row, checked on this build's PyTorch. A dual tensor of
# ``torch.autograd.forward_ad`` (:ref:`lesson 08 <lesson-forward-mode>`)
# whose primal requires no grad comes out with no tangent at all, with no
# error either. One whose primal requires grad (with grad mode on), as in the
# forward-over-reverse Hessian-vector product of lesson 08, makes the
# operator's autograd kernel run the Function that ``custom_op`` made for it,
# which has no ``jvp``: PyTorch raises ``NotImplementedError: You must
# implement the jvp function``.

import torch.autograd.forward_ad as fwAD

with warnings.catch_warnings():
    # PyTorch's own deprecation note when forward mode first loads (lesson 8)
    warnings.filterwarnings("ignore", message="`torch.jit.script` is (deprecated|not supported)")
    _, tangent = torch.func.jvp(numpy_sin, (x.detach(),), (ones,))
    _, tangent_of_x = torch.func.jvp(numpy_sin, (x,), (ones,))  # x requires grad
    jacobian = torch.func.jacfwd(numpy_sin)(x.detach()[0])
    with fwAD.dual_level():
        dual = fwAD.make_dual(x.detach(), ones)
        dual_tangent = fwAD.unpack_dual(numpy_sin(dual)).tangent
        sin_tangent = fwAD.unpack_dual(torch.sin(dual)).tangent
        try:
            numpy_sin(fwAD.make_dual(x.detach().requires_grad_(), ones))
            no_jvp = ""
        except NotImplementedError as error:
            no_jvp = str(error)
print("torch.func.jvp tangent is zero:", bool((tangent == 0).all()), "| cos(x) is not")
print("torch.func.jacfwd is zero:", bool((jacobian == 0).all()))
print("forward_ad tangent:", dual_tangent, end=" ")
print("| through torch.sin it is cos(x):", torch.allclose(sin_tangent, torch.cos(x)))
print("forward_ad, primal requiring grad: NotImplementedError:", no_jvp)
assert torch.equal(tangent, torch.zeros_like(x)) and not torch.allclose(tangent, torch.cos(x))
assert torch.equal(tangent_of_x, torch.zeros_like(x))
assert torch.equal(jacobian, torch.zeros(3, 3, dtype=torch.float64))
assert dual_tangent is None and torch.allclose(sin_tangent, torch.cos(x))
assert no_jvp.startswith("You must implement the jvp function")

# %%
# The transforms that differentiate in reverse mode refuse the operator, with
# the message of a Function without ``setup_context``: the autograd kernel
# that ``custom_op`` gives every operator, with or without
# ``register_autograd``, is a Function whose ``forward`` takes ``ctx``.

transforms = {
    "grad": lambda t: torch.func.grad(lambda u: numpy_sin(u).sum())(t),
    "vjp": lambda t: torch.func.vjp(numpy_sin, t)[1](torch.ones_like(t)),
    "jacrev": lambda t: torch.func.jacrev(numpy_sin)(t[0]),
    "hessian": lambda t: torch.func.hessian(lambda u: numpy_sin(u).sum())(t[0]),
}
refused = []
for name, transform in transforms.items():
    try:
        transform(x.detach())
    except RuntimeError as error:
        message = str(error).split(". ")[0]
        if message.endswith("it must override the setup_context staticmethod"):
            refused.append(name)
print(f"torch.func {', '.join(refused)}: RuntimeError:", message)
assert refused == list(transforms)

# %%
# ``vmap`` runs an operator without a vmap rule through a fallback that calls
# it once for each element of the batch, and says so from C++, on the
# process's standard error, where Python's ``warnings`` module cannot catch
# it. The page reads that stream around each call, and the operator below
# notes the shape of each input it receives. A rule registered with
# ``register_vmap`` replaces the fallback, and the message goes away: for an
# elementwise operator, the rule is one call on the whole batch.

import os
import tempfile


def run_reading_stderr(action):
    """Run ``action``; return its result and what C++ wrote to stderr."""
    with tempfile.TemporaryFile(mode="w+") as captured:
        stderr = os.dup(2)
        os.dup2(captured.fileno(), 2)
        try:
            result = action()
        finally:
            os.dup2(stderr, 2)
            os.close(stderr)
        captured.seek(0)
        return result, captured.read()


shapes = []  # the shape of each input the kernel below receives


@torch.library.custom_op("dbw::numpy_sin_noted", mutates_args=())
def numpy_sin_noted(x: torch.Tensor) -> torch.Tensor:
    shapes.append(tuple(x.shape))
    return numpy_sin(x)


with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    by_fallback, said = run_reading_stderr(lambda: torch.func.vmap(numpy_sin_noted)(x.detach()))
print("without a rule:", said[said.index("Warning: ") :].split(" (function")[0])
print("kernel calls, shapes:", shapes)
assert "we have not yet implemented the batching rule for dbw::numpy_sin_noted" in said
assert not any("batching rule" in str(w.message) for w in caught)  # stderr only
assert shapes == [(3,)] * 4  # one call per element of the batch of 4


@numpy_sin_noted.register_vmap
def _(info, in_dims, x):
    return numpy_sin_noted(x), in_dims[0]  # elementwise: the batch dimension stays put


shapes.clear()
by_rule, said = run_reading_stderr(lambda: torch.func.vmap(numpy_sin_noted, in_dims=1)(x.detach()))
print("with register_vmap: nothing said:", said == "", "| kernel calls, shapes:", shapes)
assert said == "" and shapes == [(4, 3)]  # one call on the whole batch
assert torch.allclose(by_fallback, torch.sin(x)) and torch.allclose(by_rule, torch.sin(x).T)

# %%
# Summary
# -------
#
# * :func:`~torch.library.custom_op` + :func:`~torch.library.register_fake` +
#   :func:`~torch.library.register_autograd` make an operator with a gradient,
#   opaque to :func:`torch.compile`.
# * Its double backward needs a backward made of operations with gradients;
#   in reverse mode, a ``custom_op`` without one stops the second pass with an
#   error. An operator registered the lower-level way for a device or
#   ``"default"`` without an autograd kernel only warns, when a backward goes
#   through it; one registered for no
#   key or for ``"CompositeImplicitAutograd"`` runs under autograd as it is.
#   In both, a kernel that leaves PyTorch raises at plain ``x.numpy()``, and
#   one that detaches first (``force=True``) gives a constant, in the second
#   case without a warning.
# * :mod:`torch.func` refuses it in reverse mode and gives silent zeros in
#   forward mode; only ``vmap`` gives a right result. A dual tensor of ``torch.autograd.forward_ad``
#   comes out of it with no tangent, or, if its primal requires grad (in grad
#   mode), raises ``NotImplementedError``. A part that :mod:`torch.func` or
#   forward mode must differentiate is written as a Function, and so is code
#   outside PyTorch that its ``backward`` calls (pattern 4): a second
#   Function, not a custom operator, with its own ``setup_context``, ``jvp``
#   and vmap rule (``jacrev`` vmaps the ``backward``). A custom operator in a
#   Function's ``backward`` makes :func:`torch.func.hessian` silently drop that
#   operator's part of the second derivative (for ``SinOpInBackward``, all of
#   it: zeros); one in its ``jvp`` makes ``jacrev`` of ``jacfwd`` refuse it.
# * Test with :func:`~torch.autograd.gradcheck`,
#   :func:`~torch.autograd.gradgradcheck` and :func:`~torch.library.opcheck`.
#
# Next, :ref:`lesson 13 <lesson-torch-compile>`: what happens to double
# backward under :func:`torch.compile`.
