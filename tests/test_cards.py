"""Unit tests of ext/lessons/cards.py: sphinx-gallery's raw-HTML cards on the lessons'
index become ``lesson-card`` directives a translator can translate, text
without cards is left alone, and a card markup the code does not know stops
the build; a card's picture is decorative, and a drawn one holds no words.
"""

from __future__ import annotations

import re

import pytest
from docutils.core import publish_doctree
from docutils.parsers.rst import directives

from ext import ROOT
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


def test_a_cards_picture_is_decorative_and_holds_no_words():
    """A card shows its picture with ``alt=""``: the card's title and tooltip,
    translated, name the lesson. A word in a drawn thumbnail would reach no
    reader of the card and stay in English for the Chinese edition (both
    languages share the files), so the drawings have no <title> or <desc>
    (drawn code, such as ``grad`` or ``op``, reads the same in both)."""
    directives.register_directive("lesson-card", cards.LessonCard)
    source = ".. lesson-card:: /lessons/01_a\n   :thumbnail: /a.svg\n\n   Title\n\n   Tooltip\n"
    doctree = publish_doctree(source, settings_overrides={"report_level": 5})
    (image,) = [n for n in doctree.findall() if n.tagname == "image"]
    assert image["alt"] == ""
    drawings = [*(ROOT / "docs" / "_static" / "thumbs").glob("*.svg")]
    drawings.append(ROOT / "docs" / "_static" / "lesson-thumb.svg")
    worded = [p.name for p in drawings if re.search(r"<(title|desc)\b", p.read_text())]
    assert len(drawings) > 1 and not worded, worded
