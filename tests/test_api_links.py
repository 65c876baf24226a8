"""Unit tests of ext/lessons/api_links.py's offline links: the PyTorch inventory it
reads is written from the hand-kept list (``make inventory``), and
sphinx-gallery still has the code-link transform the extension registers.
"""

from __future__ import annotations

import re

from ext import ROOT


def test_the_inventory_is_written_from_the_list():
    """`make inventory` was run after the last change to pytorch.txt."""
    import sphobjinv

    folder = ROOT / "docs" / "_inventories"
    listed = sphobjinv.Inventory(plaintext=(folder / "pytorch.txt").read_bytes())
    written = sphobjinv.Inventory(folder / "pytorch.inv")
    assert [o.as_str for o in written.objects] == [o.as_str for o in listed.objects]
    names = [o.name for o in listed.objects]
    assert len(names) == len(set(names))
    for obj in listed.objects:
        assert obj.domain == "py" and not obj.uri.startswith(("http", "/")), obj.as_str
        assert re.fullmatch(r"(generated/[\w.]+\.html#\$?[\w.]*|[a-z]+\.html(#\$)?)", obj.uri), (
            obj.uri
        )
    for name in [
        "torch.autograd.Function",
        "torch.autograd.gradcheck",
        "torch.autograd.gradgradcheck",
        "torch.autograd.function.FunctionCtx.save_for_backward",
        "torch.autograd.function.once_differentiable",
        "torch.func.grad",
        "torch.library.custom_op",
    ]:
        assert name in names, name


def test_sphinx_gallery_still_has_the_code_link_transform():
    """ext/lessons/api_links.py registers sphinx-gallery's own code-link transform:
    when this fails, sphinx-gallery moved it (see ext/lessons/api_links.py)."""
    from sphinx_gallery import _doctree_links

    assert callable(_doctree_links.setup_doctree_links)
    assert _doctree_links.CodeLinksTransform.formats == ("html",)
