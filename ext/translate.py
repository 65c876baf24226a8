"""Translating a page without parsing each message twice.

Sphinx translates a page in its ``Locale`` transform, which walks the page's
messages twice (first for section titles and glossary terms, then for all the
rest) and, both times, parses each translated message (msgstr) as a little
document of its own. Almost every parse in the first walk is thrown away, and
the second walk parses the very same text again. For the Chinese build that
was about 1300 parses, a second of CPU time.

This extension wraps Sphinx's ``_publish_msgstr`` (a private function of
Sphinx 9.0, whose version is pinned) with two fast paths:

* The parse that the first walk threw away is handed to the second walk,
  which asks for the same text at the same place of the same page. A parse is
  reused only if nothing took its nodes (the first walk keeps the ones it
  uses by moving them into the page), so the page gets the same nodes it
  would have got from a fresh parse.
* A message that holds no markup at all (one line, no character that can
  start inline markup anywhere or a block at its start; see
  ``ext.i18n.PLAIN``) is
  one paragraph of that text in reST and in MyST alike, so it is built
  directly instead of being parsed.

And a third, for every reST parse (a page or a message):

* docutils builds a state machine of fifteen states for each parse, which is
  most of the cost of parsing a one-line message. :class:`RSTParser` keeps
  finished machines and runs the next parse on one of them, as docutils
  itself already does for nested parses (``RSTState.nested_sm_cache``); each
  run starts from a clean slate (``RSTStateMachine.run`` resets the input,
  the position, the shared memo and every state).

``-D fast_translation=0`` turns all three off; ``tests/test_build.py`` builds the
Chinese site that way and requires every page to be byte-identical.
"""

from __future__ import annotations

import docutils.statemachine
from docutils import nodes
from docutils.parsers.rst import states
from sphinx.parsers import RSTParser as SphinxRSTParser

from ext.i18n import is_plain


def plain_paragraph(text: str, source_path: str, source_line: int, settings) -> nodes.Element:
    """What the parser returns for a PLAIN *text*, without running it."""
    from docutils.utils import new_document
    from sphinx.util.docutils import LoggingReporter

    doc = new_document(f"{source_path}:{source_line}:<translated>", settings)
    doc.reporter = LoggingReporter.from_reporter(doc.reporter)
    paragraph = nodes.paragraph(text, text)
    paragraph.source, paragraph.line = doc["source"], 1
    doc += paragraph
    return paragraph


def _unused(patch: nodes.Element) -> bool:
    """True unless the Locale transform has moved this parse into the page."""
    return bool(patch.children) and all(child.parent is patch for child in patch.children)


def fast_publish(original):
    cache: dict[tuple, nodes.Element] = {}
    page = [None]

    def publish_msgstr(source, source_path, source_line, *, settings, **kwargs):
        if source_path != page[0]:  # a new page: nothing to hand over
            cache.clear()
            page[0] = source_path
        key = (source, source_line, id(settings))
        patch = cache.pop(key, None)
        if patch is not None and _unused(patch):
            return patch
        if is_plain(source):
            patch = plain_paragraph(source, source_path, source_line, settings)
        else:
            patch = original(source, source_path, source_line, settings=settings, **kwargs)
        cache[key] = patch
        return patch

    publish_msgstr.original = original
    return publish_msgstr


class RSTParser(SphinxRSTParser):
    """Sphinx's reST parser, running each parse on a state machine kept from
    an earlier one (see the module's docstring)."""

    _idle: list[states.RSTStateMachine] = []

    def parse(self, inputstring, document) -> None:
        if not self._config.fast_translation:
            return super().parse(inputstring, document)
        self.setup_parse(inputstring, document)
        if self._idle:
            machine = self._idle.pop()
        else:
            machine = states.RSTStateMachine(
                state_classes=self.state_classes,
                initial_state=self.initial_state,
                debug=document.reporter.debug_flag,
            )
        self.statemachine = machine
        if isinstance(inputstring, str):
            lines = docutils.statemachine.string2lines(
                inputstring, tab_width=document.settings.tab_width, convert_whitespace=True
            )
            inputlines = docutils.statemachine.StringList(lines, document.current_source)
        else:
            inputlines = inputstring
        self.decorate(inputlines)
        try:
            machine.run(inputlines, document, inliner=self.inliner)
        finally:
            machine.observers = []  # run() clears them, unless it raised
            machine.node = machine.memo = None
            if machine.debug == document.reporter.debug_flag:
                self._idle.append(machine)
        self.finish_parse()


def on_config_inited(app, config) -> None:
    import sphinx.transforms.i18n as sphinx_i18n

    current = sphinx_i18n._publish_msgstr
    original = getattr(current, "original", current)
    sphinx_i18n._publish_msgstr = fast_publish(original) if config.fast_translation else original


def setup(app):
    app.add_config_value("fast_translation", True, "", types=[bool])
    app.add_source_parser(RSTParser, override=True)
    app.connect("config-inited", on_config_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
