"""Names of PyTorch's API link to PyTorch's documentation, offline.

The build has no network, so the links come from a local inventory: Sphinx's
intersphinx reads ``docs/_inventories/pytorch.inv`` (conf.py), which
``make inventory`` writes with sphobjinv from the list kept by hand beside it,
``pytorch.txt``, one line per name with its page on docs.pytorch.org. Then:

* in the prose, a role such as ``:func:`~torch.autograd.gradcheck``` (reST)
  or ``{py:func}`torch.autograd.gradcheck``` (MyST) becomes a link, and with
  ``nitpicky`` a name missing from the list fails the build;
* in the lessons' code, sphinx-gallery links every name that the list has,
  with its own post-transform, which reads the names each code block uses
  from the ``.codeobj.json`` files of the lesson run and resolves them
  through the same inventory.

Upstream limitation: sphinx-gallery registers that transform only when its
whole generator (``sphinx_gallery.gen_gallery``) is loaded, which would
generate the gallery again in every language build (see ext/lessons/gallery.py). So
the transform is registered here, from sphinx-gallery's module that holds it
(``sphinx_gallery._doctree_links``, not a documented interface);
``tests/test_api_links.py`` fails when that module changes, and
``tests/test_build.py`` when a lesson's code has no link.

The list holds what the lessons call and name, not the types of their
variables (``torch.Tensor``, ``nn.Parameter``): sphinx-gallery would link
every tensor variable of every block to the same page.
"""

from __future__ import annotations


def complete_gallery_conf(app, config) -> None:
    """The transform reads sphinx-gallery's configuration; give it the
    defaults that only sphinx-gallery's generator would fill in."""
    from sphinx_gallery.gen_gallery import DEFAULT_GALLERY_CONF

    config.sphinx_gallery_conf = {
        "prefer_full_module": DEFAULT_GALLERY_CONF["prefer_full_module"],
        **config.sphinx_gallery_conf,
    }


def setup(app):
    from sphinx_gallery._doctree_links import setup_doctree_links

    # conf.py's sphinx_gallery_conf, read by the transform; "" rebuilds nothing.
    app.add_config_value("sphinx_gallery_conf", {}, "", types=[dict])
    app.connect("config-inited", complete_gallery_conf)
    setup_doctree_links(app)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
