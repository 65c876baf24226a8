"""How each lesson proves its exercise on every build (a hidden cell calls this).

This folder holds the solutions to the exercises of lessons 01-05, one file
each, named after its lesson. sphinx-gallery does not treat it as a gallery (it
has no README); ext/lessons/exercises.py shows each solution under its lesson.

``prove(check, name, *also)`` loads the solution of the lesson that defines
``check`` (``solutions/NN_*.py`` for lesson ``NN_*.py``) and requires two
things of ``check``:

* it accepts every right answer: the Function ``name``, a function that calls
  it, the solution's other answers that the exercise asks for (``also``: the
  downloads check them too), and the other forms the lessons teach (``RIGHT``
  below);
* it rejects every wrong answer in ``WRONG`` below, each built from the
  solution: no second derivative, a wrong first derivative, a wrong forward, a
  tensor kept on ``ctx`` (alone or in a container), a ``backward`` that writes
  into the incoming gradient or detaches it, the wrong shape or dtype, and the
  mistakes that fit the exercise (for lessons 01-05, also a ``backward`` that
  leaves no graph or forgets ``return``, and a non-differentiable output). It
  must reject each with an ``AssertionError`` whose message names the fault
  (the words ``WRONG`` lists), so that a reader learns what is wrong.

Otherwise the build fails, naming the answer that the check got wrong.
"""

import collections
import runpy
import types
from pathlib import Path

import numpy as np
import torch
from torch.autograd.function import once_differentiable


def _each(outputs, change):
    """``change`` applied to one output, or to each output of a tuple."""
    if isinstance(outputs, tuple):
        return tuple(change(t) for t in outputs)
    return change(outputs)


def _variant(solution, forward=None, backward=None):
    """A subclass of ``solution`` with ``forward`` and ``backward`` replaced."""
    methods = {}
    if forward is not None:
        methods["forward"] = staticmethod(forward)
    if backward is not None:
        methods["backward"] = staticmethod(backward)
    return type(solution.__name__, (solution,), methods)


def _generic(s):
    """The wrong answers that every exercise must reject, built from solution ``s``."""

    def keep_on_ctx(wrap):
        def forward(ctx, x):
            ctx.kept = wrap(x)
            return s.forward(ctx, x)

        return _variant(s, forward=forward)

    def scaled_backward(ctx, *grads):
        return _each(s.backward(ctx, *grads), lambda g: None if g is None else 1.1 * g)

    def in_place_backward(ctx, *grads):
        return grads[0].copy_(s.backward(ctx, *grads))  # the right values, in grad_out

    def detached_backward(ctx, *grads):
        return s.backward(ctx, *(g.detach() for g in grads))

    return {
        "no second derivative (backward marked once_differentiable)": (
            _variant(s, backward=once_differentiable(s.backward)),
            "second derivative",
        ),
        "a wrong first derivative (backward's gradient times 1.1)": (
            _variant(s, backward=scaled_backward),
            "first derivative",
        ),
        "a wrong forward (0.5 added to each output)": (
            _variant(s, forward=lambda ctx, x: _each(s.forward(ctx, x), lambda t: t + 0.5)),
            "forward is not",
        ),
        "a tensor kept on ctx (ctx.kept = x)": (keep_on_ctx(lambda x: x), "ctx.kept"),
        "a tensor kept on ctx in a list (ctx.kept = [x])": (keep_on_ctx(lambda x: [x]), "ctx.kept"),
        "a tensor kept on ctx in a tuple (ctx.kept = (x,))": (
            keep_on_ctx(lambda x: (x,)),
            "ctx.kept",
        ),
        "a tensor kept on ctx in a dict (ctx.kept = {'x': x})": (
            keep_on_ctx(lambda x: {"x": x}),
            "ctx.kept",
        ),
        "a backward that writes its result into grad_out": (
            _variant(s, backward=in_place_backward),
            "grad_out in place",
        ),
        "a backward that detaches the incoming gradient": (
            _variant(s, backward=detached_backward),
            "the others are the incoming gradients",
        ),
        "the wrong shape (each output flattened)": (
            _variant(s, forward=lambda ctx, x: _each(s.forward(ctx, x), torch.flatten)),
            "forward returns",
        ),
        "the wrong dtype (each output in float32)": (
            _variant(s, forward=lambda ctx, x: _each(s.forward(ctx, x), torch.Tensor.float)),
            "forward returns",
        ),
    }


# -- the mistakes that fit each exercise, built from its solution's namespace -----------------


def _lost(s):
    """Lessons 01-05: a backward whose result autograd cannot differentiate, or that returns
    nothing, an output marked non-differentiable, and a tensor kept on ctx inside an object or
    a deque (a container that is not a list, tuple or dict); each named by the check."""

    def no_grad_backward(ctx, *grads):
        with torch.no_grad():
            return s.backward(ctx, *grads)

    def numpy_backward(ctx, *grads):  # the right values, made by NumPy
        return _each(s.backward(ctx, *grads), lambda g: torch.as_tensor(g.detach().numpy()))

    def no_return(ctx, *grads):
        s.backward(ctx, *grads)  # the gradient, computed and dropped

    def mark_output(ctx, x):
        outs = s.forward(ctx, x)
        ctx.mark_non_differentiable(outs[0] if isinstance(outs, tuple) else outs)
        return outs

    def keep_in_object(ctx, x):
        ctx.kept = types.SimpleNamespace(x=x)  # a tensor inside an object of its own
        return s.forward(ctx, x)

    def keep_in_deque(ctx, x):
        ctx.kept = collections.deque([x])
        return s.forward(ctx, x)

    return {
        "a tensor kept on ctx in an object (ctx.kept = SimpleNamespace(x=x))": (
            _variant(s, forward=keep_in_object),
            "ctx.kept",
        ),
        "a tensor kept on ctx in a deque": (_variant(s, forward=keep_in_deque), "ctx.kept"),
        "a backward computed under torch.no_grad": (
            _variant(s, backward=no_grad_backward),
            "result has no graph, because it was computed under torch.no_grad",
        ),
        "a backward computed in NumPy": (
            _variant(s, backward=numpy_backward),
            "result has no graph, because it was computed under torch.no_grad, in NumPy",
        ),
        "a backward that forgets return": (
            _variant(s, backward=no_return),
            "did it forget return?",
        ),
        "the output marked non-differentiable": (
            _variant(s, forward=mark_output),
            "does not require grad: do not mark it non-differentiable",
        ),
    }


def _log1p_square(ns):
    s = ns["Log1pSquare"]

    def forward(ctx, x):
        denominator = 1 + x**2
        ctx.save_for_backward(x, denominator)  # an intermediate, saved
        return torch.log(denominator)

    def backward(ctx, grad_out):
        x, denominator = ctx.saved_tensors
        return grad_out * 2 * x / denominator

    def save_detached(ctx, x):
        ctx.save_for_backward(x.detach())  # a constant to autograd
        return torch.log1p(x**2)

    return {
        **_lost(s),
        "1 + x**2 saved as an intermediate": (
            _variant(s, forward, backward),
            "made in forward, it is a constant to autograd",
        ),
        "x saved detached": (
            _variant(s, forward=save_detached),
            "because a tensor you saved does not require grad",
        ),
    }


def _sigmoid(ns):
    s = ns["Sigmoid"]

    def save_input(ctx, x):
        ctx.save_for_backward(x)
        return torch.sigmoid(x)

    def from_input(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x) * (1 - torch.sigmoid(x))

    def save_a_copy(ctx, x):
        ctx.save_for_backward(torch.sigmoid(x))  # equal to the output, but an intermediate
        return torch.sigmoid(x)

    def save_a_clone(ctx, x):
        result = torch.sigmoid(x)
        ctx.save_for_backward(result.clone())  # equal to the output, but an intermediate
        return result

    return {
        **_lost(s),
        "the input saved instead of the output": (
            _variant(s, save_input, from_input),
            "save the output",
        ),
        "a second sigmoid saved instead of the output": (
            _variant(s, forward=save_a_copy),
            "does not require grad (detached, or computed in forward); the tensor you saved is not",
        ),
        "a clone of the output saved": (
            _variant(s, forward=save_a_clone),
            "does not require grad (detached, or computed in forward); the tensor you saved is not",
        ),
    }


def _x_exp(ns):
    s = ns["XExp"]

    def forget(ctx, grad_out, grad_exp):
        return s.backward(ctx, grad_out, torch.zeros_like(grad_exp))

    def save_a_copy(ctx, x):
        exp = torch.exp(x)
        ctx.save_for_backward(x, torch.exp(x))  # equal to the output, but an intermediate
        return x * exp, exp

    def save_detached(ctx, x):
        exp = torch.exp(x)
        ctx.save_for_backward(x, exp.detach())  # the output's values, without its grad_fn
        return x * exp, exp

    def return_a_clone(ctx, x):
        exp = torch.exp(x)
        ctx.save_for_backward(x, exp)
        return x * exp, exp.clone()  # the saved exp(x) is now an intermediate

    def save_input(ctx, x):
        ctx.save_for_backward(x)
        exp = torch.exp(x)
        return x * exp, exp

    def recompute(ctx, grad_out, grad_exp):
        (x,) = ctx.saved_tensors
        exp = torch.exp(x)  # right, and tracked, but not what the exercise asks
        return grad_out * (1 + x) * exp + grad_exp * exp

    def mark_exp(ctx, x):
        out, exp = s.forward(ctx, x)
        ctx.mark_non_differentiable(exp)  # "the user never uses it"
        return out, exp

    return {
        **_lost(s),
        "exp(x) computed again in backward instead of saved": (
            _variant(s, save_input, recompute),
            "save exp(x)",
        ),
        "the gradient of the second output dropped": (
            _variant(s, backward=forget),
            "first derivative",
        ),
        "x * exp(x) returned alone": (
            _variant(s, forward=lambda ctx, x: s.forward(ctx, x)[0]),
            "two tensors",
        ),
        "a second exp(x) saved instead of the output": (
            _variant(s, forward=save_a_copy),
            "the exp(x) you saved is not the output you returned",
        ),
        "exp(x) saved detached": (
            _variant(s, forward=save_detached),
            "the exp(x) you saved is not the output you returned",
        ),
        "exp(x) saved, a clone of it returned": (
            _variant(s, forward=return_a_clone),
            "the exp(x) you saved is not the output you returned",
        ),
        "exp(x) marked non-differentiable": (
            _variant(s, forward=mark_exp),
            "non-differentiable",
        ),
    }


def _named_faults(s, lost, saves_view, detached_grad_out):
    """Lessons 04-05: _lost's answers, a view of x saved in forward (``saves_view``) and a
    detached grad_out, each with the words that the lesson's check says for it."""
    answers = _lost(s)

    def detached_backward(ctx, *grads):
        return s.backward(ctx, *(g.detach() for g in grads))

    words = {
        "a backward computed under torch.no_grad": lost,
        "a backward computed in NumPy": lost,
        "the output marked non-differentiable": "the output does not require grad",
    }
    faults = {what: (answers[what][0], words.get(what, answers[what][1])) for what in answers}
    faults["a view of x saved in forward"] = (saves_view, "a view of x made there")
    # the same answer as _generic's, now with the words that name its fault
    faults["a backward that detaches the incoming gradient"] = (
        _variant(s, backward=detached_backward),
        detached_grad_out,
    )
    return faults


def _softplus(ns):
    s = ns["Softplus"]

    def on_ctx(ctx, x):
        ctx.sigmoid = torch.sigmoid(x)  # the lesson's bug
        return torch.nn.functional.softplus(x)

    def saved_intermediate(ctx, x):
        ctx.save_for_backward(torch.sigmoid(x))  # saved, but not an output
        return torch.nn.functional.softplus(x)

    def times_saved(ctx, grad_out):
        (sigmoid,) = ctx.saved_tensors
        return grad_out * sigmoid

    def of_detached_input(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x.detach())

    with_sigmoid = ns["SoftplusWithSigmoid"]

    def mark_sigmoid(ctx, x):
        out, sigmoid = with_sigmoid.forward(ctx, x)
        ctx.mark_non_differentiable(sigmoid)  # "the user never uses it"
        return out, sigmoid

    def save_a_second_sigmoid(ctx, x):
        ctx.save_for_backward(torch.sigmoid(x))  # equal to the output, but an intermediate
        return torch.nn.functional.softplus(x), torch.sigmoid(x)

    def forget(ctx, grad_out, grad_sigmoid):
        return with_sigmoid.backward(ctx, grad_out, torch.zeros_like(grad_sigmoid))

    def mark_softplus(ctx, x):
        out, sigmoid = with_sigmoid.forward(ctx, x)
        ctx.mark_non_differentiable(out)
        return out, sigmoid

    def save_view(ctx, x):
        ctx.save_for_backward(x.view_as(x))  # a view of x, made in forward: cut off from x
        return torch.nn.functional.softplus(x)

    marked = _variant(with_sigmoid, forward=mark_sigmoid)
    forgetful = _variant(with_sigmoid, backward=forget)
    constant = "a tensor saved in forward does not require grad"
    named = _named_faults(
        s, "no path back to x", _variant(s, forward=save_view), "no path back to grad_out"
    )
    return {
        **named,
        "the softplus marked non-differentiable, with the sigmoid as an extra output": (
            _variant(with_sigmoid, forward=mark_softplus),
            "output 0 (the softplus) does not require grad",
        ),
        "the extra output (the sigmoid) marked non-differentiable": (marked, "non-differentiable"),
        "the extra output marked non-differentiable, through the wrapper": (
            lambda x: marked.apply(x)[0],
            "marked non-differentiable",
        ),
        "the sigmoid kept on ctx (the lesson's bug)": (
            _variant(s, on_ctx, lambda ctx, grad_out: grad_out * ctx.sigmoid),
            "ctx.sigmoid",
        ),
        "the sigmoid saved without being an output": (
            _variant(s, saved_intermediate, times_saved),
            constant,
        ),
        "a second sigmoid saved, another returned": (
            _variant(with_sigmoid, forward=save_a_second_sigmoid),
            constant,
        ),
        "the gradient of the extra output dropped, the Function itself": (
            forgetful,
            "the extra output's gradient is missing",
        ),
        "the gradient of the extra output dropped, through the wrapper": (
            lambda x: forgetful.apply(x)[0],
            "the extra output's gradient is missing",
        ),
        "the sigmoid of x.detach() in backward": (
            _variant(s, backward=of_detached_input),
            "no path back to x",
        ),
    }


def _exp_numpy(ns):
    s, grad_function = ns["ExpNumpy"], ns["ExpNumpyGrad"]

    def numpy_backward(ctx, grad_out):
        (result,) = ctx.saved_tensors
        return torch.as_tensor(grad_out.detach().numpy() * result.detach().numpy())

    def numpy_backward_no_detach(ctx, grad_out):
        (result,) = ctx.saved_tensors
        return torch.as_tensor(grad_out.numpy() * result.numpy())  # fine until create_graph

    def torch_backward(ctx, grad_out):
        (result,) = ctx.saved_tensors
        return grad_out * result

    def only_result(ctx, grad_b):
        grad_out, result = ctx.saved_tensors
        return None, grad_b * grad_out  # the gradient for grad_out is missing

    forgetful = _variant(grad_function, backward=only_result)

    def numpy_grad_backward(ctx, grad_b):
        grad_out, result = ctx.saved_tensors
        b, g, y = (t.detach().numpy() for t in (grad_b, grad_out, result))
        return torch.as_tensor(b * y), torch.as_tensor(b * g)  # right values, no graph

    def saves_detached(ctx, grad_out, result):
        ctx.save_for_backward(grad_out.detach(), result.detach())
        return torch.as_tensor(grad_out.detach().numpy() * result.detach().numpy())

    def calling(second):
        def backward(ctx, grad_out):
            (result,) = ctx.saved_tensors
            return second.apply(grad_out, result)

        return _variant(s, backward=backward)

    def save_detached_input(ctx, x):
        x = x.detach()  # "NumPy needs it detached"
        ctx.save_for_backward(x)
        return torch.as_tensor(np.exp(x.numpy()))

    def from_input(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return _ExpNumpyGradFromInput.apply(grad_out, x)

    def save_a_second_tensor(ctx, x):
        result = np.exp(x.detach().numpy())
        ctx.save_for_backward(torch.as_tensor(result))  # equal to the output, but an intermediate
        return torch.as_tensor(result)

    def detached_result(ctx, grad_out):
        (result,) = ctx.saved_tensors
        return grad_function.apply(grad_out, result.detach())

    def torch_forward(ctx, x):
        result = torch.exp(x)
        ctx.save_for_backward(result)
        return result

    def torch_product(ctx, grad_out, result):
        ctx.save_for_backward(grad_out, result)
        return grad_out * result

    def save_view(ctx, x):
        ctx.save_for_backward(x.view_as(x))  # a view of x, made in forward: cut off from x
        return torch.as_tensor(np.exp(x.detach().numpy()))

    constant = "a tensor saved in forward does not require grad"
    named = _named_faults(
        s,
        "backward leaves no graph",
        _variant(s, save_view, from_input),
        "no path back to grad_out",
    )

    return {
        **named,
        "a backward in NumPy, not a second Function": (
            _variant(s, backward=numpy_backward),
            "backward leaves no graph (NumPy",
        ),
        "a backward in NumPy without .detach(), not a second Function": (
            _variant(s, backward=numpy_backward_no_detach),
            "backward leaves no graph (NumPy",
        ),
        "a backward in PyTorch operations, not a second Function": (
            _variant(s, backward=torch_backward),
            "second Function",
        ),
        "a second Function without the gradient for grad_out": (
            calling(forgetful),
            "backward return a gradient for grad_out",
        ),
        "a second Function whose own backward runs in NumPy": (
            calling(_variant(grad_function, backward=numpy_grad_backward)),
            "third derivative",
        ),
        "a second Function that saves detached tensors": (
            calling(_variant(grad_function, forward=saves_detached)),
            "third derivative",
        ),
        "x detached before it is saved, then a second Function of x": (
            _variant(s, save_detached_input, from_input),
            constant,
        ),
        "a second tensor over the NumPy result saved, not the output": (
            _variant(s, forward=save_a_second_tensor),
            constant,
        ),
        "the second Function called on the saved output, detached": (
            _variant(s, backward=detached_result),
            "called on tensors that require grad",
        ),
        "forward in PyTorch operations, not NumPy": (
            _variant(s, forward=torch_forward),
            "forward computes with PyTorch (aten.exp)",
        ),
        "the second Function's forward in PyTorch operations, not NumPy": (
            calling(_variant(grad_function, forward=torch_product)),
            "the second Function's forward) computes with PyTorch (aten.mul)",
        ),
    }


WRONG = {
    "Log1pSquare": _log1p_square,
    "Sigmoid": _sigmoid,
    "XExp": _x_exp,
    "Softplus": _softplus,
    "ExpNumpy": _exp_numpy,
}


# -- right answers in other forms that the lessons teach ---------------------------------------


class _SoftplusSavingOutput(torch.autograd.Function):
    """Pattern 2: the sigmoid from the saved output, 1 - exp(-softplus(x))."""

    @staticmethod
    def forward(ctx, x):
        result = torch.nn.functional.softplus(x)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_out):
        (result,) = ctx.saved_tensors
        return grad_out * -torch.expm1(-result)


class _ExpNumpyGradFromInput(torch.autograd.Function):
    """b(g, x) = g * exp(x), with exp computed again from the saved input, as CubeGrad does."""

    @staticmethod
    def forward(ctx, grad_out, x):
        ctx.save_for_backward(grad_out, x)
        return torch.as_tensor(grad_out.detach().numpy() * np.exp(x.detach().numpy()))

    @staticmethod
    def backward(ctx, grad_b):
        grad_out, x = ctx.saved_tensors
        return grad_b * torch.exp(x), grad_b * grad_out * torch.exp(x)


class _ExpNumpySavingInput(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.as_tensor(np.exp(x.detach().numpy()))

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return _ExpNumpyGradFromInput.apply(grad_out, x)


class _SigmoidSavingNone(torch.autograd.Function):
    """save_for_backward accepts None, e.g. for an input that needs no gradient."""

    @staticmethod
    def forward(ctx, x):
        result = torch.sigmoid(x)
        ctx.save_for_backward(None, result)
        return result

    @staticmethod
    def backward(ctx, grad_out):
        _, result = ctx.saved_tensors
        return grad_out * result * (1 - result)


def _setup_context_form(solution, forward, setup_context):
    """``solution`` with forward(x) and setup_context(ctx, inputs, output) (lesson 06)."""
    methods = {"forward": staticmethod(forward), "setup_context": staticmethod(setup_context)}
    return type(solution.__name__, (solution,), methods)


def _save(which):
    """A setup_context that saves the tensors ``which`` picks from (inputs, output)."""
    return lambda ctx, inputs, output: ctx.save_for_backward(*which(inputs, output))


def _numpy_exp(x):
    return torch.as_tensor(np.exp(x.detach().numpy()))


def _numpy_product(a, b):
    return torch.as_tensor(a.detach().numpy() * b.detach().numpy())


def _exp_numpy_setup_context(ns):
    grad_function = _setup_context_form(
        ns["ExpNumpyGrad"], _numpy_product, _save(lambda inputs, output: inputs)
    )
    exp = _setup_context_form(ns["ExpNumpy"], _numpy_exp, _save(lambda inputs, output: [output]))

    def backward(ctx, grad_out):
        (result,) = ctx.saved_tensors
        return grad_function.apply(grad_out, result)

    return _variant(exp, backward=backward)


RIGHT = {
    "Log1pSquare": lambda ns: {
        "the setup_context form": _setup_context_form(
            ns["Log1pSquare"],
            lambda x: torch.log1p(x**2),
            _save(lambda inputs, output: inputs),
        ),
    },
    "Sigmoid": lambda ns: {
        "the setup_context form": _setup_context_form(
            ns["Sigmoid"], lambda x: torch.sigmoid(x), _save(lambda inputs, output: [output])
        ),
        "None saved beside the output (lesson 06)": _SigmoidSavingNone,
    },
    "XExp": lambda ns: {
        "the setup_context form": _setup_context_form(
            ns["XExp"],
            lambda x: (x * torch.exp(x), torch.exp(x)),
            _save(lambda inputs, output: [inputs[0], output[1]]),
        ),
    },
    # lesson 03's first fix (its wrapper is prove's ``also``); lesson 02's pattern
    "Softplus": lambda ns: {
        "the sigmoid as an extra output, the Function itself": ns["SoftplusWithSigmoid"],
        "the sigmoid from the saved output": _SoftplusSavingOutput,
        "the setup_context form": _setup_context_form(
            ns["Softplus"],
            lambda x: torch.nn.functional.softplus(x),
            _save(lambda inputs, output: inputs),
        ),
        "the sigmoid as an extra output, in the setup_context form": _setup_context_form(
            ns["SoftplusWithSigmoid"],
            lambda x: (torch.nn.functional.softplus(x), torch.sigmoid(x)),
            _save(lambda inputs, output: [output[1]]),
        ),
    },
    "ExpNumpy": lambda ns: {
        "a second Function of the input": _ExpNumpySavingInput,
        "the setup_context form, both Functions": _exp_numpy_setup_context(ns),
    },
}


def prove(check, name, *also):
    lesson = Path(check.__code__.co_filename)
    (file,) = Path(__file__).parent.glob(lesson.name[:3] + "*.py")
    ns = runpy.run_path(str(file))
    solution = ns[name]

    right = {name: solution, f"a function that calls {name}": lambda x: solution.apply(x)}
    right.update({f"the solution's {other}": ns[other] for other in also})
    right.update(RIGHT.get(name, lambda ns: {})(ns))
    for what, answer in right.items():
        try:
            check(answer)
        except Exception as err:
            raise AssertionError(f"{lesson.name}: the check rejects {what}: {err!r}") from err

    wrong = _generic(solution)
    wrong.update(WRONG[name](ns))
    for what, (answer, words) in wrong.items():
        try:
            check(answer)
        except AssertionError as err:
            if words not in str(err):
                raise AssertionError(
                    f"{lesson.name}: the check rejects {what} without saying {words!r}: {err}"
                ) from err
        except Exception as err:
            raise AssertionError(
                f"{lesson.name}: the check rejects {what} with {err!r}, not a message"
            ) from err
        else:
            raise AssertionError(f"{lesson.name}: the check accepts {what}")
    return solution
