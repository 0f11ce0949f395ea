"""The docs stay true to the code: README's generated tables, links inside the repository, sizes.

No jail: reads the tool declarations, profiles/default.toml and the Markdown files.
``python docs/tables.py --write`` rewrites the README tables when a test here says they differ.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import re
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("docs_tables", REPO / "docs" / "tables.py")
tables = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tables)

README = REPO / "README.md"
DOCS = [README, REPO / "SECURITY.md", *sorted((REPO / "docs").rglob("*.md"))]


def _block(text: str, name: str) -> str:
    m = re.search(rf"<!-- {name}:begin -->\n(.*?)\n<!-- {name}:end -->", text, re.S)
    assert m, f"README.md has no {name} block"
    return m.group(1)


def test_readme_limits_table_is_generated_from_default_toml():
    want = tables.limits_table(tables.load_default())
    assert _block(README.read_text(encoding="utf-8"), "limits") == want, \
        "README.md's limits table is out of date: run python docs/tables.py --write"


def test_readme_tools_table_is_generated_from_the_declarations():
    want = tables.tools_table(tables.load_tools(), tables.load_default())
    assert _block(README.read_text(encoding="utf-8"), "tools") == want, \
        "README.md's tools table is out of date: run python docs/tables.py --write"


def test_every_limit_has_a_meaning_and_every_meaning_a_limit():
    fields = {f.name for f in dataclasses.fields(tables.load_default().limits)}
    assert set(tables.LIMIT_MEANINGS) == fields


def test_limits_table_shows_the_values_of_default_toml():
    limits = tomllib.loads((REPO / "profiles" / "default.toml").read_text())["limits"]
    rows = {r.split("|")[1].strip(" `"): r.split("|")[2].strip()
            for r in tables.limits_table(tables.load_default()).splitlines()[2:]}
    assert set(rows) == set(limits)
    assert rows["timeout_s"] == f"{limits['timeout_s']:g} s"
    assert rows["memory_mb"] == f"{limits['memory_mb']} MiB"
    assert rows["max_output_bytes"] == f"{limits['max_output_bytes'] // 1024} KiB"
    assert rows["max_snapshots"] == str(limits["max_snapshots"])


@pytest.mark.parametrize("text, want", [
    ("Run it. Then more.", "Run it."),
    ("Check it (e.g. several solids). Next.", "Check it (e.g. several solids)."),
    ("api(name='Part.edges') gives it; api() the versions. Use it.", "api(name='Part.edges') gives it; api() the versions."),
    ("No full stop", "No full stop"),
    ("Two\n lines. Next", "Two lines."),
])
def test_first_sentence(text, want):
    assert tables.first_sentence(text) == want


def test_fill_replaces_only_the_marked_block():
    text = "a\n<!-- x:begin -->\nold\n<!-- x:end -->\nb | c\n"
    assert tables.fill(text, {"x": "new | 1"}) == "a\n<!-- x:begin -->\nnew | 1\n<!-- x:end -->\nb | c\n"
    with pytest.raises(SystemExit):
        tables.fill("no block", {"x": "new"})


def test_cells_escape_pipes_and_newlines():
    assert tables._cell("a | b\nc") == "a \\| b c"


# ------------------------------------------------------------------ links and sizes
_LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    s = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", s).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return {_slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", text, re.M)}


def _links(path: Path):
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    return _LINK.findall(text)


def broken_links(doc: Path, root: Path = REPO) -> list[str]:
    """The relative links of ``doc`` whose file (under ``root``) or heading anchor does not exist."""
    bad = []
    for target in _links(doc):
        if re.match(r"[a-z]+:", target):
            continue  # not a path in the repository
        file, _, anchor = target.partition("#")
        dest = (doc.parent / file).resolve() if file else doc
        if not dest.exists() or root not in (dest, *dest.parents):
            bad.append(f"{target}: no such file in the repository")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            bad.append(f"{target}: no heading with that anchor")
    return bad


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_links_inside_the_repository_resolve(doc):
    bad = broken_links(doc)
    assert not bad, f"{doc.relative_to(REPO)}: " + "; ".join(bad)


def test_link_checker_finds_broken_links(tmp_path):
    (tmp_path / "other.md").write_text("# The `Other` page, v2\n")
    doc = tmp_path / "x.md"
    doc.write_text("# Top\n[ok](#top) [ok](other.md#the-other-page-v2) [web](https://example.org/)\n"
                   "[gone](missing.md) [bad](#nowhere) [bad](other.md#top) [out](../x.md)\n"
                   "`[code](missing.md)` ![image](missing.png)\n")
    assert broken_links(doc, tmp_path) == ["missing.md: no such file in the repository",
                                           "#nowhere: no heading with that anchor",
                                           "other.md#top: no heading with that anchor",
                                           "../x.md: no such file in the repository"]


@pytest.mark.parametrize("name, cap", [("README.md", 14_000), ("SECURITY.md", 22_000)])
def test_top_level_docs_stay_short(name, cap):
    size = len((REPO / name).read_bytes())
    assert size <= cap, f"{name} is {size} bytes (at most {cap}: move detail to docs/)"
