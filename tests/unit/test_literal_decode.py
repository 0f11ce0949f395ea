"""launcher.files.literal decodes string tokens as Python does, without ``ast`` (not thread-safe on 3.11)."""
import ast
import io
import threading
import tokenize

import pytest

from launcher.files.literal import string_literal

SOURCES = [
    "'a.step'", '"a.step"', "'''a.step'''", '"""multi\nline"""', "''", '""', "r'\\d\\n'", "R'x\\'y'",
    "u'é.step'", "'caf\\xe9'", "'\\u00e9\\U0001F600'", "'\\N{LATIN SMALL LETTER E WITH ACUTE}'",
    "'tab\\there'", "'\\101\\7\\0'", "'\\\\server\\\\share'", "'bad\\q escape'", "'\\'quoted\\''",
    "'line\\\ncontinued'", "'\\a\\b\\f\\n\\r\\t\\v'", "'日本.step'", "'\\\\N{not}'", "'x\\8'",
]


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::SyntaxWarning")
@pytest.mark.parametrize("src", SOURCES)
def test_matches_literal_eval(src):
    tok = next(t for t in tokenize.generate_tokens(io.StringIO(src).readline) if t.type == tokenize.STRING)
    assert string_literal(tok.string) == ast.literal_eval(tok.string)


@pytest.mark.parametrize("src", ["b'a.step'", "f'{x}.step'", "rb'x'", "Rb'x'", "'\\N{NO SUCH NAME}'", "'unclosed",
                                 "x", "'\\U00110000'"])
def test_refuses_what_is_not_a_plain_string(src):
    assert string_literal(src) is None


def test_decoding_from_many_threads_loses_nothing():
    """The bug this module exists for: concurrent ast.literal_eval dropped names (CI, 199 of 200)."""
    toks = [f"'p{i}.step'" for i in range(500)]
    bad = []

    def work():
        for _ in range(10):
            got = [string_literal(t) for t in toks]
            if got != [f"p{i}.step" for i in range(500)]:
                bad.append(got)
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not bad
