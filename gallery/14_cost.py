r"""
.. _lesson-cost:

Today: what double backward costs
=================================

A second derivative is not free. This lesson measures what
``create_graph=True`` adds to a plain backward, and what four ways of
computing the Hessian-vector product of :ref:`lesson 08 <lesson-forward-mode>`
cost. The figures are those of one small network with a custom activation,
run in eager mode; each one is explained by what runs, and none is a rule for
every model.

Counters make the figures the same on every build of this page, where
wall-clock times would change from one machine, and one run, to the next.
They are not a substitute for measuring your own model: time it on your
hardware, and measure its peak memory. The counters:

* **operations**: each operation that the dispatcher passes on below
  autograd, after the decompositions, counted by name: ATen operations, and in
  forward mode a few ``prims`` operations that its decompositions use. A ``@``
  becomes ``aten.mm`` for two matrices and for a vector times a matrix,
  ``aten.mv`` for a matrix times a vector, ``aten.dot`` for two vectors. What
  a kernel calls inside itself is not seen;
* **FLOPs**: ``torch.utils.flop_counter.FlopCounterMode``, which counts only
  the operations it has a formula for: products of matrices and of batches of
  matrices (``mm``, ``addmm``, ``bmm``, ``baddbmm``), convolutions, and some
  attention kernels. It counts no ``dot`` or ``mv``, and not the fused kernel
  of ``scaled_dot_product_attention`` on CPU;
* **memory**: the storage that autograd saves for a backward pass, seen by a
  saved-tensor hook (each storage once, a dual tensor's tangent with it),
  leaving out the storages that existed before the computation (the data, the
  parameters, the vector :math:`v`), which the reader pays for anyway. It adds
  up everything saved during the computation; it is not a peak. It sees only
  what autograd saves (by ``save_for_backward`` and by built-in operations),
  not tensors kept as attributes of ``ctx``
  (:ref:`lesson 04's mistake <lesson-ctx-mistake>`).
"""

# %%
# The network and the counters
# ----------------------------
#
# A two-layer network whose parameters are one vector ``theta``, with a tanh
# written as a Function that has a ``jvp``, so that forward mode can run
# through it (:ref:`lesson 08 <lesson-forward-mode>`).

import functools
import warnings
from collections import Counter

import torch

# sphinx_gallery_thumbnail_path = "_static/thumbs/14_cost.svg"
import torch.autograd.forward_ad as fwAD
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves
from torch.utils.flop_counter import FlopCounterMode


class Tanh(torch.autograd.Function):
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


# %%
# The operations and the storages come from a
# ``torch.utils._python_dispatch.TorchDispatchMode``, ``Trace``. It also notes
# the matrix products one of whose operands is all zeros: they come back at
# the end.


def storage_of(tensor):
    try:
        return tensor.untyped_storage().data_ptr()
    except RuntimeError:  # a tangent known to be zero has no storage
        return None


class Trace(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.operations = Counter()
        self.new_storages = set()
        self.zero_products = []  # FLOPs of each matrix product by an all-zero operand

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.operations[str(func)] += 1
        given = {storage_of(t) for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)}
        made = {storage_of(t) for t in tree_leaves(out) if isinstance(t, torch.Tensor)}
        self.new_storages |= made - given  # a view shares the storage it was given
        if func is torch.ops.aten.mm.default and not all(a.any() for a in args):
            (m, k), (_, n) = args[0].shape, args[1].shape
            self.zero_products.append(2 * m * k * n)
        return out


def measure(compute):
    """Run ``compute`` once; return its FLOPs, its trace and the bytes it saved."""
    saved = {}  # holding each saved part keeps its address from being reused

    def pack(tensor):
        for part in fwAD.unpack_dual(tensor):  # its value, and its tangent if dual
            if part is not None and storage_of(part) is not None:
                saved[storage_of(part)] = part
        return tensor

    with (
        FlopCounterMode(display=False) as counter,
        Trace() as trace,
        torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor),
    ):
        compute()
    new_bytes = sum(
        part.untyped_storage().nbytes()
        for storage, part in saved.items()
        if storage in trace.new_storages
    )
    return counter.get_total_flops(), trace, new_bytes


theta = 0.1 * torch.randn(sum(sizes), dtype=torch.float64)
v = torch.randn_like(theta)
leaf = theta.clone().requires_grad_()

# %%
# The memory counter's blind spot: the same tanh with its derivative kept on
# ``ctx`` keeps a tensor of the same size alive, and the counter sees none of
# it.


class TanhOnCtx(Tanh):
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.slope = 1 - output * output  # lesson 04's mistake, unseen by the hook

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * ctx.slope

    @staticmethod
    def jvp(ctx, x_tangent):  # Tanh's jvp reads saved tensors, and there are none
        return x_tangent * ctx.slope


probe = inputs.clone().requires_grad_()
on_ctx = measure(lambda: torch.autograd.grad(TanhOnCtx.apply(probe).sum(), probe))[2]
saved_tanh = measure(lambda: torch.autograd.grad(Tanh.apply(probe).sum(), probe))[2]
print(f"bytes seen: output saved {saved_tanh:,}, slope on ctx {on_ctx:,}")
assert on_ctx == 0 and saved_tanh == probe.nbytes
assert TanhOnCtx.apply(probe).grad_fn.slope.nbytes == probe.nbytes  # kept all the same
# In forward mode too, TanhOnCtx gives the same tangent as Tanh.
# Forward mode first loads here: PyTorch's own deprecation note (lesson 08).
with warnings.catch_warnings(), fwAD.dual_level():
    warnings.filterwarnings("ignore", message="`torch.jit.script` is (deprecated|not supported)")
    tangents = [
        fwAD.unpack_dual(tanh.apply(fwAD.make_dual(inputs, inputs))).tangent
        for tanh in (Tanh, TanhOnCtx)
    ]
assert torch.allclose(*tangents)

# %%
# What create_graph=True adds
# ---------------------------
#
# With ``create_graph=True`` the backward pass records the operations it
# runs, and every operation it records saves what its own derivative needs
# for the second pass. On this network it runs no further operation: the
# trace finds the same operations, every one of them, not only the matrix
# products that the FLOPs count. What it adds is the recording itself, a node
# for each backward operation that is differentiable in a tensor requiring
# grad (time that no counter here sees, and that matters most when tensors are
# small), and what those nodes save. The sum of saved bytes cannot show one more cost: the
# forward pass's saved tensors stay alive after the backward pass, because
# ``retain_graph`` defaults to ``create_graph``
# (:ref:`lesson 02 <lesson-saving-outputs>`); a plain backward frees them as
# it goes. The second pass needs them here: the recorded backward uses the
# forward pass's outputs (tanh's among them), so the second pass goes back
# through the forward pass's nodes and reads what they saved. With
# ``create_graph=True, retain_graph=False`` it fails.


def gradient():
    torch.autograd.grad(loss(leaf), leaf)


def gradient_with_graph():
    torch.autograd.grad(loss(leaf), leaf, create_graph=True)


plain_flops, plain_trace, plain_bytes = measure(gradient)
graph_flops, graph_trace, graph_bytes = measure(gradient_with_graph)
print(f"plain backward:    {plain_flops:>10,} FLOPs, {plain_bytes:>9,} bytes saved")
print(f"create_graph=True: {graph_flops:>10,} FLOPs, {graph_bytes:>9,} bytes saved")
print("same operations:", graph_trace.operations == plain_trace.operations)
print(f"memory: {graph_bytes / plain_bytes:.1f} x")
assert graph_trace.operations == plain_trace.operations and graph_flops == plain_flops
assert graph_bytes > plain_bytes
assert "aten.mm.default" in plain_trace.operations  # the @ of loss, decomposed
assert not any("matmul" in name for name in plain_trace.operations)


def saved_after_backward(**kwargs):
    out = Tanh.apply(leaf[:4] * 1.0)
    torch.autograd.grad(out.sum(), leaf, **kwargs)
    try:
        return out.grad_fn.saved_tensors is not None
    except RuntimeError as error:  # freed: autograd says so when they are read
        assert "backward through the graph a second time" in str(error)
        return False


print(
    "saved tensors alive after backward: plain",
    saved_after_backward(),
    "| create_graph=True",
    saved_after_backward(create_graph=True),
    "| and retain_graph=False",
    saved_after_backward(create_graph=True, retain_graph=False),
)
assert not saved_after_backward() and saved_after_backward(create_graph=True)
assert not saved_after_backward(create_graph=True, retain_graph=False)

(g,) = torch.autograd.grad(loss(leaf), leaf, create_graph=True, retain_graph=False)
try:
    torch.autograd.grad(g @ v, leaf)
    message = ""
except RuntimeError as error:
    message = str(error)
print("second pass after retain_graph=False:", message.split(" (")[0])
assert "backward through the graph a second time" in message

# %%
# The operations are the same here because every backward formula on this
# network is the same with grad mode on. Not every one is: a few built-in
# operators switch to a backward made of differentiable operations when grad
# mode is on, as it is under ``create_graph=True``. SiLU is one:

x = torch.randn(5, requires_grad=True)


def silu_gradient(create_graph):
    torch.autograd.grad(F.silu(x).sum(), x, create_graph=create_graph)


silu_traces = []
for create_graph in (False, True):
    _, trace, _ = measure(functools.partial(silu_gradient, create_graph))
    silu_traces.append(trace.operations)
    print(f"create_graph={create_graph}:", ", ".join(sorted(trace.operations)))
assert silu_traces[0] != silu_traces[1]
assert "aten.silu_backward.default" in silu_traces[0] - silu_traces[1]

# %%
# The memory counter cannot look inside the reverse-mode transforms of
# :mod:`torch.func`. ``grad``, ``grad_and_value``, ``vjp``, ``jacrev``,
# ``hessian`` and any composition that includes one of them (``vmap`` of
# ``grad``) refuse to run under saved-tensor hooks, and refuse hooks set
# inside them. ``jvp``, ``vmap`` and ``jacfwd`` do run under them. What
# usually sets such hooks, and the fixes, are in the entry for this message in
# :ref:`lesson 17 <lesson-error-index-ops>`.


def tanh_sum(t):
    return torch.tanh(t).sum()


def hooks_inside(t):
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        return tanh_sum(t)


func = torch.func
refusals = {
    "grad": lambda: measure(lambda: func.grad(tanh_sum)(v)),
    "grad_and_value": lambda: measure(lambda: func.grad_and_value(tanh_sum)(v)),
    "vjp": lambda: measure(lambda: func.vjp(tanh_sum, v)),
    "jacrev": lambda: measure(lambda: func.jacrev(torch.tanh)(v[:4])),
    "hessian": lambda: measure(lambda: func.hessian(tanh_sum)(v[:4])),
    "vmap(grad)": lambda: measure(lambda: func.vmap(func.grad(torch.tanh))(v)),
    "hooks inside grad": lambda: func.grad(hooks_inside)(v),
}
for name, attempt in refusals.items():
    try:
        attempt()
        message = ""
    except RuntimeError as error:
        message = str(error)
    assert "don't yet support saved tensor hooks" in message, name
print("refused:", ", ".join(refusals))
print("RuntimeError:", message)
with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
    func.jvp(torch.tanh, (theta,), (v,))  # these three run
    func.vmap(torch.tanh)(theta)
    func.jacfwd(torch.tanh)(theta[:4])

# %%
# Four Hessian-vector products
# ----------------------------
#
# * **double backward**: a gradient with ``create_graph=True``, then the
#   gradient of :math:`g \cdot v`;
# * **forward over reverse**: a gradient computed on a dual tensor, as in
#   :ref:`lesson 08 <lesson-forward-mode>`;
# * ``torch.autograd.functional.vhp``, which computes :math:`v^\top H`, the
#   same vector for a symmetric Hessian;
# * :func:`torch.autograd.functional.hvp`, which computes :math:`H v` in
#   three passes: the gradient; a backward of it on a vector of zeros,
#   recorded; then a backward through that recording, taken with :math:`v`
#   (PyTorch's documentation recommends ``vhp`` when the Hessian is
#   symmetric).

from torch.autograd.functional import hvp, vhp


def double_backward():
    (g,) = torch.autograd.grad(loss(leaf), leaf, create_graph=True)
    return torch.autograd.grad(g @ v, leaf)[0]


def forward_over_reverse():
    with fwAD.dual_level():
        dual = fwAD.make_dual(leaf, v)
        (g,) = torch.autograd.grad(loss(dual), dual)
        return fwAD.unpack_dual(g).tangent


methods = {
    "double backward": double_backward,
    "forward over reverse": forward_over_reverse,
    "functional.vhp": lambda: vhp(loss, theta, v)[1],
    "functional.hvp": lambda: hvp(loss, theta, v)[1],
}
reference = double_backward()
flops, saved, traces = {}, {}, {}
print(f"{'method':21} {'FLOPs':>6} {'memory':>7}   (x a plain gradient)")
for name, method in methods.items():
    assert torch.allclose(method(), reference)
    flops[name], traces[name], saved[name] = measure(method)
    print(f"{name:21} {flops[name] / plain_flops:>5.1f}x {saved[name] / plain_bytes:>6.1f}x")

# %%
# All four give the same vector. On this network, double backward and ``vhp``
# count the same FLOPs of matrix products, about those of two gradients, and
# save the same memory. The one product they do not share is double
# backward's dot ``g @ v`` (:math:`2 \times 8448` FLOPs), which the FLOP
# counter does not see.

assert 1.9 < flops["double backward"] / plain_flops < 2.1
assert flops["functional.vhp"] == flops["double backward"]
assert saved["functional.vhp"] == saved["double backward"]
assert traces["double backward"].operations["aten.dot.default"] == 1 and v.numel() == 8448
assert "aten.dot.default" not in traces["functional.vhp"].operations
with FlopCounterMode(display=False) as counter:
    v @ v
assert counter.get_total_flops() == 0  # a dot counts no FLOPs
# What ``@`` becomes, as the list of counters at the top says.
square = torch.ones(3, 3, dtype=torch.float64)
for product, name in [
    (lambda: square @ square, "aten.mm.default"),
    (lambda: v[:3] @ square, "aten.mm.default"),  # vector times matrix
    (lambda: square @ v[:3], "aten.mv.default"),
    (lambda: v[:3] @ v[:3], "aten.dot.default"),
]:
    with Trace() as products:
        product()
    assert products.operations[name] == 1
# Forward mode alone adds prims operations to the counted names.
with_prims = [m for m, t in traces.items() if any(o.startswith("prims.") for o in t.operations)]
assert with_prims == ["forward over reverse"]

# %%
# ``hvp``'s middle pass is the extra one, and ``hvp`` pays for it in FLOPs
# and in memory: without it, ``hvp`` counts the FLOPs of ``vhp`` and saves as
# much. PyTorch's double-backward trick gets :math:`H v` from two
# vector-Jacobian products, this pass and the last. This one is taken with a
# vector of zeros, so every matrix product in it has an all-zero operand.
# Below, it runs alone, as ``hvp`` runs it.

zeros = traces["functional.hvp"].zero_products
without_zeros = flops["functional.hvp"] - sum(zeros)
print(
    f"functional.hvp: {len(zeros)} products by zeros; without them, "
    f"{without_zeros / plain_flops:.1f}x"
)
assert flops["functional.hvp"] > flops["functional.vhp"]
assert saved["functional.hvp"] > saved["functional.vhp"]
assert zeros and without_zeros == flops["double backward"]

(jacobian,) = torch.autograd.grad(loss(leaf), leaf, create_graph=True)


def middle_pass():
    zero = torch.zeros_like(leaf, requires_grad=True)
    torch.autograd.grad(jacobian, leaf, zero, create_graph=True)


middle_flops, middle, middle_bytes = measure(middle_pass)
assert middle_flops == flops["functional.hvp"] - flops["functional.vhp"]
assert middle_bytes == saved["functional.hvp"] - saved["functional.vhp"]
assert sum(middle.zero_products) == middle_flops  # every product, by zeros

# %%
# Forward over reverse counts more FLOPs, and all of the difference is work on
# zeros. The data ``inputs`` has no tangent, but in eager mode the
# forward-mode formula of a matrix product, :math:`\dot{A} B + A \dot{B}`,
# fills a missing tangent with zeros and multiplies them. Here that happens
# twice: in ``inputs @ w1.T`` and in the gradient of ``w1``, which multiplies
# by ``inputs``. Without those two products, forward over reverse counts
# exactly the FLOPs counted for double backward.

zeros = traces["forward over reverse"].zero_products
without_zeros = flops["forward over reverse"] - sum(zeros)
print(
    f"forward over reverse: {len(zeros)} products by zeros; without them, "
    f"{without_zeros / plain_flops:.1f}x"
)
assert flops["forward over reverse"] > flops["double backward"]
assert len(zeros) == 2 and not traces["double backward"].zero_products
assert without_zeros == flops["double backward"]

# %%
# It also saves more memory here. With each activation it saves, it saves the
# tangent too; and autograd records the forward pass's tangent computations as
# well (``Tanh.jvp`` among them), because they use tensors that require grad.

assert saved["forward over reverse"] > saved["double backward"]

# %%
# Summary
# -------
#
# * With ``create_graph=True`` the graph also keeps what the recorded
#   backward operations save, and the forward pass's saved tensors, until the
#   second pass is done. On this network
#   it runs the same operations as a plain backward; an operator such as SiLU
#   switches to a backward made of more operations.
# * On this network, a Hessian-vector product by double backward or ``vhp``
#   costs the matrix products of about two gradients. Forward over reverse
#   and ``functional.hvp``, in eager mode, also multiply zeros, and save more:
#   ``functional.hvp`` what its middle pass records, forward over reverse
#   tangents and its tangent computations.
# * Counters make this page the same on every build; for your own model,
#   time it on your hardware and measure its peak memory. Know what each
#   counter sees: ``FlopCounterMode`` only the operations it has formulas
#   for (no ``dot`` or ``mv``), ``saved_tensors_hooks`` neither tensors kept
#   on ``ctx`` nor the inside of ``torch.func``'s reverse-mode transforms.
#
# Next, :ref:`the error index <lesson-error-index>`: the error messages these
# lessons met, and others that readers often meet, each with its cause and
# its fix.
