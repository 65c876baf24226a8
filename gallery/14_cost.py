r"""
.. _lesson-cost:

Today: what double backward costs
=================================

A second derivative is not free. This lesson measures, on a small network
with a custom activation, what ``create_graph=True`` adds to a plain
backward, and what four ways of computing a Hessian-vector product cost.

Two counters make the figures the same on every build: the floating-point
operations of the matrix products, counted by
``torch.utils.flop_counter.FlopCounterMode``, stand for time; the memory that
autograd keeps for a later backward, counted by a saved-tensor hook (each
storage once, and a dual tensor's tangent with it), stands for memory.
Wall-clock times would change from one machine, and one run, to the next.
"""

# %%
# The network and the two counters
# --------------------------------
#
# A two-layer network whose parameters are one vector ``theta``, with a tanh
# written as a Function that has a ``jvp`` and a vmap rule, so that every
# method below can run through it (:ref:`lesson-torch-func`).

import warnings

import torch

# sphinx_gallery_thumbnail_path = "_static/thumbs/14_cost.svg"
import torch.autograd.forward_ad as fwAD
from torch.utils.flop_counter import FlopCounterMode


class Tanh(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.tanh(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return grad_out * (1 - y * y)

    @staticmethod
    def jvp(ctx, x_tangent):
        (y,) = ctx.saved_tensors
        return x_tangent * (1 - y * y)


torch.manual_seed(0)
inputs = torch.randn(256, 64, dtype=torch.float64)
targets = torch.randn(256, 1, dtype=torch.float64)
shapes = [(128, 64), (128,), (1, 128)]
sizes = [torch.Size(shape).numel() for shape in shapes]


def loss(theta):
    w1, b1, w2 = (t.view(shape) for t, shape in zip(theta.split(sizes), shapes))
    hidden = Tanh.apply(inputs @ w1.T + b1)
    return ((hidden @ w2.T - targets) ** 2).mean()


def flops(compute):
    with FlopCounterMode(display=False) as counter:
        compute()
    return counter.get_total_flops()


def saved_bytes(compute):
    storages = {}

    def pack(tensor):
        for part in fwAD.unpack_dual(tensor):  # its value, and its tangent if dual
            if part is None:
                continue
            storage = part.untyped_storage()
            try:
                storages[storage.data_ptr()] = storage.nbytes()
            except RuntimeError:  # a zero tangent has no storage: it takes no memory
                pass
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        compute()
    return sum(storages.values())


theta = 0.1 * torch.randn(sum(sizes), dtype=torch.float64)
v = torch.randn_like(theta)
leaf = theta.clone().requires_grad_()

# %%
# create_graph=True costs memory, not operations
# ----------------------------------------------
#
# With ``create_graph=True`` the backward pass runs the same operations, but
# it records them, and every operation it records saves what its own
# derivative needs for the second pass.


def gradient():
    torch.autograd.grad(loss(leaf), leaf)


def gradient_with_graph():
    torch.autograd.grad(loss(leaf), leaf, create_graph=True)


plain_flops, plain_bytes = flops(gradient), saved_bytes(gradient)
graph_flops, graph_bytes = flops(gradient_with_graph), saved_bytes(gradient_with_graph)
print(f"plain backward:      {plain_flops:>10,} FLOPs, {plain_bytes:>9,} bytes saved")
print(f"create_graph=True:   {graph_flops:>10,} FLOPs, {graph_bytes:>9,} bytes saved")
print(f"memory: {graph_bytes / plain_bytes:.1f} x")
assert graph_flops == plain_flops and graph_bytes > 2 * plain_bytes

# %%
# Four Hessian-vector products
# ----------------------------
#
# * **double backward**: a gradient with ``create_graph=True``, then the
#   gradient of :math:`g \cdot v` (:ref:`lesson-second-derivatives`);
# * **forward over reverse**: a gradient computed on a dual tensor
#   (:ref:`lesson-forward-mode`);
# * ``torch.autograd.functional.vhp``, which computes :math:`v^\top H`, the
#   same vector for a symmetric Hessian;
# * :func:`torch.autograd.functional.hvp`, which computes :math:`H v` with a
#   further backward pass on top (PyTorch's documentation recommends ``vhp``
#   when the Hessian is symmetric).

from torch.autograd.functional import hvp, vhp


def double_backward():
    (g,) = torch.autograd.grad(loss(leaf), leaf, create_graph=True)
    return torch.autograd.grad(g @ v, leaf)[0]


def forward_over_reverse():
    with warnings.catch_warnings(), fwAD.dual_level():
        # PyTorch's own deprecation note when forward mode first loads (lesson 08)
        warnings.filterwarnings("ignore", message="`torch.jit.script` is deprecated")
        dual = fwAD.make_dual(theta.clone().requires_grad_(), v)
        (g,) = torch.autograd.grad(loss(dual), dual)
        return fwAD.unpack_dual(g).tangent


methods = {
    "double backward": double_backward,
    "forward over reverse": forward_over_reverse,
    "functional.vhp": lambda: vhp(loss, theta, v)[1],
    "functional.hvp": lambda: hvp(loss, theta, v)[1],
}
reference = double_backward()
cost = {}
print(f"{'method':21} {'FLOPs':>6} {'memory':>7}   (x a plain gradient)")
for name, method in methods.items():
    assert torch.allclose(method(), reference)
    cost[name] = (flops(method) / plain_flops, saved_bytes(method) / plain_bytes)
    print(f"{name:21} {cost[name][0]:>5.1f}x {cost[name][1]:>6.1f}x")

# %%
# All four give the same vector. Double backward and ``vhp`` run the same
# matrix products, about those of two gradients; ``hvp`` pays for its extra
# backward in operations and in memory. Forward over reverse needs no
# ``create_graph=True`` but, carrying a tangent through both passes, does more
# operations and keeps more memory.

assert 1.9 < cost["double backward"][0] < 2.1
assert cost["functional.vhp"][0] == cost["double backward"][0]
assert cost["forward over reverse"][1] > cost["double backward"][1]
assert cost["functional.hvp"][0] > cost["functional.vhp"][0]
assert cost["functional.hvp"][1] > cost["functional.vhp"][1]
assert cost["forward over reverse"][0] > cost["double backward"][0]

# %%
# Summary
# -------
#
# * ``create_graph=True`` runs the same operations as a plain backward and
#   keeps about twice the memory, until the second pass is done.
# * A Hessian-vector product by double backward or ``vhp`` runs the
#   operations of about two gradients and keeps the memory of
#   ``create_graph=True``; ``functional.hvp`` costs more of both.
# * Measure with counters that do not depend on the machine: operations with
#   ``FlopCounterMode``, saved memory with ``saved_tensors_hooks``.
#
# Next, :ref:`lesson-error-index`: every error message these lessons met, with
# its cause and its fix.
