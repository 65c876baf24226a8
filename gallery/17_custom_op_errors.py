r"""
.. _lesson-error-index-ops:

Error index: custom operators, torch.func and vmap
==================================================

The messages a reader meets while writing a custom operator with
:func:`torch.library.custom_op` (its registrations, and what
:func:`~torch.library.opcheck` finds), and while running a Function or an
operator under the transforms of :mod:`torch.func` and ``vmap``; each with
its cause, its fix, and the lesson that explains it.

The messages met while computing second derivatives and checking them are
in :ref:`lesson 15 <lesson-error-index>`; those of a Function's own
``backward``, ``ctx``, changes in place and forward mode in :ref:`lesson 16
<lesson-error-index-function>`; those of PyTorch's own operators that have
no second derivative in :ref:`lesson 18 <lesson-builtin-operators>`; and a
second derivative that is wrong with no message in :ref:`lesson 19
<lesson-error-index-silent>`. As in
lesson 15, every message that heads an entry was printed when the page was
built: paste one into the search box to land on its entry.

.. contents:: On this page
   :local:
"""

# %%
# Each example runs through the helper of :ref:`lesson 15
# <lesson-error-index>`, defined again here so that this page runs on its own,
# with lesson 16's ``Cube``; here the helper also leaves out the file path
# that a custom operator's messages include, and shortens the list of valid
# types that one of them spells out. The entries on custom operators use
# three helpers defined below: ``numpy_square``, a custom operator computed
# by NumPy, with no gradient yet; ``keep_input``, a ``setup_context`` that
# saves the inputs; and ``define``, which makes a function the custom
# operator ``dbw_errors::<its name>``.

import functools
import re
import traceback
from pathlib import Path

import numpy as np
import torch
import torch.autograd.forward_ad as fwAD

# sphinx_gallery_thumbnail_path = "_static/thumbs/17_custom_op_errors.svg"
from torch.autograd import Function


def message_of(expected, action):
    """Run ``action``; print and return the message of the expected exception."""
    try:
        action()
    except expected as error:
        text = f"{type(error).__name__}: {error}".split("\n\n")[0]
        text = re.sub(r" \(with implementation in <module .*?>\)", "", text)
        print(
            re.sub(
                r"The valid types are: dict_keys\(\[.*?\]\)\.", "The valid types are: [...].", text
            )
        )
        return str(error)
    raise AssertionError(f"no {expected.__name__} was raised")


torch.manual_seed(0)
x = (torch.rand(3, dtype=torch.float64) + 0.5).requires_grad_()


class Cube(Function):
    """A correct cube, written with ``ctx`` in ``forward``."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * grad_out


@torch.library.custom_op("dbw_errors::numpy_square", mutates_args=())
def numpy_square(t: torch.Tensor) -> torch.Tensor:
    return torch.as_tensor(np.square(t.numpy(force=True)), device=t.device)


@numpy_square.register_fake
def _(t):
    return torch.empty_like(t)


def keep_input(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def define(function, mutates_args=()):
    """``function`` as the custom operator ``dbw_errors::<its name>``."""
    name = f"dbw_errors::{function.__name__}"
    return torch.library.custom_op(name, function, mutates_args=mutates_args)


# %%
# Writing a custom operator
# -------------------------
#
# ``infer_schema(func): Parameter t must have a type annotation``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# The message names the parameter, and ends with the function's signature.
# **Cause:** :func:`torch.library.custom_op` builds the operator's schema from
# the function's type annotations, and a parameter has none; without a
# return annotation, the message says "No return type annotation was
# provided" (both below). **Fix:** annotate every parameter and the return,
# such as ``t: torch.Tensor`` and ``-> torch.Tensor``.
# :ref:`Lesson 12 <lesson-custom-ops>`


def doubled(t):  # wrong: no annotations
    return 2 * t


def doubled_untyped_return(t: torch.Tensor):  # wrong: no return annotation
    return 2 * t


def doubled_typed(t: torch.Tensor) -> torch.Tensor:
    return 2 * t


message = message_of(ValueError, lambda: define(doubled))
assert message.startswith("infer_schema(func): Parameter t must have a type annotation")
message = message_of(ValueError, lambda: define(doubled_untyped_return))
assert message.startswith("infer_schema(func): No return type annotation was provided")
assert torch.equal(define(doubled_typed)(x.detach()), 2 * x.detach())

# %%
# ``infer_schema(func): Parameter dims has unsupported type <class 'list'>``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# The message names the parameter and its annotation, and lists the types a
# schema accepts. **Cause:** an annotation that a schema cannot express:
# below, ``list`` without the type of its elements. **Fix:** one of the types
# the message lists, here ``list[int]``. :ref:`Lesson 12 <lesson-custom-ops>`


def summed(t: torch.Tensor, dims: list) -> torch.Tensor:  # wrong: a list of what?
    return t.sum(dims)


def summed_over(t: torch.Tensor, dims: list[int]) -> torch.Tensor:
    return t.sum(dims)


message = message_of(ValueError, lambda: define(summed))
assert message.startswith("infer_schema(func): Parameter dims has unsupported type <class 'list'>")
rows = torch.arange(6.0).view(2, 3)
assert torch.equal(define(summed_over)(rows, [1]), rows.sum(1))

# %%
# ``not enough values to unpack (expected 2, got 1)``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** the name given to :func:`torch.library.custom_op` has no
# namespace. PyTorch splits the name at ``::`` into a namespace and the
# operator's name, and found no ``::``: below, in ``"square"``, and in
# ``"dbw_errors.doubled"``, which has a dot in its place (a single colon
# fails the same way).
# **Fix:** a name of the form ``"namespace::name"``, as ``define`` writes
# ``"dbw_errors::<its name>"``.
# (The same words, with these counts or others, also come from unpacking
# ``ctx.saved_tensors`` into more names than were saved: :ref:`lesson 16
# <lesson-error-index-function>`. If the traceback ends in PyTorch's
# ``torch/_library``, it is the name; if in your ``backward`` or ``jvp``, it
# is ``ctx.saved_tensors``.)
# :ref:`Lesson 12 <lesson-custom-ops>`

message = message_of(
    ValueError, lambda: torch.library.custom_op("square", doubled_typed, mutates_args=())
)  # wrong: no namespace
assert message == "not enough values to unpack (expected 2, got 1)"
dotted = "dbw_errors.doubled"  # wrong: a dot, not ::
message = message_of(
    ValueError, lambda: torch.library.custom_op(dotted, doubled_typed, mutates_args=())
)
assert message == "not enough values to unpack (expected 2, got 1)"
try:
    torch.library.custom_op("square", doubled_typed, mutates_args=())
except ValueError as error:
    last_frame = traceback.extract_tb(error.__traceback__)[-1]
assert "_library" in Path(last_frame.filename).parts  # the traceback ends in torch/_library
doubled_op = torch.library.custom_op("dbw_errors::doubled", doubled_typed, mutates_args=())
assert torch.equal(doubled_op(x.detach()), 2 * x.detach())

# %%
# ``infer_schema(func): {'x'} in mutates_args were not found in the custom op's signature``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# The message names what it did not find, and ends with the function's
# signature. **Cause:** ``mutates_args`` names a parameter that the function
# does not have: a typo, or a parameter renamed since. **Fix:** the
# parameter's name, as the signature spells it. A single name written
# without its comma, ``("t")``, is a string, not a tuple, and gives the
# message "mutates_args must either be a sequence of the names of the
# arguments that are mutated or the string 'unknown'" (both below): write
# ``("t",)``. Leaving ``mutates_args`` out gives ``custom_op() missing 1
# required keyword-only argument: 'mutates_args'`` (below): pass
# ``mutates_args=()`` for a function that changes no input.
# :ref:`Lesson 12 <lesson-custom-ops>`


def add_half(t: torch.Tensor) -> None:
    t.add_(0.5)


message = message_of(ValueError, lambda: define(add_half, mutates_args=("x",)))
assert message.startswith("infer_schema(func): {'x'} in mutates_args were not found")
message = message_of(ValueError, lambda: define(add_half, mutates_args=("t")))  # a string
assert message.startswith("mutates_args must either be a sequence of the names")
message = message_of(TypeError, lambda: torch.library.custom_op("dbw_errors::f", add_half))
assert message == "custom_op() missing 1 required keyword-only argument: 'mutates_args'"
shifted = x.detach().clone()
define(add_half, mutates_args=("t",))(shifted)
assert torch.equal(shifted, x.detach() + 0.5)

# %%
# ``...() got an unexpected keyword argument 'output'``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# The message begins with the name of your function, and names a parameter
# it lacks: below, ``save_x() got an unexpected keyword argument 'output'``,
# for a parameter named ``outputs`` (``'ctx'`` or ``'inputs'`` if those are
# renamed). **Cause:** the ``setup_context`` given to
# :func:`~torch.library.register_autograd` renames its parameters; PyTorch
# passes them by keyword, as ``ctx``, ``inputs`` and ``output``. It fails at
# the first call, with grad mode on, whose input requires grad, not at
# registration. **Fix:** name them ``ctx, inputs, output``.
# :ref:`Lesson 12 <lesson-custom-ops>`


@torch.library.custom_op("dbw_errors::square", mutates_args=())
def square(t: torch.Tensor) -> torch.Tensor:
    return t**2


def save_x(ctx, inputs, outputs):  # wrong: PyTorch passes output=
    ctx.save_for_backward(*inputs)


square.register_autograd(lambda ctx, g: 2 * ctx.saved_tensors[0] * g, setup_context=save_x)
with torch.no_grad():
    assert torch.equal(square(x), x.detach() ** 2)  # no error yet: grad mode is off
message = message_of(TypeError, lambda: square(x))
assert message == "save_x() got an unexpected keyword argument 'output'"
square.register_autograd(lambda ctx, g: 2 * ctx.saved_tensors[0] * g, setup_context=keep_input)
assert torch.allclose(torch.autograd.grad(square(x).sum(), x)[0], 2 * x)

# %%
# ``GeneratedBackwardFor_..._defaultBackward returned an incorrect number of gradients``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# The message names the operator, and counts one gradient more than the
# operator has inputs and one more than your ``backward`` returned: PyTorch
# adds an input of its own, and a ``None`` for it. A list counts as one
# value. **Cause:** as for a Function (:ref:`lesson 16
# <lesson-error-index-function>`), the ``backward`` given to
# :func:`~torch.library.register_autograd` must return a tuple of one value
# per input of the operator: below, it returns one tensor for an operator of
# two inputs, then a list of two, and the message says "expected 3, got 2"
# both times. For an operator of one input, a list gives the message
# "expected Variable or None (got list)" of :ref:`lesson 16
# <lesson-error-index-function>` instead (below). **Fix:** return a tuple,
# with ``None`` for the inputs that are not tensors or need no gradient.
# :ref:`Lesson 12 <lesson-custom-ops>`


@torch.library.custom_op("dbw_errors::scale", mutates_args=())
def scale(t: torch.Tensor, factor: float) -> torch.Tensor:
    return factor * t


def keep_factor(ctx, inputs, output):
    ctx.factor = inputs[1]


scale.register_autograd(lambda ctx, g: ctx.factor * g, setup_context=keep_factor)  # wrong
message = message_of(RuntimeError, lambda: scale(x, 2.0).sum().backward())
assert "returned an incorrect number of gradients (expected 3, got 2)" in message
scale.register_autograd(lambda ctx, g: [ctx.factor * g, None], setup_context=keep_factor)  # wrong
message = message_of(RuntimeError, lambda: scale(x, 2.0).sum().backward())
assert "returned an incorrect number of gradients (expected 3, got 2)" in message
square.register_autograd(
    lambda ctx, g: [2 * ctx.saved_tensors[0] * g],
    setup_context=keep_input,  # wrong: a list
)
message = message_of(RuntimeError, lambda: square(x).sum().backward())
assert message == "expected Variable or None (got list)"
square.register_autograd(lambda ctx, g: 2 * ctx.saved_tensors[0] * g, setup_context=keep_input)
scale.register_autograd(lambda ctx, g: (ctx.factor * g, None), setup_context=keep_factor)
assert torch.equal(torch.autograd.grad(scale(x, 2.0).sum(), x)[0], torch.full_like(x, 2.0))

# %%
# ``Trying to backward through ... but no autograd formula was registered``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# The message names the operator. **Cause:** a backward pass reached a
# :func:`torch.library.custom_op` that has no
# :func:`~torch.library.register_autograd`. In a first pass, it is one that
# the forward called; in a second pass, as in the second derivatives of
# :ref:`lesson 15 <lesson-error-index>`, it can be one that a registered
# backward calls. Below, ``numpy_square`` both ways: called by the forward,
# then by the backward of ``cube_by_square``. **Fix:** register a gradient
# for that operator. :ref:`Lesson 12 <lesson-custom-ops>`

message = message_of(RuntimeError, lambda: numpy_square(x).sum().backward())
assert "dbw_errors.numpy_square.default but no autograd formula was registered" in message


@torch.library.custom_op("dbw_errors::cube_by_square", mutates_args=())
def cube_by_square(t: torch.Tensor) -> torch.Tensor:
    return t**3


cube_by_square.register_autograd(
    lambda ctx, g: 3 * numpy_square(ctx.saved_tensors[0]) * g, setup_context=keep_input
)


def second_derivative(op):
    """The second derivative of the sum of ``op(x)``, by two backward passes."""
    (grad,) = torch.autograd.grad(op(x).sum(), x, create_graph=True)
    return torch.autograd.grad(grad.sum(), x)[0]


message = message_of(RuntimeError, lambda: second_derivative(cube_by_square))
assert "dbw_errors.numpy_square.default but no autograd formula was registered" in message
numpy_square.register_autograd(
    lambda ctx, g: 2 * ctx.saved_tensors[0] * g, setup_context=keep_input
)
assert torch.allclose(torch.autograd.grad(numpy_square(x).sum(), x)[0], 2 * x)
assert torch.allclose(second_derivative(cube_by_square), 6 * x)

# %%
# ``The output of this custom operator (1) must not also be an input to this custom operator``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# The message begins with the operator's name. **Cause:** a
# :func:`torch.library.custom_op` returned one of its inputs, or a view of one:
# a shortcut such as ``t``, ``t.detach()``, or ``t.contiguous()`` of a ``t``
# that is contiguous (below, ``t`` and ``t.detach()``), or a view such as
# ``reshape`` or indexing makes. **Fix:** return a new tensor, such as a
# clone, as the message says. :ref:`Lesson 12 <lesson-custom-ops>`


@torch.library.custom_op("dbw_errors::power", mutates_args=())
def power(t: torch.Tensor, n: int) -> torch.Tensor:
    return t if n == 1 else t**n  # wrong: t itself when n == 1


@torch.library.custom_op("dbw_errors::power_fixed", mutates_args=())
def power_fixed(t: torch.Tensor, n: int) -> torch.Tensor:
    return t.clone() if n == 1 else t**n  # a new tensor


message = message_of(RuntimeError, lambda: power(x.detach(), 1))
assert "(1) must not also be an input to this custom operator" in message


def detached(t: torch.Tensor) -> torch.Tensor:
    return t.detach()  # wrong: shares t's memory


message = message_of(RuntimeError, lambda: define(detached)(x.detach()))
assert "(1) must not also be an input to this custom operator" in message
assert torch.equal(power_fixed(x.detach(), 1), x.detach())

# %%
# ``opcheck(op, ...): test_faketensor failed``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** the custom operator has no fake implementation (the text after
# the prefix then says "There was no fake impl registered"), or its fake
# implementation disagrees with the real one about the output's shape, dtype
# or device (both below); the same prefix also covers other faults of the
# fake implementation, and the text after it says which. **Fix:**
# :func:`~torch.library.register_fake`, returning what the operator returns.
# :ref:`Lesson 12 <lesson-custom-ops>`


def opcheck_error(op):
    """Run opcheck on ``op``; print and return the error it raises."""
    try:
        torch.library.opcheck(op, (x.detach().clone(),))
    except Exception as error:  # OpCheckError, which torch.library does not export
        print(f"{type(error).__name__}:", str(error).split(" (scroll up")[0])
        return error
    raise AssertionError("opcheck passed")


@torch.library.custom_op("dbw_errors::bad_fake", mutates_args=())
def bad_fake(t: torch.Tensor) -> torch.Tensor:
    return t**3


error = opcheck_error(bad_fake)
assert type(error).__name__ == "OpCheckError" and "test_faketensor failed" in str(error)
assert "There was no fake impl registered" in str(error)
bad_fake.register_fake(lambda t: t.new_empty(()))  # wrong: a scalar
error = opcheck_error(bad_fake)
assert "test_faketensor failed" in str(error) and "torch.Size([3]) and torch.Size([])" in str(error)
bad_fake.register_fake(lambda t: torch.empty_like(t))  # the fix: the output's shape
passed = torch.library.opcheck(bad_fake, (x.detach(),), test_utils="test_faketensor")
assert passed == {"test_faketensor": "SUCCESS"}

# %%
# ``opcheck(op, ...): test_schema failed with Argument t is not defined as mutable but was mutated``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** the custom operator changed an input in place (below, ``t``)
# that its ``mutates_args`` does not name. **Fix:** name it,
# ``mutates_args=("t",)``. :ref:`Lesson 12 <lesson-custom-ops>`


def add_one(t: torch.Tensor) -> None:
    t.add_(1)


def add_one_declared(t: torch.Tensor) -> None:
    t.add_(1)


error = opcheck_error(define(add_one))  # wrong: define's mutates_args=() names nothing
assert "test_schema failed with Argument t is not defined as mutable but was mutated" in str(error)
add_one_declared = define(add_one_declared, mutates_args=("t",))
add_one_declared.register_fake(lambda t: None)
passed = torch.library.opcheck(add_one_declared, (x.detach().clone(),), test_utils="test_schema")
assert passed == {"test_schema": "SUCCESS"}

# %%
# A tangent of zeros, or none, from a custom operator
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** forward mode through a :func:`torch.library.custom_op`, which has
# no forward-mode rule on this build's PyTorch: :func:`torch.func.jvp` and
# ``jacfwd`` return a tangent of zeros, and a dual tensor of
# ``torch.autograd.forward_ad`` whose primal requires no grad comes out with
# no tangent at all, instead of an error (one whose primal requires grad
# raises "You must implement the jvp function"). **Fix:** write that part as
# a Function with a ``jvp``; for ``jacfwd``, which batches the tangents with
# ``vmap``, with a vmap rule too: ``generate_vmap_rule = True``, as below, or
# a ``vmap`` staticmethod
# (:ref:`lesson 09 <lesson-torch-func>`). :ref:`Lesson 12 <lesson-custom-ops>`


@torch.library.custom_op("dbw_errors::cube", mutates_args=())
def cube(t: torch.Tensor) -> torch.Tensor:
    return t**3


ones = torch.ones(3, dtype=torch.float64)
_, tangent = torch.func.jvp(cube, (x.detach(),), (ones,))
with fwAD.dual_level():
    dual_tangent = fwAD.unpack_dual(cube(fwAD.make_dual(x.detach(), ones))).tangent
print("torch.func.jvp:", tangent, "expected:", 3 * x.detach() ** 2)
print("forward_ad:    ", dual_tangent)
assert torch.equal(tangent, torch.zeros(3, dtype=torch.float64)) and dual_tangent is None
assert torch.equal(torch.func.jacfwd(cube)(x.detach()), torch.zeros(3, 3, dtype=torch.float64))


class NewCube(Function):
    """The cube with setup_context, which every torch.func transform requires."""

    @staticmethod
    def forward(x):
        return x**3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * grad_out


class NewCubeJvp(NewCube):
    """The fix: a ``jvp``, and a vmap rule for ``jacfwd``."""

    generate_vmap_rule = True

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)
        ctx.save_for_forward(*inputs)

    @staticmethod
    def jvp(ctx, x_tangent):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * x_tangent


_, tangent = torch.func.jvp(NewCubeJvp.apply, (x.detach(),), (ones,))
assert torch.allclose(tangent, 3 * x.detach() ** 2)
jacobian = torch.func.jacfwd(NewCubeJvp.apply)(x.detach())
assert torch.allclose(jacobian, torch.diag(3 * x.detach() ** 2))

# %%
# Under torch.func and vmap
# -------------------------
#
# ``it must override the setup_context staticmethod``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** a :mod:`torch.func` transform met a Function whose ``forward``
# takes ``ctx`` (PyTorch's own reentrant checkpointing is one: next entry),
# or ``grad``, ``vjp``, ``jacrev`` or ``hessian`` met a
# :func:`torch.library.custom_op`. **Fix:** for a Function, split ``forward``
# and ``setup_context`` (:ref:`lesson 06 <lesson-extending-rules>`). A custom
# operator cannot pass these transforms: write that part as a Function
# (:ref:`lesson 12 <lesson-custom-ops>` says what of :mod:`torch.func` it
# works with). Both causes below: ``Cube``, and the custom operator
# ``square``.

message = message_of(RuntimeError, lambda: torch.func.grad(lambda t: Cube.apply(t).sum())(x))
assert "it must override the setup_context staticmethod" in message
message = message_of(RuntimeError, lambda: torch.func.grad(lambda t: square(t).sum())(x.detach()))
assert "it must override the setup_context staticmethod" in message  # square: a custom operator

# %%
# ``torch.func.{grad, vjp, jacrev, hessian} don't yet support saved tensor hooks``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** one of these four transforms ran code that uses saved-tensor
# hooks: most often activation checkpointing,
# :func:`~torch.utils.checkpoint.checkpoint` with ``use_reentrant=False``,
# inside the transformed function; or ``torch.autograd.graph.saved_tensors_hooks``, or a
# context manager built on it such as ``torch.autograd.graph.save_on_cpu``,
# around it. With ``use_reentrant=True``, checkpointing stops at the previous
# entry's message instead (both below). **Fix:** compute the derivative with
# :func:`torch.autograd.grad`, and checkpoint with ``use_reentrant=False``:
# with ``use_reentrant=True``, ``torch.autograd.grad`` stops at the message
# "incompatible with .grad()" of :ref:`lesson 15 <lesson-error-index>`, as
# the last lines below show. Or keep the transform and let no saved-tensor
# hook be active while it runs, neither inside the transformed function nor
# around the call (below): so no checkpointing, and none of the memory it
# saves. :ref:`Lesson 14 <lesson-cost>`

from torch.utils.checkpoint import checkpoint


def checkpointed_cube_sum(t, reentrant=False):
    return checkpoint(torch.pow, t, 3, use_reentrant=reentrant).sum()


message = message_of(RuntimeError, lambda: torch.func.grad(checkpointed_cube_sum)(x.detach()))
assert "don't yet support saved tensor hooks" in message
message = message_of(RuntimeError, lambda: torch.func.grad(checkpointed_cube_sum)(x.detach(), True))
assert "it must override the setup_context staticmethod" in message
assert torch.allclose(torch.autograd.grad(checkpointed_cube_sum(x), x)[0], 3 * x**2)
message = message_of(RuntimeError, lambda: torch.autograd.grad(checkpointed_cube_sum(x, True), x))
assert "incompatible with .grad()" in message
cube_grad = torch.func.grad(lambda t: t.pow(3).sum())  # no checkpointing inside
with torch.autograd.graph.save_on_cpu():  # a hook around the call
    message = message_of(RuntimeError, lambda: cube_grad(x.detach()))
assert "don't yet support saved tensor hooks" in message
assert torch.allclose(cube_grad(x.detach()), 3 * x**2)  # no hook active: works

# %%
# ``During a grad (vjp, jvp, grad, etc) transform, the function provided attempted to call in-place operation``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** the function given to a :mod:`torch.func` transform changed in
# place a tensor captured from outside it (a buffer, a running total), not
# one passed to it as an argument. **Fix:** for ``grad``, ``jacrev``,
# ``jacfwd`` and ``hessian``, pass that tensor as an argument that
# ``argnums`` leaves out, as the message says (below). ``vjp`` and ``jvp``
# have no ``argnums``: they differentiate every argument. ``jvp`` then needs
# a tangent for it too, and ``vjp`` refuses the change in place with the
# message "a leaf Variable that requires grad is being used in an in-place
# operation" (:ref:`lesson 16 <lesson-error-index-function>`, below). With
# them, or with any transform, make the function pure: return the new value
# as a second output (``has_aux=True``, which every transform named here but
# ``hessian`` takes), and apply it outside the transform (below). Under
# ``vmap``, the same change stops at another message: next entry.
# :ref:`Lesson 09 <lesson-torch-func>`

total = torch.zeros(3, dtype=torch.float64)


def cube_sum_counted(t):
    total.add_(t)  # wrong: changes a captured tensor in place
    return t.pow(3).sum()


message = message_of(RuntimeError, lambda: torch.func.grad(cube_sum_counted)(x.detach()))
assert "attempted to call in-place operation (aten::add_.Tensor)" in message


def cube_sum_counting(t, total):
    total.add_(t)  # an argument: allowed
    return t.pow(3).sum()


grad = torch.func.grad(cube_sum_counting)(x.detach(), total)
assert torch.allclose(grad, 3 * x**2) and torch.equal(total, x.detach())
message = message_of(RuntimeError, lambda: torch.func.vjp(cube_sum_counting, x.detach(), total))
assert message == "a leaf Variable that requires grad is being used in an in-place operation."


def cube_sum_and_total(t):
    return t.pow(3).sum(), total + t  # pure: the new total is returned


_, vjp_fn, new_total = torch.func.vjp(cube_sum_and_total, x.detach(), has_aux=True)
(grad,) = vjp_fn(torch.tensor(1.0, dtype=torch.float64))
total.copy_(new_total)  # applied outside the transform
assert torch.allclose(grad, 3 * x**2) and torch.equal(total, 2 * x.detach())

# %%
# ``vmap: inplace arithmetic(self, *extra_args) is not possible``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** under ``vmap``, an in-place op (``copy_``, ``mul_``, an index
# assignment such as ``buffer[:] = y``) wrote a batched value into a tensor
# that ``vmap`` does not batch: one captured from outside, such as ``total``
# above, or one made from a shape, ``torch.zeros(t.shape)``, since
# ``t.shape`` is then one element's shape. The ``forward`` of a Function
# with ``generate_vmap_rule = True`` meets it the same way. ``add_`` and
# ``+=`` raise instead, for a batch of 2,
# ``output with shape [3] doesn't match the broadcast shape [2, 3]``.
# **Fix:** make the buffer from the batched
# tensor, ``torch.zeros_like(t)`` or ``t.new_zeros(t.shape)``, or compute
# out of place; for a captured tensor, make the function pure (entry above).
# All below. :ref:`Lesson 09 <lesson-torch-func>`


def cube_into(t, buffer):
    buffer[:] = t**3  # in place: buffer must be batched as t is
    return buffer


batch = x.detach().expand(2, 3)
message = message_of(RuntimeError, lambda: torch.func.vmap(lambda t: cube_into(t, total))(batch))
assert message.startswith("vmap: inplace arithmetic(self, *extra_args) is not possible")
unbatched = torch.func.vmap(lambda t: cube_into(t, torch.zeros(t.shape, dtype=t.dtype)))
message = message_of(RuntimeError, lambda: unbatched(batch))
assert message.startswith("vmap: inplace arithmetic(self, *extra_args) is not possible")
message = message_of(RuntimeError, lambda: torch.func.vmap(cube_sum_counted)(batch))  # with add_
assert message == "output with shape [3] doesn't match the broadcast shape [2, 3]"
assert torch.equal(torch.func.vmap(lambda t: cube_into(t, torch.zeros_like(t)))(batch), batch**3)
assert torch.equal(torch.func.vmap(lambda t: cube_into(t, t.new_zeros(t.shape)))(batch), batch**3)

# %%
# ``You tried to vmap over ..., but it does not have vmap support``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** ``vmap``, ``jacfwd`` or ``hessian`` batched a Function without a
# vmap rule, such as ``NewCube`` above, or ``jacrev`` batched a ``backward``
# that calls one (as in the next entry). **Fix:** ``generate_vmap_rule =
# True``, as ``NewCubeJvp`` sets, or a ``vmap`` staticmethod.
# :ref:`Lesson 09 <lesson-torch-func>`

message = message_of(RuntimeError, lambda: torch.func.vmap(NewCube.apply)(x.detach()))
assert "does not have vmap support" in message

# %%
# .. _error-index-no-storage:
#
# ``Cannot access data pointer of Tensor that doesn't have storage``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** code that reads a tensor's memory (NumPy, ``.numpy()``, a
# kernel of your own) ran on a tensor that a :mod:`torch.func` transform
# wrapped, which has no storage: most often a batched tensor of ``vmap``, in
# the ``forward`` of a Function with ``generate_vmap_rule = True``.
# **Fix:** a ``vmap`` staticmethod that calls the Function on the whole
# batch.
# :ref:`Lesson 09 <lesson-torch-func>`
#
# **Another cause,** with no ``vmap`` in your code: a Function whose
# ``backward`` uses NumPy ran under :func:`torch.func.grad`, which calls
# ``backward`` inside the transform, on tensors it wrapped (the saved ones
# and ``grad_out``) that have no storage either; so does a
# :func:`torch.func.vjp` or ``jacrev`` inside another transform. At the top
# level, both call ``backward`` once the forward's transform has ended, when
# the saved tensors act as ordinary ones: a ``vjp`` works, and ``jacrev``,
# which batches ``grad_out``, raises only if NumPy reads ``grad_out``
# (below). With plain ``.numpy()`` on a saved input, all of these, the
# top-level ``vjp`` too, stop first at "Can't call numpy() on Tensor that
# requires grad" (:ref:`lesson 15 <lesson-error-index>`); after its fix,
# ``.detach().numpy()``, they behave as above (below). A ``vmap`` rule
# on that Function does not help there. **Fix:** pattern 4
# (:ref:`lesson 05 <lesson-untracked-backward>`) written with
# ``setup_context``: the NumPy code in the ``forward`` of a second Function,
# which the transforms call with ordinary tensors. For ``jacrev``, which
# batches ``backward`` with ``vmap``, that second Function needs a ``vmap``
# staticmethod too (a generated rule would run its NumPy on batched tensors).
# Both are shown after the first case.


class NumpyCube(NewCube):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.as_tensor(x.numpy(force=True) ** 3, device=x.device)


class NumpyCubeVmap(NumpyCube):
    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, x):
        return NumpyCubeVmap.apply(x), in_dims[0]  # elementwise: the batch stays put


batch = torch.rand(4, 3, dtype=torch.float64)
message = message_of(RuntimeError, lambda: torch.func.vmap(NumpyCube.apply)(batch))
assert message == "Cannot access data pointer of Tensor that doesn't have storage"
assert torch.allclose(torch.func.vmap(NumpyCubeVmap.apply, in_dims=1)(batch), batch.T**3)


class CubeNumpyBackward(NewCube):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        grad_x = 3 * x.numpy(force=True) ** 2 * grad_out.numpy(force=True)
        return torch.as_tensor(grad_x, device=x.device)


class CubeNumpyBackwardPlain(NewCube):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return torch.as_tensor(3 * x.numpy() ** 2 * grad_out.numpy())  # wrong: no detach


class CubeNumpyBackwardDetached(NewCube):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return torch.as_tensor(3 * x.detach().numpy() ** 2) * grad_out


class CubeBackwardInNumpy(Function):
    """The fix, pattern 4: b(g, x) = 3 x**2 g, computed by NumPy in a forward."""

    @staticmethod
    def forward(x, grad_out):
        grad_x = 3 * x.numpy(force=True) ** 2 * grad_out.numpy(force=True)
        return torch.as_tensor(grad_x, device=x.device)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, grad_grad):
        x, grad_out = ctx.saved_tensors
        return 6 * x * grad_out * grad_grad, 3 * x**2 * grad_grad

    @staticmethod
    def vmap(info, in_dims, x, grad_out):
        """For jacrev: the whole batch at once, its dimension first in both."""
        x, grad_out = (
            t.movedim(dim, 0) if dim is not None else t.expand(info.batch_size, *t.shape)
            for t, dim in zip((x, grad_out), in_dims)
        )
        return CubeBackwardInNumpy.apply(x, grad_out), 0


class CubeNumpyBackwardFixed(NewCube):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return CubeBackwardInNumpy.apply(x, grad_out)


def func_grad(function):
    return torch.func.grad(lambda t: function.apply(t).sum())


def vjp_sum(function):
    """t -> the sum of function's vector-Jacobian product at t, for ones."""

    def total(t):
        _, vjp_fn = torch.func.vjp(function.apply, t)
        return vjp_fn(torch.ones_like(t))[0].sum()

    return total


point = x.detach()
message = message_of(RuntimeError, lambda: func_grad(CubeNumpyBackward)(point))
assert message == "Cannot access data pointer of Tensor that doesn't have storage"
jacrev_numpy = torch.func.jacrev(CubeNumpyBackward.apply)
assert message_of(RuntimeError, lambda: jacrev_numpy(point)) == message
grad_of_vjp = torch.func.grad(vjp_sum(CubeNumpyBackward))
assert message_of(RuntimeError, lambda: grad_of_vjp(point)) == message
assert torch.allclose(vjp_sum(CubeNumpyBackward)(point), (3 * point**2).sum())  # at the top
for plain_first in (
    func_grad(CubeNumpyBackwardPlain),
    torch.func.jacrev(CubeNumpyBackwardPlain.apply),
    torch.func.grad(vjp_sum(CubeNumpyBackwardPlain)),
    vjp_sum(CubeNumpyBackwardPlain),  # at the top too
):
    plain_message = message_of(RuntimeError, functools.partial(plain_first, point))
    assert "Can't call numpy() on Tensor that requires grad" in plain_message
assert message_of(RuntimeError, lambda: func_grad(CubeNumpyBackwardDetached)(point)) == message
jacobian = torch.func.jacrev(CubeNumpyBackwardDetached.apply)(point)  # NumPy reads x only
assert torch.allclose(jacobian, torch.diag(3 * point**2))
assert torch.allclose(vjp_sum(CubeNumpyBackwardDetached)(point), (3 * point**2).sum())
assert torch.allclose(func_grad(CubeNumpyBackwardFixed)(point), 3 * point**2)
assert torch.allclose(torch.func.grad(vjp_sum(CubeNumpyBackwardFixed))(point), 6 * point)
second = torch.func.grad(lambda t: func_grad(CubeNumpyBackwardFixed)(t).sum())(point)
assert torch.allclose(second, 6 * point)
jacobian = torch.func.jacrev(CubeNumpyBackwardFixed.apply)(point)
assert torch.allclose(jacobian, torch.diag(3 * point**2))

# %%
# ``vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** code that ``vmap`` batches chose a Python branch by a tensor's
# value (``if``, ``while``, ``and``), which can differ from one element of
# the batch to the next. In a Function, most
# often a check in the ``forward`` of a Function with
# ``generate_vmap_rule = True``, which ``vmap`` runs on batched tensors.
# **Fix:** for a check, a ``vmap`` staticmethod that calls the Function on
# the whole batch, whose ``forward`` then sees an ordinary tensor (below); for
# a computation, both branches and :func:`torch.where`.
# :ref:`Lesson 09 <lesson-torch-func>`


class CubeChecked(NewCube):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        if torch.isnan(x).any():  # wrong under vmap: a branch on a value
            raise ValueError("NaN in the input")
        return x**3


class CubeCheckedVmap(CubeChecked):
    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, x):
        return CubeCheckedVmap.apply(x), in_dims[0]  # forward sees the whole batch


message = message_of(RuntimeError, lambda: torch.func.vmap(CubeChecked.apply)(batch))
assert "data-dependent control flow" in message
assert torch.allclose(torch.func.vmap(CubeCheckedVmap.apply)(batch), batch**3)

# %%
# ``vmap: It looks like you're calling .item() on a Tensor``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** as in the entry above, with a tensor turned into a Python number
# (``.item()``, ``float()``, ``int()``): below, the same check written with
# ``.item()``. **Fix:** as above; in a computation, keep the value a tensor.
# :ref:`Lesson 09 <lesson-torch-func>`


class CubeCheckedItem(CubeChecked):
    @staticmethod
    def forward(x):
        if torch.isnan(x).any().item():  # wrong under vmap: a Python number
            raise ValueError("NaN in the input")
        return x**3


message = message_of(RuntimeError, lambda: torch.func.vmap(CubeCheckedItem.apply)(batch))
assert "It looks like you're calling .item() on a Tensor" in message

# %%
# ``vmap: called random operation while in randomness error mode``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** code that ``vmap`` batches drew random numbers: a dropout in
# training mode, ``torch.rand_like``, also in the ``forward`` of a Function
# with ``generate_vmap_rule = True`` (``Dropout`` below), or under
# ``jacfwd``, which batches with ``vmap``. By default ``vmap`` refuses: it
# cannot know whether the elements of the batch should share one draw.
# **Fix:** say which, with ``randomness="different"`` (one draw per
# element, as separate samples want) or ``randomness="same"`` (one draw for
# the whole batch). ``jacfwd`` takes the same argument and wants ``"same"``:
# its batch is the Jacobian's columns, and with ``"different"`` each column
# comes from its own draw, the Jacobian of no single function. Or draw
# outside ``vmap`` and pass the mask in (all below).
# :ref:`Lesson 09 <lesson-torch-func>`


class Dropout(Function):
    """Dropout with p = 0.5; the mask is a second output."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        mask = 2 * (torch.rand_like(x) > 0.5).to(x.dtype)  # a random draw
        return x * mask, mask

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output[1])
        ctx.mark_non_differentiable(output[1])

    @staticmethod
    def backward(ctx, grad_out, grad_mask):
        (mask,) = ctx.saved_tensors
        return grad_out * mask


def dropout(t):
    return torch.nn.functional.dropout(t, p=0.5)  # training mode by default


wide = torch.rand(4, 8, dtype=torch.float64) + 0.5
message = message_of(RuntimeError, lambda: torch.func.vmap(Dropout.apply)(wide))
assert message.startswith("vmap: called random operation while in randomness error mode")
message = message_of(RuntimeError, lambda: torch.func.vmap(dropout)(wide))
assert message.startswith("vmap: called random operation while in randomness error mode")
message = message_of(RuntimeError, lambda: torch.func.jacfwd(dropout)(wide[0]))
assert message.startswith("vmap: called random operation while in randomness error mode")
out, masks = torch.func.vmap(Dropout.apply, randomness="different")(wide)
assert torch.equal(out, wide * masks) and not (masks == masks[0]).all()  # one draw per row
_, masks = torch.func.vmap(Dropout.apply, randomness="same")(wide)
assert (masks == masks[0]).all()  # one draw for all rows


def scaled(t):
    return torch.rand((), dtype=t.dtype) * t  # one random factor: Jacobian r I


for randomness, one_draw in (("same", True), ("different", False)):
    jacobian = torch.func.jacfwd(scaled, randomness=randomness)(wide[0])
    same_factor = torch.equal(jacobian, jacobian[0, 0] * torch.eye(8, dtype=wide.dtype))
    assert same_factor == one_draw  # "different": a factor per column
masks = 2 * (torch.rand_like(wide) > 0.5).to(wide.dtype)  # drawn outside vmap
assert torch.equal(torch.func.vmap(torch.mul)(wide, masks), wide * masks)

# %%
# ``There is a performance drop because we have not yet implemented the batching rule for ...``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# A warning, written from C++ to the standard error at each call. **Cause:**
# ``vmap`` ran a :func:`torch.library.custom_op` that has no vmap rule, so it
# called the operator once for each element of the batch. **Fix:**
# :func:`~torch.library.register_vmap`. :ref:`Lesson 12 <lesson-custom-ops>`,
# which also shows how to read that stream.

import os
import tempfile


def stderr_of(action):
    """What C++ writes to the standard error while ``action`` runs."""
    with tempfile.TemporaryFile(mode="w+") as captured:
        saved_fd = os.dup(2)
        os.dup2(captured.fileno(), 2)
        try:
            action()
        finally:
            os.dup2(saved_fd, 2)
            os.close(saved_fd)
        captured.seek(0)
        return captured.read()


said = stderr_of(lambda: torch.func.vmap(numpy_square)(batch))
print("Warning:", said[said.index("There is") :].split(". ")[0])
assert "not yet implemented the batching rule for dbw_errors::numpy_square" in said
numpy_square.register_vmap(lambda info, in_dims, t: (numpy_square(t), in_dims[0]))
assert not stderr_of(lambda: torch.func.vmap(numpy_square)(batch))

# %%
# ``has both generate_vmap_rule=True and an overridden vmap staticmethod``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** a Function (often a subclass, which inherits the attribute) has
# both kinds of vmap rule. **Fix:** keep one: set
# ``generate_vmap_rule = False``, or delete the ``vmap`` staticmethod.
# :ref:`Lesson 09 <lesson-torch-func>`


class NumpyCubeBothRules(NumpyCubeVmap):
    generate_vmap_rule = True


message = message_of(RuntimeError, lambda: torch.func.vmap(NumpyCubeBothRules.apply)(batch))
assert "has both generate_vmap_rule=True and an overridden vmap" in message

# %%
# ``Expected the vmap staticmethod to have two returns, an output and out_dims``
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
#
# **Cause:** a ``vmap`` staticmethod returned only its output; it returns the
# output and ``out_dims``, where the batch dimension is in that output.
# **Fix:** return both, as ``NumpyCubeVmap`` does.
# :ref:`Lesson 09 <lesson-torch-func>`


class NumpyCubeVmapOneReturn(NumpyCubeVmap):
    @staticmethod
    def vmap(info, in_dims, x):
        return NumpyCubeVmapOneReturn.apply(x)  # wrong: no out_dims


message = message_of(RuntimeError, lambda: torch.func.vmap(NumpyCubeVmapOneReturn.apply)(batch))
assert "Expected the vmap staticmethod to have two returns" in message
assert torch.allclose(torch.func.vmap(NumpyCubeVmap.apply)(batch), batch**3)

# %%
# Next, :ref:`lesson 18 <lesson-builtin-operators>`: the built-in operators whose
# own backward has no derivative, so that double backward stops inside PyTorch.
