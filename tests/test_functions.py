"""Every custom Function a lesson defines, checked again on several shapes.

A lesson checks its Functions on the inputs it shows. Here each one is
checked with gradcheck and gradgradcheck, in float64, on a scalar, a vector
and a batched matrix (or the shapes that the Function is written for). A
Function that a lesson presents as broken must still fail gradgradcheck on
every shape (or gradcheck, if its first derivative is the one that is wrong);
one written for a single rank of input must say so with an assertion.

The checks run where the Functions are: in the Jupyter kernel that has just
run the lesson's notebook as a reader would (conftest.py's ``notebook_run``,
which tests/test_notebooks.py reads too), by :func:`report` below. So a
lesson executes once for both.

The table below must name every Function in every lesson: a new Function
without a row fails ``test_every_function_is_in_the_table``.
"""

from __future__ import annotations

import runpy
import traceback

import pytest
import torch
from conftest import LESSONS
from torch.autograd import gradcheck, gradgradcheck
from torch.autograd.gradcheck import GradcheckError

UNARY = [[()], [(5,)], [(2, 3, 4)]]
PAIR = [[(), ()], [(5,), (5,)], [(2, 3, 4), (2, 3, 4)]]
BROADCAST = [[(), ()], [(3, 4), (4,)], [(2, 3, 4), (4,)]]  # a weight shared by leading dims
LINEAR = [[(4,), (5, 4), (5,)], [(3, 4), (5, 4), (5,)], [(2, 3, 4), (5, 4), (5,)]]
MATMUL = [s[:2] for s in LINEAR]
# Rows of x, a weight, and a bias that broadcasts against the result.
LINEAR_ROWS = [[(1, 4), (5, 4), (5,)], [(3, 4), (5, 4), (1, 5)], [(7, 4), (2, 4), ()]]

DOUBLE, FIRST_ONLY = "double backward", "first derivative only"
WRONG, DEMO = "wrong first derivative", "demonstrates an API error"


def apply(name, *extra, first=False, clone=False):
    """How to call Function *name* of a lesson's namespace."""

    def build(ns):
        fn = ns[name].apply

        def call(*tensors):
            if clone:
                tensors = tuple(t.clone() for t in tensors)
            out = fn(*tensors, *extra)
            return out[0] if first else out

        return call

    return build


# (lesson, Function) -> (expectation, how to call it, shapes of its tensor inputs)
TABLE = {
    ("01_saving_inputs", "Square"): (DOUBLE, apply("Square"), UNARY),
    ("01_saving_inputs", "SquareProbe"): (DOUBLE, apply("SquareProbe"), UNARY),
    ("01_saving_inputs", "Broken"): (DEMO, None, None),  # backward raises ValueError
    ("02_saving_outputs", "MyExp"): (DOUBLE, apply("MyExp"), UNARY),
    ("03_saving_intermediates", "MySinh"): (DOUBLE, apply("MySinh"), UNARY),
    ("03_saving_intermediates", "ForgetfulSinh"): (
        FIRST_ONLY,
        apply("ForgetfulSinh", first=True),
        UNARY,
    ),
    ("03_saving_intermediates", "SinhRecompute"): (DOUBLE, apply("SinhRecompute"), UNARY),
    ("04_intermediates_on_ctx", "SinhOnCtx"): (FIRST_ONLY, apply("SinhOnCtx"), UNARY),
    ("04_intermediates_on_ctx", "SinhSavedIntermediates"): (
        FIRST_ONLY,
        apply("SinhSavedIntermediates"),
        UNARY,
    ),
    ("04_intermediates_on_ctx", "SoftplusOnCtx"): (FIRST_ONLY, apply("SoftplusOnCtx"), UNARY),
    ("04_intermediates_on_ctx", "ReluSavedMask"): (DOUBLE, apply("ReluSavedMask"), UNARY),
    ("04_intermediates_on_ctx", "MaxSavedIndices"): (DOUBLE, apply("MaxSavedIndices"), UNARY),
    # A view of x made in forward is saved as a leaf: the second derivative misses its terms.
    ("04_intermediates_on_ctx", "SinhSavedView"): (FIRST_ONLY, apply("SinhSavedView"), UNARY),
    ("04_intermediates_on_ctx", "SinhViewInBackward"): (DOUBLE, apply("SinhViewInBackward"), UNARY),
    ("05_untracked_backward", "CubeNumpy"): (FIRST_ONLY, apply("CubeNumpy"), UNARY),
    ("05_untracked_backward", "CubeOnce"): (FIRST_ONLY, apply("CubeOnce"), UNARY),
    ("05_untracked_backward", "CubeGrad"): (DOUBLE, apply("CubeGrad"), PAIR),
    ("05_untracked_backward", "Cube"): (DOUBLE, apply("Cube"), UNARY),
    ("06_extending_autograd", "ShiftFromDict"): (DEMO, None, None),
    ("06_extending_autograd", "Shift"): (DOUBLE, apply("Shift"), BROADCAST),
    ("06_extending_autograd", "ScaledProduct"): (
        DOUBLE,
        apply("ScaledProduct", 0.5),
        BROADCAST,
    ),
    ("06_extending_autograd", "ShiftSummed"): (DEMO, None, None),  # returns the wrong shape
    ("06_extending_autograd", "MissingNone"): (DEMO, None, None),
    ("06_extending_autograd", "ExtraNone"): (DOUBLE, apply("ExtraNone", 2.0), UNARY),
    ("06_extending_autograd", "TwiceInPlace"): (DEMO, None, None),
    ("06_extending_autograd", "Twice"): (DOUBLE, apply("Twice"), UNARY),
    ("06_extending_autograd", "ScaledSquare"): (DOUBLE, apply("ScaledSquare", 3.0), UNARY),
    ("06_extending_autograd", "SquareSavesTwoX"): (FIRST_ONLY, apply("SquareSavesTwoX"), UNARY),
    ("06_extending_autograd", "ExpSaved"): (DOUBLE, apply("ExpSaved"), UNARY),
    # Correct derivatives, but it keeps its output on ctx (a reference cycle).
    ("06_extending_autograd", "ExpOnCtx"): (DOUBLE, apply("ExpOnCtx"), UNARY),
    ("06_extending_autograd", "ExpInPlace"): (DOUBLE, apply("ExpInPlace", clone=True), UNARY),
    # Without mark_dirty, its saved input keeps the history of the values before the change.
    ("06_extending_autograd", "ExpInPlaceUnmarked"): (
        FIRST_ONLY,
        apply("ExpInPlaceUnmarked", clone=True),
        UNARY,
    ),
    ("06_extending_autograd", "ReluWithMask"): (
        DOUBLE,
        apply("ReluWithMask", True, first=True),
        UNARY,
    ),
    ("06_extending_autograd", "SortWithIndices"): (
        DOUBLE,
        apply("SortWithIndices", first=True),
        UNARY,
    ),
    ("06_extending_autograd", "SinCos"): (DOUBLE, apply("SinCos", False), UNARY),
    ("06_extending_autograd", "CubeOldStyle"): (DOUBLE, apply("CubeOldStyle"), UNARY),
    ("06_extending_autograd", "Cube"): (DOUBLE, apply("Cube"), UNARY),
    ("07_custom_layer", "LinearFunction"): (FIRST_ONLY, apply("LinearFunction"), LINEAR),
    # Also with no input features, and with no output features.
    ("07_custom_layer", "LinearFunctionDD"): (
        DOUBLE,
        apply("LinearFunctionDD"),
        [*LINEAR, [(3, 0), (5, 0), (5,)], [(3, 4), (0, 4), (0,)]],
    ),
    ("07_custom_layer", "MatMulTransposed"): (
        DOUBLE,
        apply("MatMulTransposed"),
        [*MATMUL, [(3, 0), (5, 0)], [(3, 4), (0, 4)]],
    ),
    ("08_forward_mode", "XSin"): (DOUBLE, apply("XSin"), UNARY),
    ("08_forward_mode", "XSinNoJvp"): (DOUBLE, apply("XSinNoJvp"), UNARY),
    ("08_forward_mode", "XSinForgotSaveForForward"): (
        DOUBLE,
        apply("XSinForgotSaveForForward"),
        UNARY,
    ),
    ("08_forward_mode", "XSinNumpyBackward"): (FIRST_ONLY, apply("XSinNumpyBackward"), UNARY),
    ("08_forward_mode", "XSinNumpyOnce"): (FIRST_ONLY, apply("XSinNumpyOnce"), UNARY),
    # Their backward is right (these checks are reverse mode); their jvp is the lesson's mistake.
    ("08_forward_mode", "XSinWrongJvp"): (DOUBLE, apply("XSinWrongJvp"), UNARY),
    ("08_forward_mode", "ExpWrongJvp"): (DOUBLE, apply("ExpWrongJvp"), UNARY),
    ("08_forward_mode", "ReLUWrongJvp"): (DOUBLE, apply("ReLUWrongJvp"), UNARY),
    ("09_torch_func", "Tanh"): (DOUBLE, apply("Tanh"), UNARY),
    ("09_torch_func", "TanhNoVmapRule"): (DOUBLE, apply("TanhNoVmapRule"), UNARY),
    ("09_torch_func", "TanhWithJvp"): (DOUBLE, apply("TanhWithJvp"), UNARY),
    ("09_torch_func", "TanhWithJvpNoVmapRule"): (DOUBLE, apply("TanhWithJvpNoVmapRule"), UNARY),
    ("09_torch_func", "TanhMarked"): (FIRST_ONLY, apply("TanhMarked"), UNARY),
    ("09_torch_func", "TanhGrad"): (DOUBLE, apply("TanhGrad"), PAIR),
    ("09_torch_func", "TanhCallsGrad"): (DOUBLE, apply("TanhCallsGrad"), UNARY),
    ("09_torch_func", "TanhGradNoJvp"): (DOUBLE, apply("TanhGradNoJvp"), PAIR),
    ("09_torch_func", "TanhGradWithJvp"): (DOUBLE, apply("TanhGradWithJvp"), PAIR),
    ("09_torch_func", "TanhWithJvpCallsGrad"): (DOUBLE, apply("TanhWithJvpCallsGrad"), UNARY),
    ("09_torch_func", "TanhWithJvpCallsGradNoJvp"): (
        DOUBLE,
        apply("TanhWithJvpCallsGradNoJvp"),
        UNARY,
    ),
    ("09_torch_func", "NumpySoftplusGenerated"): (
        DOUBLE,
        apply("NumpySoftplusGenerated"),
        UNARY,
    ),
    ("09_torch_func", "NumpySoftplus"): (DOUBLE, apply("NumpySoftplus"), UNARY),
    ("09_torch_func", "NumpySoftplusBothRules"): (DEMO, None, None),
    ("10_second_derivatives", "SmoothReLU"): (DOUBLE, apply("SmoothReLU"), UNARY),
    ("10_second_derivatives", "Tanh"): (DOUBLE, apply("Tanh"), UNARY),
    ("11_diagnosing", "LogCoshDetached"): (FIRST_ONLY, apply("LogCoshDetached"), UNARY),
    ("11_diagnosing", "Square"): (DOUBLE, apply("Square"), UNARY),
    ("11_diagnosing", "SquareSlightlyOff"): (WRONG, apply("SquareSlightlyOff"), UNARY),
    ("11_diagnosing", "CubeSum"): (DOUBLE, apply("CubeSum"), UNARY),
    ("11_diagnosing", "CubeSumSlightlyOff"): (WRONG, apply("CubeSumSlightlyOff"), UNARY),
    ("11_diagnosing", "Jittery"): (DEMO, None, None),
    ("11_diagnosing", "VeryJittery"): (DEMO, None, None),
    ("11_diagnosing", "TwiceNoMaterialize"): (DEMO, None, None),
    ("11_diagnosing", "LinearFunction"): (DOUBLE, apply("LinearFunction"), LINEAR_ROWS),
    ("11_diagnosing", "SoftplusFunction"): (FIRST_ONLY, apply("SoftplusFunction"), UNARY),
    ("11_diagnosing", "TanhFunction"): (DOUBLE, apply("TanhFunction"), UNARY),
    ("11_diagnosing", "ScaleFunction"): (DOUBLE, apply("ScaleFunction"), BROADCAST),
    ("11_diagnosing", "ScaleHalfDetached"): (FIRST_ONLY, apply("ScaleHalfDetached"), BROADCAST),
    # With a weight that requires grad, gradgradcheck passes it (the lesson's point).
    ("11_diagnosing", "ScaleGradDetached"): (
        FIRST_ONLY,
        apply("ScaleGradDetached", torch.tensor(2.0, dtype=torch.float64)),
        UNARY,
    ),
    ("11_diagnosing", "FixedSoftplusFunction"): (DOUBLE, apply("FixedSoftplusFunction"), UNARY),
    ("11_diagnosing", "TimesTwo"): (DOUBLE, apply("TimesTwo"), UNARY),
    ("11_diagnosing", "SoftplusOnce"): (FIRST_ONLY, apply("SoftplusOnce"), UNARY),
    ("11_diagnosing", "ReLUFunction"): (DOUBLE, apply("ReLUFunction"), UNARY),
    ("11_diagnosing", "SoftplusSavesSigmoid"): (FIRST_ONLY, apply("SoftplusSavesSigmoid"), UNARY),
    ("11_diagnosing", "SquareSavesView"): (FIRST_ONLY, apply("SquareSavesView"), UNARY),
    # SinFunction's backward calls numpy_cos, which the lesson gives a gradient later.
    ("12_custom_ops", "SinFunction"): (DOUBLE, apply("SinFunction"), UNARY),
    # numpy_cos in the backward only, then in the jvp only (the jvp is not checked here).
    ("12_custom_ops", "SinOpInBackward"): (DOUBLE, apply("SinOpInBackward"), UNARY),
    ("12_custom_ops", "SinOpInJvp"): (DOUBLE, apply("SinOpInJvp"), UNARY),
    ("12_custom_ops", "SinTorchCos"): (DOUBLE, apply("SinTorchCos"), UNARY),
    ("12_custom_ops", "SinTorchRules"): (DOUBLE, apply("SinTorchRules"), UNARY),
    # Its backward calls an operator without an autograd kernel: a constant.
    ("12_custom_ops", "SinRawCos"): (FIRST_ONLY, apply("SinRawCos"), UNARY),
    # Its backward calls a CompositeImplicitAutograd kernel in NumPy: a constant, silently.
    ("12_custom_ops", "SinCiaCos"): (FIRST_ONLY, apply("SinCiaCos"), UNARY),
    ("13_torch_compile", "Softplus"): (DOUBLE, apply("Softplus"), UNARY),
    ("13_torch_compile", "SoftplusChecked"): (DOUBLE, apply("SoftplusChecked"), UNARY),
    ("14_cost", "Tanh"): (DOUBLE, apply("Tanh"), UNARY),
    ("14_cost", "TanhOnCtx"): (FIRST_ONLY, apply("TanhOnCtx"), UNARY),
    ("15_error_index", "Cube"): (DOUBLE, apply("Cube"), UNARY),
    ("15_error_index", "CubeOnce"): (FIRST_ONLY, apply("CubeOnce"), UNARY),
    ("15_error_index", "CubeOnCtx"): (FIRST_ONLY, apply("CubeOnCtx"), UNARY),
    ("15_error_index", "CubeNumpy"): (DEMO, None, None),  # .numpy() raises under grad mode
    ("15_error_index", "CubeAllNumpy"): (FIRST_ONLY, apply("CubeAllNumpy"), UNARY),
    ("15_error_index", "CubeJittery"): (DEMO, None, None),
    ("15_error_index", "CubeWrongFormula"): (WRONG, apply("CubeWrongFormula"), UNARY),
    ("15_error_index", "ExpWrongFormula"): (WRONG, apply("ExpWrongFormula"), UNARY),
    # Its backward detaches grad_out: gradgradcheck names "input 1", the output gradient.
    ("15_error_index", "CubeGradOutDetached"): (FIRST_ONLY, apply("CubeGradOutDetached"), UNARY),
    ("15_error_index", "CubeCountsCalls"): (WRONG, apply("CubeCountsCalls"), UNARY),
    ("15_error_index", "CubeGradInPlace"): (DEMO, None, None),  # fast_mode catches it
    ("19_silent_symptoms", "Cube"): (DOUBLE, apply("Cube"), UNARY),
    ("19_silent_symptoms", "CubeOnce"): (FIRST_ONLY, apply("CubeOnce"), UNARY),
    ("19_silent_symptoms", "CubeOnCtx"): (FIRST_ONLY, apply("CubeOnCtx"), UNARY),
    ("19_silent_symptoms", "CubeDetached"): (FIRST_ONLY, apply("CubeDetached"), UNARY),
    ("19_silent_symptoms", "MulSquare"): (DOUBLE, apply("MulSquare"), PAIR),
    ("19_silent_symptoms", "MulSquareNumpy"): (DEMO, None, None),  # gradgradcheck passes: silent
    ("19_silent_symptoms", "TwiceFirst"): (
        DEMO,
        None,
        None,
    ),  # takes a list: autograd sees no input
    ("16_function_errors", "Cube"): (DOUBLE, apply("Cube"), UNARY),
    ("16_function_errors", "CubeSum"): (DOUBLE, apply("CubeSum"), UNARY),
    # Its backward forgets grad_out: gradcheck says "backward not multiplied by grad_output".
    ("16_function_errors", "CubeSumForgetsGradOut"): (WRONG, apply("CubeSumForgetsGradOut"), UNARY),
    ("16_function_errors", "Scale"): (DOUBLE, apply("Scale", 2.0), UNARY),
    ("16_function_errors", "ScaleMissingNone"): (DEMO, None, None),
    ("16_function_errors", "Power"): (DEMO, None, None),  # returns its input as-is for n == 1
    ("16_function_errors", "PowerFixed"): (DOUBLE, apply("PowerFixed", 3), UNARY),
    ("16_function_errors", "CubeNoMaterializeLast"): (DEMO, None, None),
    ("16_function_errors", "CubeNoMaterializeFixed"): (
        DOUBLE,
        apply("CubeNoMaterializeFixed"),
        UNARY,
    ),
    ("16_function_errors", "ExpInPlace"): (DOUBLE, apply("ExpInPlace", clone=True), UNARY),
    ("16_function_errors", "CubeNoMaterialize"): (DEMO, None, None),
    ("16_function_errors", "CubeForgotSaveForForward"): (
        DOUBLE,
        apply("CubeForgotSaveForForward"),
        UNARY,
    ),
    ("16_function_errors", "Mean"): (DEMO, None, None),  # its gradient has the output's shape
    ("16_function_errors", "MeanFixed"): (DOUBLE, apply("MeanFixed"), UNARY),
    ("16_function_errors", "ScaleSavesNumber"): (DEMO, None, None),
    ("16_function_errors", "CubeWithoutBackward"): (DEMO, None, None),
    ("16_function_errors", "ExpInPlaceCopy"): (DEMO, None, None),
    ("16_function_errors", "CubeForgotSaveForBackward"): (DEMO, None, None),
    ("16_function_errors", "CubeWrongJvp"): (DEMO, None, None),  # its jvp is wrong
    ("16_function_errors", "ScaleZeroForFactor"): (DEMO, None, None),
    ("16_function_errors", "CubeSavesNothing"): (DEMO, None, None),
    ("16_function_errors", "CubeGradInPlace"): (DEMO, None, None),  # raises after .sum()
    ("16_function_errors", "CubeJvp"): (DOUBLE, apply("CubeJvp"), UNARY),
    ("16_function_errors", "ScaleJvpPerInput"): (DEMO, None, None),  # its jvp is wrong
    ("16_function_errors", "ScaleJvp"): (DOUBLE, apply("ScaleJvp", 2.0), UNARY),
    ("16_function_errors", "MeanJvp"): (DEMO, None, None),  # its jvp is wrong
    ("16_function_errors", "MeanJvpFixed"): (DOUBLE, apply("MeanJvpFixed"), UNARY),
    ("16_function_errors", "ScaleReturnsList"): (DEMO, None, None),  # a list is one value
    ("16_function_errors", "CubeNumpyBackward"): (DEMO, None, None),  # returns a NumPy array
    # Its backward computes in NumPy: no graph for a second derivative (lesson 05).
    ("16_function_errors", "CubeNumpyBackwardFixed"): (
        FIRST_ONLY,
        apply("CubeNumpyBackwardFixed"),
        UNARY,
    ),
    ("16_function_errors", "CubeReturnsList"): (DEMO, None, None),
    ("16_function_errors", "NewCube"): (DOUBLE, apply("NewCube"), UNARY),
    ("16_function_errors", "NewCubeSavesTuple"): (DEMO, None, None),
    ("16_function_errors", "NewCubeKeepsCtx"): (DEMO, None, None),  # forward keeps ctx
    ("16_function_errors", "NewCubeVmap"): (DOUBLE, apply("NewCubeVmap"), UNARY),
    ("16_function_errors", "Exp"): (DOUBLE, apply("Exp"), UNARY),
    ("16_function_errors", "Mul"): (DOUBLE, apply("Mul"), PAIR),
    ("16_function_errors", "MulSavesOne"): (DEMO, None, None),  # backward unpacks two
    ("16_function_errors", "NewPowerKeepsCtx"): (DEMO, None, None),  # forward keeps ctx
    ("16_function_errors", "PowerCloned"): (DOUBLE, apply("PowerCloned", 1), UNARY),
    ("16_function_errors", "Passed"): (DOUBLE, apply("Passed"), UNARY),  # returns x itself
    ("16_function_errors", "DoubleInPlace"): (DOUBLE, apply("DoubleInPlace", clone=True), UNARY),
    ("16_function_errors", "DoubleInPlaceVmap"): (
        DOUBLE,
        apply("DoubleInPlaceVmap", clone=True),
        UNARY,
    ),
    ("17_custom_op_errors", "Cube"): (DOUBLE, apply("Cube"), UNARY),
    # A check in forward that vmap cannot run (its generated rule), and the fix.
    ("17_custom_op_errors", "CubeChecked"): (DOUBLE, apply("CubeChecked"), UNARY),
    ("17_custom_op_errors", "CubeCheckedItem"): (DOUBLE, apply("CubeCheckedItem"), UNARY),
    ("17_custom_op_errors", "CubeCheckedVmap"): (DOUBLE, apply("CubeCheckedVmap"), UNARY),
    ("17_custom_op_errors", "NewCube"): (DOUBLE, apply("NewCube"), UNARY),
    ("17_custom_op_errors", "NewCubeJvp"): (DOUBLE, apply("NewCubeJvp"), UNARY),
    ("17_custom_op_errors", "NumpyCube"): (DOUBLE, apply("NumpyCube"), UNARY),
    ("17_custom_op_errors", "NumpyCubeVmap"): (DOUBLE, apply("NumpyCubeVmap"), UNARY),
    ("17_custom_op_errors", "NumpyCubeBothRules"): (DEMO, None, None),  # vmap refuses it
    ("17_custom_op_errors", "Dropout"): (DEMO, None, None),  # a new random mask at each call
    ("17_custom_op_errors", "NumpyCubeVmapOneReturn"): (DEMO, None, None),  # vmap refuses it
    ("17_custom_op_errors", "CubeNumpyBackward"): (FIRST_ONLY, apply("CubeNumpyBackward"), UNARY),
    ("17_custom_op_errors", "CubeNumpyBackwardPlain"): (DEMO, None, None),  # .numpy() raises
    ("17_custom_op_errors", "CubeNumpyBackwardDetached"): (
        FIRST_ONLY,
        apply("CubeNumpyBackwardDetached"),
        UNARY,
    ),
    ("17_custom_op_errors", "CubeBackwardInNumpy"): (DOUBLE, apply("CubeBackwardInNumpy"), PAIR),
    ("17_custom_op_errors", "CubeNumpyBackwardFixed"): (
        DOUBLE,
        apply("CubeNumpyBackwardFixed"),
        UNARY,
    ),
}

# The exercises' solutions (gallery/solutions), which a reader copies too:
# (file stem, Function) -> how to call it.
SOLUTIONS = {
    ("01_log1p_square", "Log1pSquare"): apply("Log1pSquare"),
    ("02_sigmoid", "Sigmoid"): apply("Sigmoid"),
    ("03_x_exp", "XExp"): apply("XExp"),
    ("04_softplus", "Softplus"): apply("Softplus"),
    ("04_softplus", "SoftplusWithSigmoid"): apply("SoftplusWithSigmoid"),
    ("05_exp_numpy", "ExpNumpy"): apply("ExpNumpy"),
    ("05_exp_numpy", "ExpNumpyGrad"): apply("ExpNumpyGrad"),
}

# Functions written for one rank of input, which they assert.
RANK_ONLY = {
    ("07_custom_layer", "LinearFunction"): [(3, 4), (4,), (5,)],  # a weight that is a vector
    ("07_custom_layer", "LinearFunctionDD"): [(3, 4), (4,), (5,)],
    ("07_custom_layer", "MatMulTransposed"): [(3, 4), (4,)],
    ("11_diagnosing", "LinearFunction"): [(2, 3, 4), (5, 4), (5,)],
}


def inputs(shapes, seed):
    gen = torch.Generator().manual_seed(seed)
    return tuple(
        (torch.rand(shape, generator=gen, dtype=torch.float64) + 0.5).requires_grad_()
        for shape in shapes
    )


def check(fn, expect, all_shapes):
    """Raise AssertionError unless *fn* passes (or, as *expect* says, fails)
    gradcheck and gradgradcheck on every shape."""
    for seed, shapes in enumerate(all_shapes):
        args = inputs(shapes, seed)
        if expect == WRONG:
            assert fails(gradcheck, fn, args), f"{shapes}: gradcheck passes a wrong derivative"
            continue
        assert gradcheck(fn, args), shapes
        if expect == DOUBLE:
            assert gradgradcheck(fn, args), shapes
        else:
            assert fails(gradgradcheck, fn, args), f"{shapes}: gradgradcheck passes"


def fails(checker, fn, args) -> bool:
    try:
        checker(fn, args)
    except GradcheckError:
        return True
    return False


def report(namespace: dict, stem: str) -> dict:
    """What the lesson *stem* left in *namespace* (a kernel's globals): the
    Functions it defined, and for each row of the tables, None if it passes
    its checks, else the traceback. Runs in the kernel; returns JSON."""
    exercise = {name for solution, name in SOLUTIONS if solution[:2] == stem[:2]}
    defined = sorted(
        name
        for name, value in namespace.items()
        if isinstance(value, type)
        and issubclass(value, torch.autograd.Function)
        and value.__module__ == namespace["__name__"]
        and value.__name__ == name  # defined here, not a loop variable
        and name not in exercise  # the notebook ends with the exercise's solution
    )
    checked, rank_only = {}, {}
    for (lesson, name), (expect, build, all_shapes) in TABLE.items():
        if lesson == stem and expect != DEMO:
            checked[name] = outcome(
                lambda b, e, s: check(b(namespace), e, s), build, expect, all_shapes
            )
    for (lesson, name), shapes in RANK_ONLY.items():
        if lesson == stem:
            rank_only[name] = outcome(
                lambda b, s: rejects(b(namespace), s), TABLE[lesson, name][1], shapes
            )
    return {"defined": defined, "checked": checked, "rank_only": rank_only}


def rejects(fn, shapes):
    try:
        fn(*inputs(shapes, 0))
    except AssertionError as exc:
        assert "takes" in str(exc), exc
        return
    raise AssertionError(f"accepts inputs of shapes {shapes}")


def outcome(checks, *args) -> str | None:
    """None if ``checks(*args)`` passes, else its traceback."""
    try:
        checks(*args)
    except Exception:
        return traceback.format_exc()
    return None


def ran(notebook_run, stem: str) -> dict:
    """The report of the kernel that ran lesson *stem*'s notebook."""
    run = notebook_run(next(p for p in LESSONS if p.stem == stem))
    assert run.error is None, f"the notebook stopped (tests/test_notebooks.py):\n{run.error}"
    assert "error" not in run.functions, run.functions.get("error")
    return run.functions


@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem for p in LESSONS])
def test_every_function_is_in_the_table(notebook_run, lesson):
    listed = {name for (stem, name) in TABLE if stem == lesson.stem}
    assert set(ran(notebook_run, lesson.stem)["defined"]) == listed


CHECKED = [(key, spec) for key, spec in TABLE.items() if spec[0] != DEMO]


@pytest.mark.parametrize("key", [k for k, _ in CHECKED], ids=[f"{s}.{n}" for (s, n), _ in CHECKED])
def test_function_on_several_shapes(notebook_run, key):
    problem = ran(notebook_run, key[0])["checked"][key[1]]
    assert problem is None, problem


@pytest.mark.parametrize("key", list(RANK_ONLY), ids=[f"{s}.{n}" for s, n in RANK_ONLY])
def test_a_function_for_one_rank_rejects_the_others(notebook_run, key):
    problem = ran(notebook_run, key[0])["rank_only"][key[1]]
    assert problem is None, problem


@pytest.mark.parametrize("key", list(SOLUTIONS), ids=[f"{s}.{n}" for s, n in SOLUTIONS])
def test_every_solution_is_right_on_several_shapes(key):
    path = LESSONS[0].parent / "solutions" / f"{key[0]}.py"
    fn = SOLUTIONS[key](runpy.run_path(str(path)))
    check(fn, DOUBLE, PAIR if key[1] == "ExpNumpyGrad" else UNARY)


def test_the_table_of_solutions_is_complete():
    folder = LESSONS[0].parent / "solutions"
    found = set()
    for path in folder.glob("[0-9][0-9]_*.py"):
        for name, value in runpy.run_path(str(path)).items():
            if isinstance(value, type) and issubclass(value, torch.autograd.Function):
                if value is not torch.autograd.Function:
                    found.add((path.stem, name))
    assert found == set(SOLUTIONS)


def test_the_summarys_skeleton_runs_and_is_right_on_several_shapes():
    """The Function docs/summary.md offers as a skeleton to start from: its
    code block runs as printed, and its Cube passes both checks on every shape."""
    import re

    page = (LESSONS[0].parent.parent / "docs" / "summary.md").read_text(encoding="utf-8")
    (code,) = re.findall(r"^```python\n(.*?)^```$", page, flags=re.S | re.M)
    skeleton = {}
    exec(compile(code, "docs/summary.md", "exec"), skeleton)  # its own asserts run too
    check(skeleton["Cube"].apply, DOUBLE, UNARY)
