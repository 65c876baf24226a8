"""Unit tests of ext/pages/mathml.py: docutils' converter turns a formula into
MathML, and the extension has its visitors for inline and displayed math.
"""

from __future__ import annotations


def test_formulas_become_mathml():
    from docutils.utils.math import latex2mathml

    from ext.pages import mathml

    assert "<math" in latex2mathml.tex2mathml(r"\frac{\partial y}{\partial x}")
    assert callable(mathml.visit_math) and callable(mathml.visit_displaymath)
