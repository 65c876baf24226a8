"""How each lesson proves its exercise on every build (a hidden cell calls this).

This folder holds the solutions to the exercises of lessons 01-05, one file
each, named after its lesson. sphinx-gallery does not treat it as a gallery (it
has no README); ext/exercises.py shows each solution under its lesson.

``prove(check, name)`` loads Function ``name`` from the solution of the lesson
that defines ``check`` (``solutions/NN_*.py`` for lesson ``NN_*.py``) and
requires ``check`` to accept it. Then it requires
``check`` to reject the same Function with its backward marked
``once_differentiable`` (right first derivative, no second one), so a check
that tested too little would fail the build too.
"""

import runpy
from pathlib import Path

from torch.autograd.function import once_differentiable
from torch.autograd.gradcheck import GradcheckError


def prove(check, name):
    lesson = Path(check.__code__.co_filename)
    (file,) = Path(__file__).parent.glob(lesson.name[:3] + "*.py")
    solution = runpy.run_path(str(file))[name]
    check(solution)
    broken = type(
        name, (solution,), {"backward": staticmethod(once_differentiable(solution.backward))}
    )
    try:
        check(broken)
    except (AssertionError, GradcheckError, RuntimeError):
        return solution
    raise AssertionError(f"the check of {lesson.name} accepts {name} without a second derivative")
