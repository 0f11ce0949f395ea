"""jail/wire/svgcheck.py directly: an SVG export with active content (script, handlers, links,
external resources, DTDs, embedded HTML) is refused; nothing but SvgRefused ever escapes."""
from __future__ import annotations

import re
from xml.sax.saxutils import quoteattr

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from jail.wire.svgcheck import ELEMENTS, MAX_DEPTH, SvgRefused, check_svg

PROPS = settings(max_examples=300, deadline=None, database=None)
NS = 'xmlns="http://www.w3.org/2000/svg"'
HEAD = f'<?xml version="1.0" encoding="utf-8"?>\n<svg {NS} width="20mm" height="10mm" viewBox="0 0 20 10" version="1.1">'
GOOD = (HEAD + '<g stroke="rgb(0,0,0)" stroke-width="0.1" fill="none" transform="scale(1,-1)">'
        '<path d="M 0 0 L 1 1 C 2 2 3 3 4 4 Z"/><line x1="0" y1="0" x2="1" y2="1"/>'
        '<circle cx="1" cy="1" r="0.5" fill="#ff0000"/></g></svg>')


def doc(inner: str) -> bytes:
    return (HEAD + inner + "</svg>").encode()


def test_what_build123d_writes_passes():
    check_svg(GOOD.encode())


@pytest.mark.parametrize("svg", [
    doc("<script>alert(1)</script>"),
    doc('<g onload="alert(1)"/>'),
    doc('<g onclick="x()"/>'),
    doc('<foreignObject><div xmlns="http://www.w3.org/1999/xhtml">hi</div></foreignObject>'),
    doc("<style>@import url(http://evil/x.css);</style>"),
    doc('<g style="fill:url(http://evil/x)"/>'),
    doc('<use href="http://evil/x.svg#a"/>'),
    doc('<g xmlns:xlink="http://www.w3.org/1999/xlink" xlink:href="http://evil/"/>'),
    doc('<image href="http://evil/pixel.png"/>'),
    doc('<a href="javascript:alert(1)"><path d="M0 0"/></a>'),
    doc('<animate attributeName="href" to="javascript:alert(1)"/>'),
    doc('<set attributeName="onmouseover" to="alert(1)"/>'),
    doc('<path d="M0 0" fill="url(http://evil/x#a)"/>'),
    doc('<path d="M0 0" fill="url(#a) url(http://evil/)"/>'),
    doc('<path d="M0 0" stroke="javascript:alert(1)"/>'),
    doc('<iframe src="http://evil/"/>'),
    doc("<!-- a comment -->"),
    doc("<![CDATA[ x ]]>"),
    doc("<?xml-stylesheet href='http://evil/x.css'?>"),
    doc("text content"),
    doc(f"<svg {NS}/>"),
    b'<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY e SYSTEM "file:///etc/passwd">]>' + doc("<g id='&e;'/>"),
    b'<?xml version="1.0"?><!DOCTYPE svg SYSTEM "http://evil/x.dtd">' + doc(""),
    b'<?xml version="1.0" encoding="ISO-8859-1"?>' + doc("")[len(b'<?xml version="1.0" encoding="utf-8"?>'):],
    b'<html><svg ' + NS.encode() + b'/></html>',
    b'<svg width="1"/>',  # no SVG namespace
    doc("<g>" * (MAX_DEPTH + 1) + "</g>" * (MAX_DEPTH + 1)),
    doc("") + b"\xff",
    b"",
    b"not xml at all",
])
def test_active_or_foreign_content_is_refused(svg):
    with pytest.raises(SvgRefused):
        check_svg(svg)


NAMES = st.sampled_from(sorted({*ELEMENTS, "script", "foreignObject", "style", "use", "image", "a", "animate",
                                "set", "iframe", "text", "defs", "mask", "svg:script", "SCRIPT"}))
ATTRS = st.sampled_from(sorted({a for v in ELEMENTS.values() for a in v} | {
    "onload", "onclick", "style", "href", "xlink:href", "src", "ONLOAD", "begin", "attributeName"}))
VALUES = st.text(st.sampled_from("aehjlmorstuvpc0123456789.,-+ #()%:/\\\"'&;<>=\n\t"), max_size=40) | st.sampled_from([
    "javascript:alert(1)", "url(http://e/x)", "url(#a)", "url( http://e/)", "url(//e/x)", "rgb(1,2,3)",
    "data:image/png;base64,AAAA", "http://e/", "#fff", "none", "1e3", "M 0 0 L 1 1", "translate(1,2)"])


@PROPS
@given(NAMES, ATTRS, VALUES)
@example("path", "fill", "url(#a)")
@example("path", "fill", "url(http://e/x)")
@example("g", "onload", "x()")
def test_an_accepted_attribute_is_one_build123d_writes_and_points_nowhere(name, attr, value):
    svg = doc(f"<{name} {attr}={quoteattr(value)}/>") if ":" not in attr else \
        doc(f'<{name} xmlns:xlink="http://www.w3.org/1999/xlink" {attr}={quoteattr(value)}/>')
    try:
        check_svg(svg)
    except SvgRefused:
        return
    assert name in ELEMENTS and name != "svg" and attr in ELEMENTS[name]
    assert ":" not in value  # no scheme (javascript:, http:, data:, file:): nothing outside the file
    assert re.search(r"url\(\s*[^#\s]", value) is None  # only local url(#id)
    assert not attr.lower().startswith("on") and "href" not in attr.lower()


@PROPS
@given(st.binary(max_size=300) | st.integers(0, len(GOOD)).map(lambda i: GOOD.encode()[:i]))
def test_arbitrary_bytes_raise_svg_refused_only(data):
    try:
        check_svg(data)
    except SvgRefused:
        pass


ACTIVE = re.compile(rb"script|href|javascript|<!|<\?(?!xml )|\son[a-z]+\s*=|url\(\s*[^#\s]|foreignobject", re.I)


@PROPS
@given(st.data())
def test_a_single_byte_change_never_lets_active_content_through(data):
    raw = bytearray(GOOD.encode())
    i = data.draw(st.integers(0, len(raw) - 1))
    raw[i] = data.draw(st.integers(0, 255))
    try:
        check_svg(bytes(raw))
    except SvgRefused:
        return
    assert ACTIVE.search(raw) is None, bytes(raw)
