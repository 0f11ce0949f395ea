"""The scratch directory's tree (jail/cad/scratch.py): names, caps, inputs, the result. Pure, no jail."""
from __future__ import annotations

import errno

import pytest

from jail.cad import scratch
from jail.cad.scratch import Scratch


def test_names_resolve_under_the_root():
    s = Scratch()
    assert s.resolve("a.step") == "a.step"
    assert s.resolve("/scratch/a/b.step") == "a/b.step"
    assert s.resolve("a/./c/../b.step") == "a/b.step"
    assert s.resolve(".") == "" and s.resolve("/scratch") == ""
    assert s.resolve(b"x.stl") == "x.stl"


@pytest.mark.parametrize("name", ["../x", "../../etc/passwd", "/etc/passwd", "/scratchy/x", "a/../../x",
                                  "/tmp/x.step", "/scratch/../home/secret"])
def test_names_outside_the_root_are_refused_with_what_the_directory_is(name):
    with pytest.raises(PermissionError) as ei:
        Scratch().resolve(name)
    msg = str(ei.value)
    assert "outside the scratch directory" in msg and "/scratch" in msg and "delivered" in msg


@pytest.mark.parametrize("name", ["a\nb", "a\x1b[31mb", "evil\u202etxt.step", "a\u2066b", "zero\u200bwidth",
                                  "a\udcffb", "a\u2028b", "a\ue000b", "x" * 201, "d/" + "y" * 256])
def test_names_for_the_human_are_refused(name):
    with pytest.raises(OSError) as ei:
        Scratch().resolve(name)
    assert ei.value.errno in (errno.EINVAL, errno.ENAMETOOLONG)


def test_nul_and_non_utf8_names():
    with pytest.raises(ValueError):
        Scratch().resolve("a\x00b")
    with pytest.raises(OSError):
        Scratch().resolve(b"a\xffb")


def test_total_bytes_cap():
    s = Scratch(max_bytes=100)
    s.write_bytes("a", b"x" * 60)
    with pytest.raises(OSError) as ei:
        s.write_bytes("b", b"x" * 41)
    assert ei.value.errno == errno.ENOSPC and "100 bytes" in str(ei.value)
    s.write_bytes("a", b"x" * 10)  # rewriting frees
    s.write_bytes("b", b"x" * 90)
    s.remove("a")
    s.write_bytes("c", b"x" * 10)
    assert s.used == 100


def test_entry_count_cap():
    s = Scratch(max_files=3)
    s.write_bytes("a", b"")
    s.mkdir("d")
    s.write_bytes("d/b", b"")
    with pytest.raises(OSError) as ei:
        s.write_bytes("c", b"")
    assert ei.value.errno == errno.ENOSPC


def test_names_budget_keeps_the_listing_small():
    s = Scratch(max_files=10_000)
    with pytest.raises(OSError, match="names made"):
        for i in range(1000):
            s.write_bytes(f"{i:03d}" + "\u4e00" * 60, b"")  # 183 bytes a name
    assert s.name_bytes <= scratch.MAX_NAME_BYTES


def test_missing_parents_are_made_and_dirs():
    s = Scratch()
    s.write_bytes("made/here.step", b"")  # code written for a project tree: assets/x.svg
    assert s.isdir("made") and s.made == 2
    s.mkdir("a/b", parents=True)
    s.write_bytes("a/b/c.txt", b"1")
    assert s.listdir("a") == ["b"] and s.listdir() == ["a", "made"]
    with pytest.raises(OSError):
        s.rmdir("a/b")
    with pytest.raises(NotADirectoryError):
        s.write_bytes("a/b/c.txt/d", b"")
    s.rename("a", "z")
    assert s.read_bytes("z/b/c.txt") == b"1" and not s.exists("a")


def test_inputs_are_copied_on_write_and_not_delivered():
    s = Scratch(inputs=[("logo.svg", b"<svg/>"), ("parts/p.step", b"ISO"), ("old.dxf", b"0")])
    assert s.read_bytes("/scratch/logo.svg") == b"<svg/>" and s.isdir("parts")
    for act in (lambda: s.rename("logo.svg", "x.svg"), lambda: s.rename("parts", "q")):
        with pytest.raises(PermissionError, match="input file"):
            act()
    assert s.collect() == ([], b"") and s.used == 0  # inputs are neither delivered nor counted
    s.write_bytes("x.svg", b"1")
    s.rename("x.svg", "old.dxf")  # onto an input: the code's own file now
    s.open_node("parts/p.step", create=True, truncate=False, exclusive=False, write=True)  # a copy: "ISO"
    s.write_bytes("logo.svg", b"mine")
    s.remove("parts/p.step")
    assert s.collect() == ([{"name": "logo.svg", "size": 4}, {"name": "old.dxf", "size": 1}], b"mine1")
    assert s.used == 5


def test_collect_lists_files_sorted_and_concatenates():
    s = Scratch()
    s.mkdir("empty")
    s.write_bytes("b.txt", b"BB")
    s.mkdir("d")
    s.write_bytes("d/a.txt", b"A")
    s.write_bytes("a.txt", b"")
    assert s.collect() == ([{"name": "a.txt", "size": 0}, {"name": "b.txt", "size": 2},
                            {"name": "d/a.txt", "size": 1}], b"BBA")


def test_inputs_from_request():
    got = scratch.inputs_from_request([{"name": "a", "size": 2}, {"name": "b", "size": 1}], b"xyz")
    assert got == [("a", b"xy"), ("b", b"z")]
    assert scratch.inputs_from_request(None, b"") == []
    for listing, blob in (([{"name": "a", "size": 2}], b"xyz"), ([{"name": "a", "size": 4}], b"xyz"),
                          ([{"name": "a", "size": True}], b"x"), ([{"name": 1, "size": 1}], b"x"),
                          ({"name": "a"}, b""), ([{"name": "a", "size": -1}], b"")):
        with pytest.raises(ValueError):
            scratch.inputs_from_request(listing, blob)
    for bad in ([("../x", b"")], [("a\x1bb", b"")], [("a", b""), ("a", b"")], [("a", b""), ("a/b", b"")]):
        with pytest.raises((ValueError, OSError)):
            Scratch(inputs=bad)


def test_begin_starts_empty():
    scratch.begin(10, [])
    scratch.current().write_bytes("a", b"1")
    assert scratch.begin(10, [("i", b"2")]).listdir() == ["i"]
    assert scratch.current().collect() == ([], b"")


def test_glob():
    s = Scratch()
    s.mkdir("a/b", parents=True)
    for n in ("x.step", "a/y.step", "a/b/z.step", "a/b/w.stl"):
        s.write_bytes(n, b"")
    assert s.glob(".", "*.step") == ["x.step"]
    assert s.glob(".", "**/*.step", recursive=True) == ["a/b/z.step", "a/y.step", "x.step"]
    assert s.glob("a", "*/*.st?") == ["a/b/w.stl"]
