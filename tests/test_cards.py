"""Unit tests of ext/lessons/cards.py: sphinx-gallery's raw-HTML cards on the lessons'
index become ``lesson-card`` directives a translator can translate, text
without cards is left alone, and a card markup the code does not know stops
the build.
"""

from __future__ import annotations

import pytest

from ext.lessons import cards

CARD = """
.. raw:: html

    <div class="sphx-glr-thumbcontainer" tooltip="Save the &quot;inputs&quot;.">

.. only:: html

  .. image:: /lessons/images/thumb/sphx_glr_01_a_thumb.svg
    :alt:

  :doc:`/lessons/01_a`

.. raw:: html

      <div class="sphx-glr-thumbnail-title">Pattern 1</div>
    </div>

"""


def test_cards_become_translatable_directives():
    out = cards.translatable_cards("intro\n" + CARD + "outro\n")
    assert "raw:: html" not in out.split("outro")[0].split("intro")[1]
    assert ".. lesson-card:: /lessons/01_a" in out
    assert ":thumbnail: /lessons/images/thumb/sphx_glr_01_a_thumb.svg" in out
    assert '   Pattern 1\n\n   Save the "inputs".\n' in out


def test_text_without_cards_is_unchanged():
    assert cards.translatable_cards("no cards here\n") == "no cards here\n"


def test_an_unknown_card_markup_stops_the_build():
    from sphinx.errors import ExtensionError

    source = ['.. raw:: html\n\n    <div class="sphx-glr-thumbcontainer" new-attribute="x">\n']
    with pytest.raises(ExtensionError, match="ext/lessons/cards.py"):
        cards.on_source_read(None, "lessons/index", source)
