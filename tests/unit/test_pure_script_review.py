"""The exported script's text, without a jail (issue 20, item 2): launcher/files/script.py and
launcher/files/reviewable.py.

What Python runs is what the reader sees (hidden characters escaped with the same value,
non-ASCII names renamed consistently, long lines flagged), what cannot be shown faithfully is
refused with the call and the code point, the guard is the file's first statement, and
``split``/``parse_import`` read back exactly what the launcher wrote.
"""
from __future__ import annotations

import ast
import re
import warnings

import pytest

from launcher.files import reviewable, script
from launcher.session.history import Entry, History


def build(*codes, notes=None):
    items = [Entry(i, c, (notes or {}).get(i)) for i, c in enumerate(codes, 1)]
    return script.build(items, "s-test")


def run(text: str) -> dict:
    """Run a script's calls (test-made, harmless code) in one namespace, guard skipped."""
    ns: dict = {}
    for c in script.split(text):
        exec(compile(c["code"], "<call>", "exec", dont_inherit=True), ns)
    ns.pop("__builtins__", None)
    return ns


def test_hidden_characters_in_strings_keep_their_value():
    code = ("s1 = 'a\u202eb\u2066c'\ns2 = \"\\\u200b\"\ns3 = '''x\n\x1b[2Jy\u00a0'''\nb1 = b'\x07\\\x1b'\n"
            "s4 = u'\ufeff\U000e0041'  # \u202e hidden \x1b[31m\n")
    text, changes = build(code)
    body = text.split("# --- call 1\n", 1)[1]
    assert body.isascii() and not any(reviewable.hidden(c) for c in body if c != "\n"), body
    want: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # '\<U+200B>': an unknown escape, kept as is
        exec(compile(code, "<orig>", "exec", dont_inherit=True), want)
        got = run(text)
    for k in ("s1", "s2", "s3", "s4", "b1"):
        assert got[k] == want[k], k
    assert "# \\u202e hidden \\x1b[31m" in body
    assert changes == ["call 1: hidden characters escaped in 6 comment(s)/string(s)"]


def test_non_ascii_names_are_renamed_consistently_across_calls():
    # U+3164 HANGUL FILLER (invisible), Cyrillic а/р (look Latin), fullwidth ｘ (NFKC: x), a real word
    text, changes = build("\u3164 = 5\n\u0440\u0430rt = 2\n", "x = 1\ny = \uff58 + \u3164 + \u0440\u0430rt\n",
                          "pi\u00e8ce = y * 2\n")
    assert text.isascii()
    ns = run(text)
    assert ns["y"] == 8 and ns["pi_u00e8ce"] == 16
    assert "_u0440_u0430rt = 2" in text and "y = x + _u1160 + _u0440_u0430rt" in text
    assert any("'pi\\xe8ce' written as pi_u00e8ce" in c for c in changes), changes
    assert any("'\\u3164' written as _u1160" in c for c in changes), changes
    # a generated name never takes one the script uses
    text, _ = build("_u0430 = 1\n\u0430 = 2\n")
    assert run(text) == {"_u0430": 1, "_u0430_": 2}


@pytest.mark.parametrize("code,why", [
    ("s = r'\u202e'\n", "a raw string holds U+202E RIGHT-TO-LEFT OVERRIDE"),
    ("s = f'{1}\u200b'\n", "an f-string holds U+200B ZERO WIDTH SPACE"),
    ("s = f'{\u0430}'\n", "an f-string uses a non-ASCII name"),
    ("from __future__ import annotations\n", "`from __future__ import ...` must open a file"),
    ("x = 1; from  __future__ import annotations\n", "`from __future__ import ...` must open a file"),
    ("x = 1\n\x0cy = 2\n", "U+000C a control character between tokens"),
    ("x = 1 \u200b\n", "U+200B ZERO WIDTH SPACE"),
    ("x = '''\n", "Python cannot read"),
    ("s = '''\n# --- call 9\n'''\n", "reads like the launcher's '# --- call' marker"),
    ("b = b'\u00e9'\n", "a bytes literal holds a non-ASCII character"),
])
def test_what_cannot_be_shown_faithfully_is_refused(code, why):
    with pytest.raises(reviewable.ScriptRefused) as e:
        build("ok = 1\n", code)
    assert str(e.value).startswith("call 2") and why in str(e.value), e.value


def test_long_lines_are_flagged_never_silent():
    far = "x = 1" + " " * 400 + "; harm = 'hidden far right'\n"
    inside = "t = (1,\n     '" + "q" * 200 + "')\n"
    text, changes = build("a = 1\n", far, inside)
    lines = text.split("\n")
    i = lines.index(far.rstrip("\n"))
    assert lines[i - 1] == f"{reviewable.FLAG} the next line is {len(far) - 1} columns long: read all of it"
    j = lines.index("t = (1,")
    assert lines[j - 1].startswith(f"{reviewable.FLAG} line 2 of the statement below is 208 columns long")
    assert changes == [f"call 2, line 1: {len(far) - 1} columns long (over 160), flagged",
                       "call 3, line 2: 208 columns long (over 160), flagged"]
    assert run(text)["harm"] == "hidden far right" and run(text)["t"][1] == "q" * 200
    assert all(len(ln) <= reviewable.MAX_COLUMNS for ln in lines if not ln.startswith(("x = 1 ", "     'q")))


def test_marker_comments_of_the_session_cannot_start_a_call():
    text, changes = build("a = 1\n# --- call 7: import_file: x.step\nb = 2\n")
    assert [c["call"] for c in script.split(text)] == [1]
    assert "#  --- call 7" in text and "indented by one space" in changes[0]


def test_the_guard_is_the_first_statement_and_nothing_precedes_it():
    text, _ = build("a = 1\n", "import os\nos.system('echo pwned')\n", notes={2: "import_file: x\u202e\n.step"})
    tree = ast.parse(text)
    first = tree.body[0]
    assert isinstance(first, ast.Raise) and first.exc.func.id == "SystemExit"
    assert "untrusted code written by an AI session" in first.exc.args[0].value
    assert "build123d-launcher run FILE" in first.exc.args[0].value
    head = text.split("\n")
    assert head.index(script.GUARD) == len([ln for ln in head[:head.index(script.GUARD)] if ln.startswith("#")])
    coding = re.compile(r"^[ \t\f]*#.*?coding[:=]")
    assert not coding.match(head[0]) and not coding.match(head[1])
    assert "# --- call 2: import_file: x\\u202e\\n.step" in text
    with pytest.raises(SystemExit) as e:
        exec(compile(text, "design.py", "exec", dont_inherit=True), {})
    assert "untrusted" in str(e.value)


def test_split_takes_only_the_launchers_own_guard():
    text, _ = build("a = 1\n", "b = a + 1\n")
    assert [(c["call"], c["code"]) for c in script.split(text)] == [(1, "a = 1\n"), (2, "b = a + 1\n")]
    assert script.split("a = 1\n") is None
    assert script.split(text.replace(script.GUARD, script.GUARD + " ")) is None
    assert script.split(text.replace(script.GUARD, "import os\n" + script.GUARD)) is None
    extra = text.replace(script.GUARD + "\n", script.GUARD + "\nimport math\n")
    assert script.split(extra)[0]["call"] == 0 and "import math" in script.split(extra)[0]["code"]


@pytest.mark.parametrize("fmt", ["step", "brep", "svg", "stl", "3mf", "dxf"])
def test_import_code_reads_back(fmt):
    name = f"sub dir/p\u00e9'\"\u202e.{fmt}"
    code = script.import_code("part", fmt, name)
    assert script.parse_import(code) == ("part", fmt, name)
    text, _ = build(code, notes={1: "import_file: p"})
    assert "INPUT_DIR = " in text
    assert script.parse_import(script.split(text)[0]["code"]) == ("part", fmt, name)
    assert script.parse_import(code.replace("part", "part2", 1) + "\nimport os\n") is None
    assert script.parse_import("x = import_step(INPUT_DIR + '/a.step'); import os") is None


def test_history_snapshots_are_copies():
    h = History()
    assert h.record("a = 1") == 1
    h.save("s")
    assert h.record("b = 2", "n") == 2
    h.restore("s")
    assert [tuple(e) for e in h.entries()] == [(1, "a = 1", None)]
    assert h.record("c = 3") == 2
    h.lose_head()
    assert h.entries() == () and h.next_call() == 1 and h.complete
    h.restore("s")
    assert [e.code for e in h.entries()] == ["a = 1"]
    h.delete("s")
    h.restore("s")
    assert h.entries() == ()
    with pytest.raises(TypeError):
        h.record(b"x")


def test_history_is_bounded():
    """Past MAX_BYTES recorded in all, calls are counted and no code is kept (the script says so)."""
    from launcher.session import history
    h = History()
    big = "#" * (history.MAX_BYTES // 4)
    for i in range(1, 4):
        assert h.record(big) == i
    h.save("s")
    assert h.record(big) == 4 and h.complete and len(h.entries()) == 4
    assert h.record("x = 1") == 5 and not h.complete and h.entries() == ()
    assert h.record("y = 1") == 6 and not h.complete
    h.restore("s")
    assert h.complete and len(h.entries()) == 3
    assert h.record("z = 1") == 4 and not h.complete  # what the session recorded in all counts
