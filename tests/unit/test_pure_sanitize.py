"""launcher/replies/sanitize.py directly: text from the jail is made safe to show, whatever it is."""
from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from launcher.replies import sanitize

PROPS = settings(max_examples=300, deadline=None, database=None)

BIDI = {0x061C, 0x200E, 0x200F, 0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}
#: every code point the module promises to keep out, plus the whitespace each ``keep`` mode drops
TRICKY = "".join(map(chr, [*range(0x00, 0x20), *range(0x7F, 0xA0), *BIDI, 0xD800, 0xDBFF, 0xDC00, 0xDFFF,
                           0x200B, 0xFEFF, 0x5C, 0x1B]))
# any code point (lone surrogates included, as a JSON "\ud800" escape decodes to one), dense in tricky ones
ANY_TEXT = st.text(st.characters(exclude_categories=()) | st.sampled_from(TRICKY), max_size=400)
KEEPS = st.sampled_from(["\n\t", "\n", ""])
CUT = " [cut]"


def bad_in(s: str, keep: str) -> list[str]:
    """Characters of ``s`` that must never reach a reply, a log line or a terminal."""
    return [c for c in s
            if (ord(c) < 0x20 and c not in keep) or 0x7F <= ord(c) <= 0x9F or ord(c) in BIDI
            or 0xD800 <= ord(c) <= 0xDFFF]


@PROPS
@given(ANY_TEXT, st.none() | st.integers(0, 500), KEEPS)
@example("\x1b[31mred\x1b]0;title\x07\x9b2J", None, "\n\t")
@example("a\u202eexe.txt\u2028next", 5, "")
@example("\ud800" * 50, 7, "\n")
def test_text_never_returns_an_unsafe_character(s, cap, keep):
    out = sanitize.text(s, cap, keep=keep)
    assert isinstance(out, str)
    assert bad_in(out, keep) == []
    assert not sanitize.unsafe(out, keep)
    out.encode("utf-8")  # no lone surrogate left: the reply encoder cannot break
    if cap is not None:
        assert len(out) <= cap + len(CUT)
        if len(out) > cap:
            assert out.endswith(CUT)


ESCAPE = re.compile(r"\\(?:x[0-9a-f]{2}|u[0-9a-f]{4}|[nrt])")


@PROPS
@given(ANY_TEXT, KEEPS)
def test_text_changes_only_what_is_unsafe(s, keep):
    out = sanitize.text(s, None, keep=keep)
    assert sanitize.unsafe(s, keep) == bool(bad_in(s, keep))
    if not bad_in(s, keep):
        assert out == s
    elif "\\" not in s:  # then every backslash in ``out`` starts an escape made here
        assert ESCAPE.sub("", out) == "".join(c for c in s if not bad_in(c, keep))


@PROPS
@given(ANY_TEXT, st.integers(0, 60), KEEPS)
@example("0\x1f", 4, "\n\t")  # was "0\\x [cut]": a cap under 6 searched from the wrong end
def test_a_cut_never_ends_in_half_an_escape(s, cap, keep):
    out = sanitize.text(s, cap, keep=keep)
    body = out[:-len(CUT)] if out.endswith(CUT) and len(out) > cap else out
    if "\\" not in s:  # only then is every backslash the start of an escape made here
        assert "\\" not in ESCAPE.sub("", body), body


def test_a_short_cap_drops_the_whole_escape():
    assert sanitize.text("0\x1f", 4) == "0 [cut]"
    assert sanitize.text("ab\u202e", 5) == "ab [cut]"


@pytest.mark.parametrize("raw, shown", [
    ("\x1b[2J", "\\x1b[2J"), ("\x9b31m", "\\x9b31m"), ("\r", "\\r"), ("\x00", "\\x00"), ("\x7f", "\\x7f"),
    ("\u202e", "\\u202e"), ("\u2066", "\\u2066"), ("\u2028", "\\u2028"), ("\ud800", "\\ud800"),
])
def test_escapes_are_visible(raw, shown):
    assert sanitize.text("a" + raw + "b") == "a" + shown + "b"


def test_keep_selects_the_whitespace_left_alone():
    assert sanitize.text("a\nb\tc") == "a\nb\tc"
    assert sanitize.text("a\nb\tc", keep="\n") == "a\nb\\tc"
    assert sanitize.text("a\nb\tc", keep="") == "a\\nb\\tc"
    with pytest.raises(ValueError):
        sanitize.text("x", keep="\r")
    with pytest.raises(ValueError):
        sanitize.unsafe("x", keep="\t")


@pytest.mark.parametrize("value", [None, 3, 2.5, b"bytes", ["a"], {"a": 1}, True])
def test_text_of_a_non_string_is_empty(value):
    assert sanitize.text(value) == ""
    assert sanitize.text(value, 10, keep="") == ""


# ------------------------------------------------------------------ log_token
TOKEN = re.compile(r"[A-Za-z0-9_.:\\-]+")
_ESC = re.compile(r"\\x([0-9a-f]{2})|\\u([0-9a-f]{4})|\\U([0-9a-f]{8})")


def untoken(t: str) -> str:
    return _ESC.sub(lambda m: chr(int(next(g for g in m.groups() if g), 16)), t)


@PROPS
@given(ANY_TEXT | st.sampled_from(["a b=c", "k=v\nk2=v2", "x\\x41", "é", "\U0001F600", "-"]),
       st.integers(1, 100))
def test_log_token_is_one_word_of_its_alphabet_and_loses_nothing(s, cap):
    t = sanitize.log_token(s, cap)
    assert TOKEN.fullmatch(t), t  # no space, '=', quote, newline or control: no new field or record
    if s:
        assert untoken(t) == s[:cap]  # escapes are unambiguous ('\\' itself is escaped)
        if re.fullmatch(r"[A-Za-z0-9_.:\-]*", s[:cap]):
            assert t == s[:cap]
    else:
        assert t == "-"


@pytest.mark.parametrize("value", [None, "", 5, b"x", ["a"]])
def test_log_token_of_nothing_is_a_dash(value):
    assert sanitize.log_token(value) == "-"
