"""Unit tests of ext/pages/a11y.py: blocks of code and formulas that scroll sideways
become focusable, so a reader with a keyboard can scroll them, and a page
already repaired is left as it is.
"""

from __future__ import annotations


def test_scrollable_blocks_become_focusable():
    from ext.pages.a11y import focusable_scrollers

    body = '<pre>x</pre><div class="math-wrapper docutils container"><math/></div><p>t</p>'
    out = focusable_scrollers(body)
    assert out.count('tabindex="0"') == 2
    assert focusable_scrollers(out) == out
