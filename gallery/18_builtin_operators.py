r"""
.. _error-index-builtins:

.. _lesson-builtin-operators:

Built-in operators without a second derivative
==============================================

Most of PyTorch's own derivative formulas can be differentiated again; a
few cannot, and double backward through them stops inside PyTorch with a
message that names the operator's backward: "derivative for aten::NAME is
not implemented", a ``RuntimeError``, when that backward operator has no
derivative formula of its own, or "the derivative for 'NAME' is not
implemented", a ``NotImplementedError``, when its formula says so. The fix
is another path to the same value, made of operations that can be
differentiated twice.

Each operator's fix below that runs on a CPU was checked with double
backward (``torch.autograd.grad`` twice) and with
:func:`torch.func.hessian`, which also needs a forward-mode formula for every
operator on the fix's path. The operators on every such path have one,
except ``_euclidean_dist``, on the path of the distances through matrix
products (of ``cdist``, and so of ``pdist``; :ref:`its entry
<error-index-forward-ad>`). On a GPU, the fused cells on the path of the fix
for ``nn.LSTM`` and ``nn.GRU`` lack one too (:ref:`the section on GPUs
<error-index-gpu>`). The entries below are not a complete list: :ref:`the last
section <error-index-more>` prints the backward operators whose formula says
``not_implemented``, read from the PyTorch that built this page, and runs
more operators whose backward has no formula at all, with their fixes.

The other messages of double backward are in the error index:
:ref:`lesson 15 <lesson-error-index>` for computing and checking second
derivatives, :ref:`lesson 16 <lesson-error-index-function>` for writing a
Function, :ref:`lesson 17 <lesson-error-index-ops>` for custom operators,
:mod:`torch.func` and ``vmap``; and a second derivative that is wrong with no
message in :ref:`lesson 19 <lesson-error-index-silent>`.

.. contents:: On this page
   :local:
"""

# %%
# Each example runs through the helper of :ref:`the error index
# <lesson-error-index>`: it expects one exception type, prints the message,
# and fails the build if the example raised nothing.

import torch

# sphinx_gallery_thumbnail_path = "_static/thumbs/18_builtin_operators.svg"
from torch.autograd import gradcheck, gradgradcheck

torch.manual_seed(0)  # the same random tensors at every build


def message_of(expected, action):
    """Run ``action``; print and return the message of the expected exception."""
    try:
        action()
    except expected as error:
        print(f"{type(error).__name__}: {error}".split("\n\n")[0])
        return str(error)
    raise AssertionError(f"no {expected.__name__} was raised")


# %%
# ``derivative for aten::_scaled_dot_product_flash_attention_for_cpu_backward is not implemented``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** on a CPU, ``torch.nn.functional.scaled_dot_product_attention``
# runs its fused flash kernel when its inputs allow (4-D, no dropout, among
# other conditions), and that kernel's backward has no derivative. Readers
# meet it through ``nn.MultiheadAttention`` called with
# ``need_weights=False``, and through ``nn.TransformerEncoderLayer`` and
# ``nn.TransformerDecoderLayer`` (which pass ``need_weights=False``), once
# dropout is off: in eval mode, or with ``dropout=0``. With dropout in
# training mode, or ``nn.MultiheadAttention``'s default
# ``need_weights=True``, attention takes a path made of ordinary operations,
# and double backward works. **Fix:** for the part
# differentiated twice, ask for the math backend, which computes attention
# with ordinary operations:
# ``with torch.nn.attention.sdpa_kernel(SDPBackend.MATH):`` around the
# forward pass, since the kernel is chosen there; around the gradient calls
# alone, it changes nothing.

import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

q, k, v = (torch.rand(2, 3, 4, 8, dtype=torch.float64, requires_grad=True) for _ in range(3))


def second_derivative_in_q(attention):
    (grad_q,) = torch.autograd.grad(attention(q, k, v).pow(2).sum(), q, create_graph=True)
    return torch.autograd.grad(grad_q.pow(2).sum(), q)[0]


def attention_by_hand(q, k, v):
    return torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, dim=-1) @ v


print("kernel:", F.scaled_dot_product_attention(q, k, v).grad_fn.name())
message = message_of(RuntimeError, lambda: second_derivative_in_q(F.scaled_dot_product_attention))
assert "derivative for aten::_scaled_dot_product_flash_attention_for_cpu_backward" in message
with sdpa_kernel(SDPBackend.MATH):
    by_math_backend = second_derivative_in_q(F.scaled_dot_product_attention)
assert torch.allclose(by_math_backend, second_derivative_in_q(attention_by_hand))


def math_backend_around_gradients_only():
    out = F.scaled_dot_product_attention(q, k, v)  # the flash kernel, chosen here
    with sdpa_kernel(SDPBackend.MATH):
        (grad_q,) = torch.autograd.grad(out.pow(2).sum(), q, create_graph=True)
        torch.autograd.grad(grad_q.pow(2).sum(), q)


message = message_of(RuntimeError, math_backend_around_gradients_only)
assert "_scaled_dot_product_flash_attention_for_cpu_backward is not implemented" in message

# %%
# Through the layers, on a batch of 2 sequences of 4 tokens of width 8:

tokens = torch.rand(2, 4, 8, dtype=torch.float64, requires_grad=True)
attention = torch.nn.MultiheadAttention(8, 2, batch_first=True, dtype=torch.float64)
layer = torch.nn.TransformerEncoderLayer(
    8, 2, dim_feedforward=16, batch_first=True, dtype=torch.float64
)  # dropout=0.1 by default


def second_derivative_in_tokens(module):
    (grad,) = torch.autograd.grad(module(tokens).pow(2).sum(), tokens, create_graph=True)
    return torch.autograd.grad(grad.pow(2).sum(), tokens)[0]


second_derivative_in_tokens(lambda t: attention(t, t, t)[0])  # need_weights=True: works
flash_error = "_scaled_dot_product_flash_attention_for_cpu_backward is not implemented"
message = message_of(
    RuntimeError,
    lambda: second_derivative_in_tokens(lambda t: attention(t, t, t, need_weights=False)[0]),
)
assert flash_error in message
second_derivative_in_tokens(layer)  # training mode, dropout on: works
message = message_of(RuntimeError, lambda: second_derivative_in_tokens(layer.eval()))
assert flash_error in message
with sdpa_kernel(SDPBackend.MATH):
    assert second_derivative_in_tokens(layer).isfinite().all()  # the fix, in eval mode

# %%
# ``the derivative for '_cdist_backward' is not implemented``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``torch.cdist`` computes the distances with its own kernel, whose
# backward has no derivative: always for ``p`` other than 2, and for ``p=2``
# unless it takes its path through matrix products, which
# ``compute_mode="use_mm_for_euclid_dist"`` forces (the default mode takes it
# only when an input has more than 25 rows). **Fix:** for ``p=2``, that
# ``compute_mode``. It computes :math:`\|a\|^2 + \|b\|^2 - 2\,a \cdot b`, which
# loses the distance between points close to each other and far from the
# origin, in float32 above all (below). For other ``p``, or where that
# precision matters, the distances written with differentiable operations,
# ``(x1.unsqueeze(-2) - x2.unsqueeze(-3)).norm(p=p, dim=-1)``, which hold
# every difference in memory, and need care where a difference is 0: on the
# diagonal of ``cdist(x, x)``, where two points coincide, and where they
# share a coordinate (below).

points = torch.rand(4, 2, dtype=torch.float64, requires_grad=True)
centres = torch.rand(5, 2, dtype=torch.float64)


def second_derivative_in_points(distance, a=points, b=centres):
    (grad,) = torch.autograd.grad(distance(a, b).sum(), a, create_graph=True)
    return torch.autograd.grad(grad.pow(2).sum(), a)[0]


def cdist_by_differences(p=2.0):
    """cdist(a, b, p), by the differences of every pair of points."""
    return lambda a, b: (a.unsqueeze(-2) - b.unsqueeze(-3)).norm(p=p, dim=-1)


def cdist_by_products(a, b):
    return torch.cdist(a, b, compute_mode="use_mm_for_euclid_dist")


message = message_of(NotImplementedError, lambda: second_derivative_in_points(torch.cdist))
assert "the derivative for '_cdist_backward' is not implemented" in message
assert torch.allclose(
    second_derivative_in_points(cdist_by_products),
    second_derivative_in_points(cdist_by_differences()),
)

near = torch.tensor([[100.0, 100.0]])  # float32
apart = near + torch.tensor([[1e-3, 0.0]])
print("by products:   ", cdist_by_products(near, apart).item())
print("by differences:", cdist_by_differences()(near, apart).item())
assert abs(cdist_by_products(near, apart).item() - 1e-3) > 5e-4  # not even close
assert abs(cdist_by_differences()(near, apart).item() - 1e-3) < 1e-6
message = message_of(  # p=1 has no path through matrix products
    NotImplementedError,
    lambda: second_derivative_in_points(
        lambda a, b: torch.cdist(a, b, p=1.0, compute_mode="use_mm_for_euclid_dist")
    ),
)
assert "the derivative for '_cdist_backward' is not implemented" in message

# %%
# On the diagonal of ``cdist(x, x)``, each point's distance to itself is 0
# whatever ``x`` is, so its true derivatives, first and second, are 0. Double
# backward through the norm of the differences does not return them: at a
# difference of 0, differentiating PyTorch's formula for the norm's gradient
# gives 0 times an infinite factor, which is not finite for ``p`` of 1.5, 2
# and 2.5, and autograd carries it back to ``x``, although a point minus
# itself does not change with ``x``. For 1 and 3 the result is finite and
# right (among those tried below). The exact fix leaves the diagonal out of
# the computation: ``cdist_to_itself`` below sets it to 0 and hands the norm
# a difference of 1 there instead. ``torch.where`` alone is not enough: the
# gradient of 0 it sends back to the norm still meets the infinite factor.
# Keeping only the pairs ``i < j``, as for ``pdist`` below, works too.

from functools import partial


def cdist_to_itself(x, p=2.0):
    """cdist(x, x, p), with a diagonal set to 0 instead of computed."""
    d = x.unsqueeze(-2) - x.unsqueeze(-3)
    diagonal = torch.eye(x.shape[-2], dtype=torch.bool, device=x.device)
    d = torch.where(diagonal.unsqueeze(-1), 1.0, d)  # no difference of 0 reaches the norm
    return torch.where(diagonal, 0.0, d.norm(p=p, dim=-1))


def where_alone(x, p=2.0):
    """The diagonal set to 0 by torch.where alone: not enough."""
    diagonal = torch.eye(x.shape[-2], dtype=torch.bool, device=x.device)
    return torch.where(diagonal, 0.0, cdist_by_differences(p)(x, x))


def second_derivative_to_itself(distances):
    (grad,) = torch.autograd.grad(distances(points).sum(), points, create_graph=True)
    return torch.autograd.grad(grad.pow(2).sum(), points)[0]


def to_itself(distance):
    """The distances of x to itself, by a distance between two sets of points."""
    return lambda x: distance(x, x)


orders = (1.0, 1.5, 2.0, 2.5, 3.0)
exact, not_finite = {}, []
for p in orders:
    assert torch.allclose(cdist_to_itself(points, p), torch.cdist(points, points, p=p))
    assert gradgradcheck(partial(cdist_to_itself, p=p), (points,))
    exact[p] = second_derivative_to_itself(partial(cdist_to_itself, p=p))
    by_differences = second_derivative_to_itself(to_itself(cdist_by_differences(p)))
    if by_differences.isfinite().all():
        assert torch.allclose(by_differences, exact[p])
    else:
        not_finite.append(p)
print("cdist(x, x) by differences, p with second derivatives not finite:", not_finite)
assert not_finite == [1.5, 2.0, 2.5]
assert not second_derivative_to_itself(where_alone).isfinite().all()

# %%
# Two distinct points that coincide (a point and a centre, or two rows of
# ``x``) are another matter: the norm of their difference has no derivative
# there, first or second. It is a cone (for a finite ``p`` above 1, one whose
# curvature grows without bound as the points approach; for ``p`` of 1 and
# infinity, a piecewise-linear one), and double backward
# through the norm of the differences is not finite there for the same ``p``
# as on the diagonal. Where a finite stand-in will do, for ``p=2`` the path
# through matrix products stays finite there; so does a smoothed norm of the
# differences ``d``, ``((d**2 + eps) ** (p / 2)).sum(-1) ** (1 / p)``. Its
# second derivatives there are of the order of ``eps ** -0.5``, ``1e6`` with
# ``eps=1e-12``, and it puts a distance of ``n ** (1 / p) * eps ** 0.5``
# between coincident points of ``n`` coordinates. That was measured for
# ``p`` from 1 to 3 in float64, below. Where the norm of the differences
# fails on the diagonal of ``cdist(x, x)``, both give the exact values of
# ``cdist_to_itself`` (within ``1e-6`` on these points). For ``p=1``, and for
# ``p=3`` and above (tried: 3, 4 and infinity), the norm of the differences
# needs no smoothing, as it stays finite; above ``p=3``, the smoothed norm
# would be worse: its second derivatives stay of the order of
# ``eps ** -0.5``, but the powers of ``eps`` computed on the way overflow in
# float32, below ``p=4`` already. On the diagonal
# of ``cdist(x, x)``, with ``eps=1e-12``, its second derivatives in float32
# are finite for ``p`` of 3 and 3.5, and not for 3.8 and 4 (below).


def smoothed(p, eps=1e-12):
    """cdist(a, b, p), with a norm smoothed where two points coincide."""

    def distance(a, b):
        d = a.unsqueeze(-2) - b.unsqueeze(-3)
        return ((d**2 + eps) ** (p / 2)).sum(-1) ** (1 / p)

    return distance


def hessian_of_smoothed(p, point, centre):
    """The Hessian, in the point, of its smoothed distance to the centre."""
    return torch.func.hessian(lambda a: smoothed(p)(a, centre).sum())(point).reshape(2, 2)


touching = torch.cat([centres, points[:1].detach()])  # a centre where a point is
not_finite = [
    p
    for p in orders
    if not second_derivative_in_points(cdist_by_differences(p), b=touching).isfinite().all()
]
assert not_finite == [1.5, 2.0, 2.5]
for p in (4.0, float("inf")):  # finite too, on the diagonal as where two points coincide
    assert second_derivative_to_itself(to_itself(cdist_by_differences(p))).isfinite().all()
    assert second_derivative_in_points(cdist_by_differences(p), b=touching).isfinite().all()
assert second_derivative_in_points(cdist_by_products, b=touching).isfinite().all()
assert torch.allclose(second_derivative_to_itself(to_itself(cdist_by_products)), exact[2.0])
for p in orders:
    assert second_derivative_in_points(smoothed(p), b=touching).isfinite().all()
    at_coincidence = hessian_of_smoothed(p, centres[:1], centres[:1])
    assert torch.allclose(
        at_coincidence, 2 ** (1 / p - 1) * 1e6 * torch.eye(2, dtype=torch.float64)
    )
    assert torch.allclose(smoothed(p)(points, centres), torch.cdist(points, centres, p=p))
    coincident = smoothed(p)(points, points).diagonal()
    assert torch.allclose(coincident, torch.full((4,), 2 ** (1 / p) * 1e-6, dtype=torch.float64))
for p in not_finite:
    by_smoothing = second_derivative_to_itself(to_itself(smoothed(p)))
    assert torch.allclose(by_smoothing, exact[p], atol=1e-6)


def smoothed_is_finite_in_float32(p):
    rows = points.detach().float().requires_grad_()
    (grad,) = torch.autograd.grad(smoothed(p)(rows, rows).sum(), rows, create_graph=True)
    return torch.autograd.grad(grad.pow(2).sum(), rows)[0].isfinite().all()


in_float32 = {p: smoothed_is_finite_in_float32(p).item() for p in (3.0, 3.5, 3.8, 4.0)}
print("smoothed, float32, second derivatives on the diagonal finite:", in_float32)
assert in_float32 == {3.0: True, 3.5: True, 3.8: False, 4.0: False}

# %%
# Double backward through the norm of the differences also fails where two
# distinct points share a coordinate, which grid or integer data make
# common: for ``p`` of 1.5 and 2.5 among those tried below. For ``p``
# between 1 and 3, other than 2, PyTorch's formula for the norm's gradient
# raises the absolute value of each coordinate of the difference to the
# power ``p - 1`` (below 2) or ``p - 2`` (above 2), whose derivative at 0 is
# infinite. Between 1 and 2, the true second derivative is infinite there
# too; between 2 and 3, it is finite, and its part from that coordinate is
# 0. The smoothed norm stays finite there. Its second derivative from that
# coordinate is ``r ** (1 - p) * eps ** ((p - 2) / 2)``, where ``r`` is the
# smoothed distance between the two points, so it depends on that distance
# except for ``p=1``. Printed below for a centre 2 away: ``1e6`` for
# ``p=1``, where the norm of the differences gives 0 (the value on either
# side of the kink), ``0.5`` for ``p=2``, the true ``1 / r``, and
# ``3.5e-4`` for ``p=2.5``.
#
# In short, for ``p`` of 1 and above: on the diagonal of ``cdist(x, x)``,
# leave the diagonal out. Elsewhere, take the norm of the differences for
# ``p=1`` and from ``p=3``, and in between the smoothed norm, or for ``p=2``
# the matrix products. Below 1 (tried: 0.5), the norm of the differences is
# not finite at any of these places.

on_grid = torch.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.5]], dtype=torch.float64)
on_grid.requires_grad_()
grid_centres = torch.tensor([[0.0, 2.0], [3.0, 1.0]], dtype=torch.float64)  # 1 or more away
in_grid = partial(second_derivative_in_points, a=on_grid, b=grid_centres)
shared = [p for p in orders if not in_grid(cdist_by_differences(p)).isfinite().all()]
print("points on a grid, by differences, p with second derivatives not finite:", shared)
assert shared == [1.5, 2.5]
assert all(in_grid(cdist_by_differences(p)).isfinite().all() for p in (4.0, float("inf")))
at_shared = {}  # for the point (0, 0) and the centre (0, 2), in the first coordinate
for p in orders:
    assert in_grid(smoothed(p)).isfinite().all()
    at_shared[p] = hessian_of_smoothed(p, on_grid[:1].detach(), grid_centres[:1])[0, 0].item()
    formula = 2.0 ** (1 - p) * 1e-12 ** ((p - 2) / 2)  # 2 away, in every p-norm
    assert abs(at_shared[p] - formula) <= 1e-3 * formula
print("smoothed, second derivative at a shared coordinate:")
print(", ".join(f"p={p}: {value:.2g}" for p, value in at_shared.items()))
assert in_grid(cdist_by_differences(1.0)).eq(0).all()
below_one = cdist_by_differences(0.5)
assert not second_derivative_to_itself(to_itself(below_one)).isfinite().all()
assert not second_derivative_in_points(below_one, b=touching).isfinite().all()
assert not in_grid(below_one).isfinite().all()

# %%
# ``derivative for aten::_ctc_loss_backward is not implemented``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``torch.nn.functional.ctc_loss`` computes its gradient with a
# kernel of its own, which has no derivative. **Fix:** the loss computed by
# CTC's forward recursion written with PyTorch operations, which autograd
# differentiates to any order (slower: a Python loop over time steps). It is
# a sketch. It returns the sum over the batch, as ``reduction="sum"`` does,
# not ``ctc_loss``'s default, which divides each loss by its target length
# and averages over the batch. For an impossible alignment (a target too
# long for its input) it returns about ``1e30`` and a finite gradient that
# means nothing, where ``ctc_loss`` returns ``inf`` and a gradient of
# ``nan`` (run below). It has no ``zero_infinity``, takes no empty target,
# and takes the targets only padded, as a 2-D tensor (not concatenated in
# 1-D). It is compared with ``ctc_loss`` through a ``log_softmax``, as
# ``ctc_loss`` expects: its own gradient assumes normalised log-probabilities.
#
# Under a transform of :mod:`torch.func` (``grad``, ``jacrev``), pass
# ``ctc_loss`` its ``input_lengths`` and ``target_lengths`` as tensors: with
# Python lists, even its first derivative stops with "Cannot access data
# pointer of Tensor that doesn't have storage" (run below). On a CUDA device,
# ``ctc_loss`` may take cuDNN's kernel instead, where double backward need
# not stop with this message: :ref:`the section on GPUs <error-index-gpu>`
# says when, and how to check it.

ctc_inputs = dict(
    targets=torch.tensor([[1, 1, 2], [3, 1, 0]]),
    input_lengths=torch.tensor([6, 5]),
    target_lengths=torch.tensor([3, 2]),
)
logits = torch.randn(6, 2, 4, dtype=torch.float64, requires_grad=True)  # (T, N, C)


def second_derivative_in_logits(ctc):
    loss = ctc(logits.log_softmax(2), **ctc_inputs)
    (grad,) = torch.autograd.grad(loss, logits, create_graph=True)
    return loss, grad, torch.autograd.grad(grad.pow(2).sum(), logits)[0]


def ctc_loss_by_recursion(log_probs, targets, input_lengths, target_lengths, blank=0):
    """CTC loss summed over the batch, by its forward recursion in log space."""
    assert log_probs.dim() == 3, "takes log_probs of shape (T, N, C)"
    assert targets.dim() == 2, "takes targets padded, of shape (N, S)"
    device = log_probs.device
    log_zero = torch.tensor(-1e30, dtype=log_probs.dtype, device=device)  # finite: no nan
    losses = []
    for n in range(log_probs.shape[1]):
        labels = targets[n, : target_lengths[n]]
        assert len(labels) > 0, "takes targets of length 1 or more"
        path = torch.full((2 * len(labels) + 1,), blank, device=device)  # blank around each
        path[1::2] = labels
        # can_skip[s]: position s may be reached from s - 2, skipping the blank
        # between them: s holds a label that differs from the label at s - 2
        can_skip = torch.zeros(len(path), dtype=torch.bool, device=device)
        can_skip[2:] = (path[2:] != blank) & (path[2:] != path[:-2])
        log_p = log_probs[: input_lengths[n], n, path]
        alpha = torch.cat([log_p[0, :2], log_zero.expand(len(path) - 2)])
        for t in range(1, len(log_p)):
            one_back = torch.cat([log_zero.view(1), alpha[:-1]])
            two_back = torch.where(can_skip, torch.cat([log_zero.expand(2), alpha[:-2]]), log_zero)
            alpha = torch.logsumexp(torch.stack([alpha, one_back, two_back]), dim=0) + log_p[t]
        losses.append(-torch.logsumexp(alpha[-2:], dim=0))
    return torch.stack(losses).sum()


def builtin_ctc(log_probs, **kwargs):
    return F.ctc_loss(log_probs, **kwargs, reduction="sum")


message = message_of(RuntimeError, lambda: second_derivative_in_logits(builtin_ctc))
assert "derivative for aten::_ctc_loss_backward is not implemented" in message
loss, grad, second = second_derivative_in_logits(ctc_loss_by_recursion)
builtin_loss = builtin_ctc(logits.log_softmax(2), **ctc_inputs)
assert torch.allclose(loss, builtin_loss)
assert torch.allclose(grad, torch.autograd.grad(builtin_loss, logits)[0])

tiny = torch.randn(4, 1, 3, dtype=torch.float64).log_softmax(2).requires_grad_()


def tiny_ctc(log_probs):
    return ctc_loss_by_recursion(log_probs, torch.tensor([[1, 2]]), [4], [2])


assert gradcheck(tiny_ctc, (tiny,)) and gradgradcheck(tiny_ctc, (tiny,))
assert not torch.allclose(loss, F.ctc_loss(logits.log_softmax(2), **ctc_inputs))  # the mean

short = tiny[:2].detach().requires_grad_()  # 2 steps, too few for labels 1, blank, 1
impossible = dict(targets=torch.tensor([[1, 1]]), input_lengths=[2], target_lengths=[2])
by_recursion = ctc_loss_by_recursion(short, **impossible)
by_builtin = builtin_ctc(short, **impossible)
print("impossible alignment:", by_recursion.item(), by_builtin.item())
assert by_recursion > 1e29 and by_builtin.isinf()
assert torch.autograd.grad(by_recursion, short)[0].isfinite().all()
assert torch.autograd.grad(by_builtin, short)[0].isnan().all()


def ctc_under_grad(input_lengths, target_lengths):
    def loss(log_probs):
        return F.ctc_loss(log_probs, torch.tensor([[1, 2]]), input_lengths, target_lengths)

    return torch.func.grad(loss)(tiny.detach())


message = message_of(RuntimeError, lambda: ctc_under_grad([4], [2]))
assert "Cannot access data pointer of Tensor that doesn't have storage" in message
assert torch.allclose(
    ctc_under_grad(torch.tensor([4]), torch.tensor([2])),
    torch.autograd.grad(F.ctc_loss(tiny, torch.tensor([[1, 2]]), [4], [2]), tiny)[0],
)

# %%
# ``the derivative for '_pdist_backward' is not implemented``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** the backward of ``torch.pdist``, the distances between the rows
# of a matrix, has no derivative, for every ``p``. **Fix:** the same
# distances through ``torch.cdist``: for ``p=2``, ``cdist(x, x,
# compute_mode="use_mm_for_euclid_dist")``, keeping the pairs above the
# diagonal that ``torch.triu_indices(n, n, 1)`` lists, in the order of
# ``pdist``, with the loss of precision that the ``cdist`` entry shows; for
# other ``p``, or where that precision matters, the norm of the differences
# of those pairs of rows, with the ``cdist`` entry's caveats for rows that
# coincide or share a coordinate (the diagonal, left out, needs none).


def second_derivative_in_rows(distance):
    (grad,) = torch.autograd.grad(distance(points).pow(2).sum(), points, create_graph=True)
    return torch.autograd.grad(grad.pow(2).sum(), points)[0]


def pdist_by_products(rows):
    first, second = torch.triu_indices(len(rows), len(rows), 1)
    return torch.cdist(rows, rows, compute_mode="use_mm_for_euclid_dist")[first, second]


def pdist_by_differences(rows, p=2.0):
    first, second = torch.triu_indices(len(rows), len(rows), 1)
    return (rows[first] - rows[second]).norm(p=p, dim=-1)


message = message_of(NotImplementedError, lambda: second_derivative_in_rows(torch.pdist))
assert "the derivative for '_pdist_backward' is not implemented" in message
assert torch.allclose(pdist_by_products(points), torch.pdist(points))
for p in (1.0, 2.0, 3.0):
    assert torch.allclose(pdist_by_differences(points, p), torch.pdist(points, p))
for p in (1.5, 2.0, 2.5):  # cdist(x, x) summed counts each pair twice: 4 times this
    by_pairs = second_derivative_to_itself(partial(pdist_by_differences, p=p))
    assert torch.allclose(4 * by_pairs, exact[p])
by_products = second_derivative_in_rows(pdist_by_products)
assert by_products.isfinite().all()
assert torch.allclose(by_products, second_derivative_in_rows(pdist_by_differences))

# %%
# ``the derivative for '_embedding_bag_backward' is not implemented``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``torch.nn.functional.embedding_bag`` and ``nn.EmbeddingBag``,
# which sum, average or take the maximum of rows of a table over each bag of
# indices, compute the table's gradient with a backward that has no
# derivative (in the modes ``"sum"``, ``"mean"`` and ``"max"`` alike). With
# ``per_sample_weights`` requiring grad, double backward in those weights
# stops with "derivative for aten::_embedding_bag_per_sample_weights_backward
# is not implemented". **Fix:** look the rows up with
# ``torch.nn.functional.embedding``, multiply them by the
# ``per_sample_weights`` if any, and add them up per bag with ``index_add``,
# or take their maximum with ``scatter_reduce``. For bags that all have the
# same length, as a matrix of indices, ``F.embedding(indices, table)`` and
# ``.sum(1)``, ``.mean(1)`` or ``.amax(1)`` are enough, for the modes
# ``"sum"``, ``"mean"`` and ``"max"``. Below, a sketch for a 1-D ``indices`` and ``offsets``, without
# ``padding_idx`` or ``include_last_offset``. In mode ``"max"``, where two
# different rows of a bag tie for the maximum, ``scatter_reduce`` shares the
# gradient between them, where ``embedding_bag`` gives it to one.

table = torch.rand(10, 4, dtype=torch.float64, requires_grad=True)
indices = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
offsets = torch.tensor([0, 3, 3])  # three bags: 3 indices, none, 5 indices
weights = torch.rand(8, dtype=torch.float64, requires_grad=True)  # one per index


def embedding_bag_by_lookup(indices, table, offsets, mode="mean", per_sample_weights=None):
    """``embedding_bag`` for 1-D indices and offsets, in mode "sum", "mean" or "max"."""
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode {mode!r}: embedding_bag's modes are sum, mean and max")
    if per_sample_weights is not None and mode != "sum":
        raise ValueError("per_sample_weights go with mode 'sum' only, as in embedding_bag")
    lengths = torch.diff(offsets, append=torch.tensor([len(indices)], device=offsets.device))
    bag = torch.repeat_interleave(torch.arange(len(offsets), device=offsets.device), lengths)
    rows = torch.nn.functional.embedding(indices, table)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(1)
    bags = table.new_zeros(len(offsets), table.shape[1])  # an empty bag: zeros
    if mode == "max":
        return bags.scatter_reduce(
            0, bag.unsqueeze(1).expand_as(rows), rows, "amax", include_self=False
        )
    sums = bags.index_add(0, bag, rows)
    if mode == "sum":
        return sums
    return sums / lengths.clamp(min=1).unsqueeze(1).to(table.dtype)


def second_derivative_in(tensor, bags):
    (grad,) = torch.autograd.grad(bags(tensor).pow(2).sum(), tensor, create_graph=True)
    return torch.autograd.grad(grad.pow(2).sum(), tensor)[0]


def builtin_weighted(w):
    return F.embedding_bag(indices, table, offsets, mode="sum", per_sample_weights=w)


message = message_of(
    NotImplementedError,
    lambda: second_derivative_in(table, lambda t: F.embedding_bag(indices, t, offsets)),
)
assert "the derivative for '_embedding_bag_backward' is not implemented" in message
message = message_of(RuntimeError, lambda: second_derivative_in(weights, builtin_weighted))
assert "derivative for aten::_embedding_bag_per_sample_weights_backward is not" in message
for mode in ("sum", "mean", "max"):
    by_lookup = embedding_bag_by_lookup(indices, table, offsets, mode)
    builtin = F.embedding_bag(indices, table, offsets, mode=mode)
    assert torch.allclose(by_lookup, builtin)
    assert torch.allclose(
        torch.autograd.grad(by_lookup.pow(2).sum(), table)[0],
        torch.autograd.grad(builtin.pow(2).sum(), table)[0],
    )
    assert gradgradcheck(
        partial(embedding_bag_by_lookup, indices, offsets=offsets, mode=mode), (table,)
    )
second = second_derivative_in(table, lambda t: embedding_bag_by_lookup(indices, t, offsets))
assert second.abs().sum() > 0  # not zero: the loss squares the means
weighted = partial(embedding_bag_by_lookup, indices, offsets=offsets, mode="sum")
assert torch.allclose(weighted(table, per_sample_weights=weights), builtin_weighted(weights))
assert gradgradcheck(lambda t, w: weighted(t, per_sample_weights=w), (table, weights))

twins = table.detach()[:1].repeat(2, 1).requires_grad_()  # two rows, equal
for bags, gradient in ((embedding_bag_by_lookup, [0.5, 0.5]), (F.embedding_bag, [1.0, 0.0])):
    maximum = bags(torch.tensor([0, 1]), twins, torch.tensor([0]), mode="max")
    assert torch.autograd.grad(maximum.sum(), twins)[0][:, 0].tolist() == gradient

matrix = torch.tensor([[1, 2, 3], [4, 5, 6]])  # bags of the same length
assert torch.allclose(F.embedding(matrix, table).mean(1), F.embedding_bag(matrix, table))
assert gradgradcheck(lambda t: F.embedding(matrix, t).mean(1), (table,))

# %%
# .. _error-index-forward-ad:
#
# ``Trying to use forward AD with _euclidean_dist that does not support it because it has not been implemented yet``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** :func:`torch.func.hessian` and ``jacfwd`` differentiate in
# forward mode (``hessian`` is ``jacfwd`` of ``jacrev``), which needs a
# forward-mode formula for each operator on the way, and the operators of
# the entries above have none: ``cdist``, on either path (so the first fix
# of its entry fails here), ``pdist``, the CPU flash kernel of attention,
# ``ctc_loss`` and ``embedding_bag`` (below; the message names the operator
# met). An operator that has a forward-mode formula, while its backward
# operator has no formula at all, such as ``hardsigmoid`` of :ref:`the last
# section <error-index-more>`, lets ``jacfwd`` through and stops ``hessian``
# only, with a message worded otherwise: "Trying to use forward AD with
# aten::hardsigmoid_backward that does not support it." (run below).
# **Fix:** for the distances through the matrix products of ``cdist``,
# whose only obstacle is forward mode, reverse mode twice:
# ``torch.func.jacrev(torch.func.jacrev(f))`` or
# :func:`torch.autograd.functional.hessian`, whose default is reverse over
# reverse. For the operators themselves that does not help: reverse over
# reverse is double backward, which stops at their entry's message (run
# below with :func:`torch.autograd.functional.hessian`, for ``pdist`` and the
# default ``cdist``). Their entries' fixes do pass
# :func:`torch.func.hessian`, as the code below checks: the distances by
# differences (``cdist_to_itself`` too, and the smoothed norm in its entry),
# the math backend of attention, CTC by its recursion, and ``embedding_bag``
# by lookup, in each mode and with weights.


def total_distance(a):
    return cdist_by_products(a, centres).sum()


def hessian_of(function, tensor):
    return torch.func.hessian(function)(tensor.detach())


message = message_of(NotImplementedError, partial(hessian_of, total_distance, points))
assert "Trying to use forward AD with _euclidean_dist that does not support it" in message
expected = hessian_of(lambda a: cdist_by_differences()(a, centres).sum(), points)
assert torch.allclose(
    torch.func.jacrev(torch.func.jacrev(total_distance))(points.detach()), expected
)
assert torch.allclose(torch.autograd.functional.hessian(total_distance, points.detach()), expected)
for operator, function in [
    ("_pdist_backward", lambda a: torch.pdist(a).sum()),
    ("_cdist_backward", lambda a: torch.cdist(a, centres).sum()),
]:
    message = message_of(
        NotImplementedError,
        partial(torch.autograd.functional.hessian, function, points.detach()),
    )
    assert f"the derivative for '{operator}' is not implemented" in message

tiny_targets = dict(targets=torch.tensor([[1, 2]]), input_lengths=[4], target_lengths=[2])
builtins = [  # (operator the message names, a function of a tensor, the tensor)
    ("_cdist_forward", lambda a: torch.cdist(a, centres).sum(), points),
    ("_pdist_forward", lambda a: torch.pdist(a).sum(), points),
    (
        "_scaled_dot_product_flash_attention_for_cpu",
        lambda t: F.scaled_dot_product_attention(t, t, t).sum(),
        q[:1, :1],
    ),
    ("_ctc_loss", lambda lp: F.ctc_loss(lp, **tiny_targets), tiny),
    ("_embedding_bag", lambda t: F.embedding_bag(indices, t, offsets).pow(2).sum(), table),
]
for name, function, tensor in builtins:
    message = message_of(NotImplementedError, partial(hessian_of, function, tensor))
    assert f"Trying to use forward AD with {name} that does not support it" in message

assert torch.func.jacfwd(F.hardsigmoid)(points.detach()).isfinite().all()
message = message_of(
    NotImplementedError, partial(hessian_of, lambda a: F.hardsigmoid(a).sum(), points)
)
assert (
    "Trying to use forward AD with aten::hardsigmoid_backward that does not support it" in message
)

fixes = [
    (lambda a: pdist_by_differences(a, 1.5).sum(), points),
    (lambda a: cdist_to_itself(a, 1.5).sum(), points),
    (lambda lp: ctc_loss_by_recursion(lp, **tiny_targets), tiny),
    (lambda t: embedding_bag_by_lookup(indices, t, offsets).pow(2).sum(), table),
    (lambda t: embedding_bag_by_lookup(indices, t, offsets, "sum").pow(2).sum(), table),
    (lambda t: embedding_bag_by_lookup(indices, t, offsets, "max").pow(2).sum(), table),
    (lambda w: weighted(table, per_sample_weights=w).pow(2).sum(), weights),
    (lambda t: F.embedding(matrix, t).mean(1).pow(2).sum(), table),
]
for function, tensor in fixes:
    assert hessian_of(function, tensor).isfinite().all()
with sdpa_kernel(SDPBackend.MATH):
    attention_hessian = hessian_of(
        lambda t: F.scaled_dot_product_attention(t, t, t).sum(), q[:1, :1]
    )
assert attention_hessian.isfinite().all()

# %%
# .. _error-index-gpu:
#
# On a GPU (not run here)
# ~~~~~~~~~~~~~~~~~~~~~~~
#
# This page is built on a CPU, but PyTorch's derivative definitions
# (``tools/autograd/derivatives.yaml`` in its sources, of which an installed
# PyTorch carries a copy in ``torchgen``) name more operators of the GPU,
# and the code below reads them from the PyTorch that built this page:
#
# * cuDNN's recurrent networks (``nn.RNN``, ``nn.LSTM``, ``nn.GRU`` on a CUDA
#   device): every derivative of ``_cudnn_rnn_backward`` is
#   ``not_implemented``. PyTorch's message suggests running the forward pass
#   under ``torch.backends.cudnn.flags(enabled=False)``, so that the network
#   takes a path made of differentiable operations. For ``nn.LSTM`` and
#   ``nn.GRU``, that path goes through fused cells on a CUDA device
#   (``_thnn_fused_lstm_cell`` and ``_thnn_fused_gru_cell``, in PyTorch's
#   ``aten/src/ATen/native/RNN.cpp``). Under ``create_graph=True``, their
#   backward formulas call differentiable versions of themselves
#   (``_thnn_differentiable_lstm_cell_backward`` and its GRU twin), so double
#   backward works; but the cells have no forward-mode formula (no line for
#   ``result``, checked below), so :func:`torch.func.hessian` and ``jacfwd``
#   should still stop there.
# * The CUDA kernels of ``scaled_dot_product_attention`` (flash,
#   memory-efficient, cuDNN), like the CPU one above: their backward
#   operators have no derivative formula. Unlike on the CPU, dropout in
#   training mode does not send attention to the path of ordinary
#   operations there: in PyTorch's sources
#   (``aten/src/ATen/native/transformers/cuda/sdp_utils.cpp``), dropout
#   only steers the choice between fused kernels (the flash kernel declines
#   it for heads wider than 224 on some GPUs, and the memory-efficient one
#   takes over). The math backend is the fix there too, with dropout or
#   without. These kernels do not take float64, in which attention runs on
#   the math path: a ``gradgradcheck`` in float64 on a GPU passes without
#   meeting them, so test double backward through attention in the dtype
#   that training uses.
# * cuDNN's CTC kernel (``_cudnn_ctc_loss``): ``ctc_loss`` takes it only
#   if, among other conditions in PyTorch's sources
#   (``aten/src/ATen/native/cudnn/LossCTC.cpp``), the log-probabilities are
#   float32, the targets int32 and concatenated in 1-D, and the blank 0. Its
#   formula, printed below, passes the incoming gradient and ``result1``, a
#   gradient that the kernel computed in the forward pass, to a helper of
#   PyTorch's autograd (``_cudnn_ctc_loss_backward``, in
#   ``FunctionsManual.cpp``, whose body this page does not show), not to a
#   backward operator, so double backward there need not stop with the
#   message of the CTC entry; what it does was not run here. A
#   ``gradgradcheck`` in float64 never meets this kernel. Check in float32
#   with such inputs (with loose tolerances), or use the recursion, or run
#   the forward pass under ``torch.backends.cudnn.flags(enabled=False)``, on
#   PyTorch's own kernel, whose double backward stops with that message.
#
# The same file confirms what the built-in entries above met: the backward
# operators of the attention kernels and of CTC have no derivative formula of
# their own, and every derivative of ``_cdist_backward`` and of
# ``_pdist_backward`` is ``not_implemented``.

from importlib.resources import files

definitions = (files("torchgen") / "packaged/autograd/derivatives.yaml").read_text()
entries = {}  # operator name -> its formula lines
for block in definitions.split("\n- name: ")[1:]:
    signature, *lines = block.split("\n")
    entries[signature.split("(")[0]] = [
        line.strip() for line in lines if line.strip() and not line.strip().startswith("#")
    ]

print("- name: _cudnn_rnn_backward(...)")
for line in entries["_cudnn_rnn_backward"]:
    print("    " + line)
formulas = [line for line in entries["_cudnn_rnn_backward"] if "non_differentiable" not in line]
assert formulas and all("not_implemented" in line for line in formulas)

backward_of = {}
for forward in (
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention",
    "_scaled_dot_product_flash_attention_for_cpu",
    "_ctc_loss",
):
    formula = next(line for line in entries[forward] if "backward" in line)
    backward_of[forward] = formula.split(": ", 1)[1].split("(")[0].removesuffix("_symint")
for forward, backward in backward_of.items():
    print(f"{forward} -> {backward}: derivative formula of its own: {backward in entries}")
    assert backward not in entries
cudnn_ctc = entries["_cudnn_ctc_loss"]
print("_cudnn_ctc_loss:", cudnn_ctc)
assert cudnn_ctc == ["log_probs: _cudnn_ctc_loss_backward(grad, result0, result1, zero_infinity)"]
for backward in ("_cdist_backward", "_pdist_backward"):
    print(f"{backward}:", entries[backward])
    assert all("not_implemented" in line for line in entries[backward])
for cell in ("_thnn_fused_lstm_cell", "_thnn_fused_gru_cell"):
    formulas_for = [line.split(":")[0] for line in entries[cell]]  # what each line differentiates
    print(f"{cell}: formulas for", formulas_for)
    assert "GradMode::is_enabled() ? _thnn_differentiable_" in " ".join(entries[cell])
    assert not any(names.startswith("result") for names in formulas_for)  # no forward mode

# %%
# .. _error-index-more:
#
# More operators without a second derivative
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# Every operator named as a backward (``backward`` in its name) whose formula
# says ``not_implemented`` for at least one of its inputs, in this build's
# PyTorch: double backward through the operator it belongs to may stop
# there. A name on it is a place to look, not a verdict: the formula may
# concern only an input that needs no gradient in practice (the saved
# statistics of ``native_layer_norm_backward``). A first derivative named
# otherwise escapes the list: ``_standard_gamma_grad``, which the gradient
# of a sample of ``torch.distributions.Gamma`` in its concentration calls,
# has no derivative, and double backward through ``Gamma(...).rsample()`` in
# the concentration stops there (run below). This page has no fix for it:
# that gradient is, up to its sign, the derivative of the gamma
# distribution's CDF in its shape divided by the density, which
# ``_standard_gamma_grad`` approximates with series (in PyTorch's
# ``Distributions.h``), and which PyTorch differentiates nowhere
# (``torch.special.gammainc``, the CDF, stops with "the derivative for
# 'igamma: input' is not implemented", run below). Only the gradient in the
# concentration differentiated in the concentration stops. The gradient in
# the rate is computed by the backward of ``sample / rate``, with no
# ``_standard_gamma_grad`` in it, so it can be differentiated in either
# input (in the concentration, ``_standard_gamma_grad`` is then called, not
# differentiated). The
# gradient in the concentration can be differentiated in the rate alone: the
# second ``torch.autograd.grad`` runs only the nodes on the way to the inputs
# it is given. The two mixed derivatives agree (run below too).

not_implemented = sorted(
    name
    for name, lines in entries.items()
    if "backward" in name and any("not_implemented" in line for line in lines)
)
print(", ".join(not_implemented))
assert {"_cdist_backward", "_pdist_backward", "_embedding_bag_backward"} <= set(not_implemented)

concentration = torch.tensor([2.0, 3.0], dtype=torch.float64, requires_grad=True)
rate = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
sample = torch.distributions.Gamma(concentration, rate).rsample()
in_concentration, in_rate = torch.autograd.grad(
    sample.pow(2).sum(), (concentration, rate), create_graph=True
)
concentration_then_rate = torch.autograd.grad(in_concentration.sum(), rate, retain_graph=True)
rate_then_concentration = torch.autograd.grad(in_rate.sum(), concentration, retain_graph=True)
assert torch.allclose(concentration_then_rate[0], rate_then_concentration[0])
message = message_of(
    NotImplementedError, lambda: torch.autograd.grad(in_concentration.sum(), concentration)
)
assert "the derivative for '_standard_gamma_grad' is not implemented" in message
assert "_standard_gamma_grad" not in not_implemented
second_in_rate = torch.autograd.grad(in_rate.sum(), rate)[0]
assert torch.allclose(second_in_rate, 6 * sample.detach() ** 2 / rate.detach() ** 2)
message = message_of(
    NotImplementedError,
    lambda: torch.autograd.grad(
        torch.special.gammainc(concentration, sample.detach()).sum(), concentration
    ),
)
assert "the derivative for 'igamma: input' is not implemented" in message

# %%
# An operator whose backward has no formula at all, as for attention and CTC
# above, is not on that list. Four more of those stop with "derivative for
# aten::NAME is not implemented". Each is run below with its fix, which
# gives the same values and gradients and can be differentiated twice:
#
# * ``hardsigmoid``, also through ``nn.Hardsigmoid`` (which the
#   squeeze-and-excitation blocks of torchvision's MobileNetV3 use, in its
#   sources): ``F.relu6(x + 3) / 6``, whose gradient is 0 at -3 and 3, as
#   ``hardsigmoid``'s is; that of ``(x / 6 + 0.5).clamp(0, 1)`` is 1/6 there.
#   In float64, ``hardsigmoid``'s own gradient is 1/6 rounded to float32,
#   so the gradients agree to float32's precision only;
# * ``multi_margin_loss``, with its defaults: the hinges
#   ``F.relu(1 - s[y] + s[i])`` of the scores ``s``, for each class ``i``
#   other than the target ``y``, summed over ``i``, divided by the number of
#   classes and averaged over the batch, for scores of shape ``(N, C)``
#   (not a single row of ``C``). Where a hinge is exactly 0, the gradient of
#   ``F.relu`` is 0, as the loss's is; that of ``clamp(min=0)`` is 1;
# * ``multilabel_margin_loss``: the same hinges for each pair of a target
#   class ``y`` and a class ``i`` that is not one, a class listed twice as a
#   target counting twice;
# * ``segment_reduce`` with ``"sum"``: ``index_add`` of each value into its
#   segment.
#
# The scores go through a ``tanh`` first, which stands for the layers before
# the loss: a margin loss is piecewise linear, so its gradient is piecewise
# constant in the scores, its second derivative is 0 almost everywhere, and
# the check that the fix's second derivative is not 0 would mean nothing.

scores = torch.rand(2, 3, dtype=torch.float64, requires_grad=True)
targets = torch.tensor([1, 0])  # one class per row
target_lists = torch.tensor([[1, 1, -1], [0, 2, -1]])  # up to the first -1
lengths = torch.tensor([2, 4])  # segments of the 6 scores


def hardsigmoid_by_relu6(x):
    return F.relu6(x + 3) / 6


def multi_margin_by_hinges(s, y):
    """multi_margin_loss(s, y) with its defaults, for s of shape (N, C) and y of shape (N,)."""
    hinges = F.relu(1 - s.gather(1, y.unsqueeze(1)) + s)
    return hinges.scatter(1, y.unsqueeze(1), 0).sum(1).div(s.shape[1]).mean()


def multilabel_margin_by_hinges(s, y):
    """multilabel_margin_loss(s, y): y lists each row's target classes, up to its first -1."""
    listed = (y >= 0).cumprod(1).unsqueeze(2)
    times = (F.one_hot(y.clamp(min=0), s.shape[1]) * listed).sum(1)  # as a target, per class
    pairs = times.unsqueeze(2) * (times == 0).unsqueeze(1)  # (target y, other class i)
    hinges = F.relu(1 - s.unsqueeze(2) + s.unsqueeze(1))  # 1 - s[y] + s[i]
    return (hinges * pairs).sum((1, 2)).div(s.shape[1]).mean()


def segment_sum_by_index_add(data, lengths):
    segment = torch.repeat_interleave(torch.arange(len(lengths), device=data.device), lengths)
    return data.new_zeros(len(lengths)).index_add(0, segment, data)


no_formula = [  # (its backward operator, a loss of the scores, the same loss by the fix)
    (
        "multi_margin_loss_backward",
        lambda s: F.multi_margin_loss(s, targets),
        lambda s: multi_margin_by_hinges(s, targets),
    ),
    (
        "multilabel_margin_loss_backward",
        lambda s: F.multilabel_margin_loss(s, target_lists),
        lambda s: multilabel_margin_by_hinges(s, target_lists),
    ),
    (
        "_segment_reduce_backward",
        lambda s: torch.segment_reduce(s.flatten(), "sum", lengths=lengths).pow(2).sum(),
        lambda s: segment_sum_by_index_add(s.flatten(), lengths).pow(2).sum(),
    ),
    (
        "hardsigmoid_backward",
        lambda s: torch.nn.Hardsigmoid()(s).pow(2).sum(),
        lambda s: hardsigmoid_by_relu6(s).pow(2).sum(),
    ),
]


def after_tanh(loss):
    return lambda s: loss(s.tanh())


def second_derivative_in_scores(loss):
    (grad,) = torch.autograd.grad(after_tanh(loss)(scores), scores, create_graph=True)
    return torch.autograd.grad(grad.pow(2).sum(), scores)[0]


for backward, loss, fix in no_formula:
    message = message_of(RuntimeError, partial(second_derivative_in_scores, loss))
    assert f"derivative for aten::{backward} is not implemented" in message
    assert torch.allclose(fix(scores), loss(scores))
    assert torch.allclose(
        torch.autograd.grad(fix(scores), scores)[0], torch.autograd.grad(loss(scores), scores)[0]
    )
    assert second_derivative_in_scores(fix).abs().sum() > 0
    assert gradgradcheck(after_tanh(fix), (scores,))
    assert hessian_of(after_tanh(fix), scores).isfinite().all()

kinks = torch.tensor([-3.0, 3.0], dtype=torch.float64, requires_grad=True)
for activation, at_kinks in [
    (F.hardsigmoid, [0.0, 0.0]),
    (hardsigmoid_by_relu6, [0.0, 0.0]),
    (lambda x: (x / 6 + 0.5).clamp(0, 1), [1 / 6, 1 / 6]),
]:
    assert torch.autograd.grad(activation(kinks).sum(), kinks)[0].tolist() == at_kinks
on_the_hinge = torch.tensor([[0.0, 1.0, 0.0]], dtype=torch.float64, requires_grad=True)
for loss, by_hinges, target in [
    (F.multi_margin_loss, multi_margin_by_hinges, torch.tensor([1])),
    (F.multilabel_margin_loss, multilabel_margin_by_hinges, torch.tensor([[1, -1, 0]])),
]:
    builtin_gradient = torch.autograd.grad(loss(on_the_hinge, target), on_the_hinge)[0]
    fix_gradient = torch.autograd.grad(by_hinges(on_the_hinge, target), on_the_hinge)[0]
    assert torch.equal(builtin_gradient, fix_gradient) and builtin_gradient.eq(0).all()
hinge = 1 - on_the_hinge[:, 1:2] + on_the_hinge  # 0 for the two classes other than 1
assert hinge[0, [0, 2]].eq(0).all()
for clipped, slope_at_0 in [(F.relu(hinge), 0.0), (hinge.clamp(min=0), 1.0)]:
    slopes = torch.autograd.grad(clipped[0, [0, 2]].sum(), hinge)[0]
    assert slopes[0, [0, 2]].eq(slope_at_0).all()
middle = torch.tensor([0.5], dtype=torch.float64, requires_grad=True)
slope = torch.autograd.grad(F.hardsigmoid(middle).sum(), middle)[0].item()
assert slope != 1 / 6 and slope == torch.tensor(1 / 6, dtype=torch.float32).item()

# %%
# Next, :ref:`lesson 19 <lesson-error-index-silent>`: a second derivative that
# comes out wrong with no message at all.
