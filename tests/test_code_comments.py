"""Unit tests of ext/translation/code_comments.py: a code block's messages are its comments
and docstrings (never tool comments), and a translation changes only those
texts, keeping the English wherever it would break the code.
"""

from __future__ import annotations

CODE = '''\
class Cube(torch.autograd.Function):
    """x**3, saving the input."""

    @staticmethod
    def forward(ctx, x):  # noqa: D102
        ctx.save_for_backward(x)  # an input: safe to save
        return x**3

    def backward(ctx, g):
        """Two lines,
        one message.
        """
        return g  # the mistake
'''


def test_code_messages_are_comments_and_docstrings_never_tool_comments():
    from ext.translation.code_comments import messages

    assert messages(CODE) == [
        "x**3, saving the input.",
        "an input: safe to save",
        "Two lines,\none message.",  # without the indentation of its second line
        "the mistake",
    ]
    assert messages("x = (") == []  # not Python: nothing to translate


def test_translated_code_changes_only_the_texts_it_translates():
    from ext.translation.code_comments import messages, translate

    table = {"x**3, saving the input.": "x**3，保存输入。", "the mistake": "错误所在"}
    out = translate(CODE, lambda text: table.get(text, text))
    assert out == CODE.replace("x**3, saving the input.", "x**3，保存输入。").replace(
        "# the mistake", "# 错误所在"
    )
    # Found again in the translated code, where columns of wide characters
    # count differently for ast (bytes) and tokenize (characters).
    assert messages(out) == [
        "x**3，保存输入。",
        "an input: safe to save",
        "Two lines,\none message.",
        "错误所在",
    ]
    assert translate(out, lambda text: text) == out


def test_a_docstring_of_several_lines_takes_its_indentation_back():
    from ext.translation.code_comments import messages, translate

    out = translate(CODE, lambda text: '两行，\n\n一条"消息"。' if text.startswith("Two") else text)
    # The translator's line breaks, each line indented as the docstring, a
    # blank line left blank, and the closing quotes where they stood.
    # A lone quote inside triple quotes is fine.
    assert '        """两行，\n\n        一条"消息"。\n        """\n' in out
    assert messages(out)[2] == '两行，\n\n一条"消息"。'
    compile(out, "out.py", "exec")


def test_a_translation_that_would_break_the_code_keeps_the_english():
    from ext.translation.code_comments import translate

    for bad in ["two\nlines", 'closes """ early', 'ends in a quote"', "ends in a backslash\\"]:
        out = translate(CODE, lambda text, bad=bad: bad if text.startswith("x**3") else text)
        assert '"""x**3, saving the input."""' in out, bad
    out = translate(CODE, lambda text: "two\nlines" if text == "the mistake" else text)
    assert "# the mistake" in out
    out = translate(CODE, lambda text: 'closes """ early' if text.startswith("Two") else text)
    assert "Two lines,\n        one message." in out


def test_a_comment_with_no_word_is_code_not_a_message():
    """A shape or a formula in a comment would be translated as itself, which
    makes Sphinx leave the whole block's comments in English (see the module)."""
    from ext.translation.code_comments import messages

    code = "x = torch.randn(6, 2, 4)  # (T, N, C)\ny = x**2  # 2x, the derivative\nz = 1  # x**2\n"
    assert messages(code) == ["2x, the derivative"]
