"""SVG exports checked for active content before they reach the user's disk.

An exported SVG is often opened in a web browser, where an SVG can run script, embed HTML or
fetch external resources; the bytes come from a jailed process that may have run anything. The
launcher checks them before writing (launcher/files/exports.py); the jail runs the same check
first (jail/cad/serialize.py), only to give a clear error early. Refused, never rewritten.

Blocks: DTDs and entities, processing instructions, CDATA, comments, text content; any element
or attribute build123d's ``ExportSVG`` does not write (``script``, ``foreignObject``, ``style``,
``use``, ``image``, event handlers, ``href``...); attribute values outside a strict grammar
(numbers, path data, colours, local ``url(#id)`` only); a root other than ``svg`` in the SVG
namespace; nesting deeper than ``MAX_DEPTH``. How: stdlib ``expat``, streaming, UTF-8 forced.
Does not block: a misleading but inert drawing, or a viewer's trouble with a very large valid
file (bounded by ``max_export_bytes``). The other formats are not parsed (no active content).
"""
from __future__ import annotations

import re
import xml.parsers.expat as expat

__all__ = ["SvgRefused", "check_svg", "ELEMENTS"]

SVG_NS = "http://www.w3.org/2000/svg"
MAX_DEPTH = 32

_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_NUMBER = re.compile(rf"^{_NUM}$")
_LENGTH = re.compile(rf"^{_NUM}(?:mm|cm|in|pt|pc|px|m|%)?$")
_NUM_LIST = re.compile(rf"^\s*(?:{_NUM}(?:\s*,\s*|\s+)?)*\s*$")
_PATH = re.compile(r"^[MmLlHhVvCcSsQqTtAaZz0-9.,eE+\-\s]*$")
_TRANSFORM = re.compile(rf"^\s*(?:(?:matrix|translate|scale|rotate|skewX|skewY)\s*\(\s*(?:{_NUM}(?:\s*,\s*|\s+)?)*"
                        r"\)\s*,?\s*)*$")
_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
_PAINT = re.compile(r"^(?:none|currentColor|[a-zA-Z]{1,24}|#[0-9a-fA-F]{3,8}"
                    rf"|rgba?\(\s*{_NUM}%?\s*,\s*{_NUM}%?\s*,\s*{_NUM}%?\s*(?:,\s*{_NUM}%?\s*)?\)"
                    r"|url\(#[A-Za-z_][A-Za-z0-9_.-]{0,63}\))$")
_LINECAP = re.compile(r"^(?:butt|round|square)$")
_LINEJOIN = re.compile(r"^(?:miter|round|bevel)$")

_PRESENTATION = {
    "fill": _PAINT, "fill-opacity": _NUMBER, "stroke": _PAINT, "stroke-opacity": _NUMBER,
    "stroke-width": _LENGTH, "stroke-dasharray": _NUM_LIST, "stroke-linecap": _LINECAP,
    "stroke-linejoin": _LINEJOIN, "transform": _TRANSFORM, "id": _ID,
}

#: element -> {attribute: value grammar}: what build123d's ExportSVG writes (and its presentation attributes).
ELEMENTS: dict[str, dict[str, re.Pattern]] = {
    "svg": {"width": _LENGTH, "height": _LENGTH, "viewBox": _NUM_LIST, "version": re.compile(r"^1\.[01]$"),
            "xmlns": re.compile("^" + re.escape(SVG_NS) + "$")},
    "g": dict(_PRESENTATION),
    "path": {"d": _PATH, **_PRESENTATION},
    "line": {"x1": _NUMBER, "y1": _NUMBER, "x2": _NUMBER, "y2": _NUMBER, **_PRESENTATION},
    "circle": {"cx": _NUMBER, "cy": _NUMBER, "r": _NUMBER, **_PRESENTATION},
}

_ACTIVE_ELEMENTS = {"script", "foreignobject", "iframe", "embed", "object", "image", "use", "a", "style",
                    "animate", "animatetransform", "animatemotion", "set", "handler", "listener"}


class SvgRefused(ValueError):
    """The SVG holds something this check does not allow; the message says what (and where)."""


def _shown(s: str, cap: int = 60) -> str:
    """A name or value for an error message: escaped (no raw control or format characters), capped."""
    s = s if len(s) <= cap else s[:cap] + "..."
    return ascii(s)


class _Checker:
    def __init__(self, parser):
        self.p = parser
        self.depth = 0
        self.seen_root = False

    def fail(self, what: str) -> None:
        raise SvgRefused(f"line {self.p.CurrentLineNumber}: {what}")

    def start(self, name: str, attrs: list) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.fail(f"elements nested deeper than {MAX_DEPTH}")
        if not self.seen_root:
            self.seen_root = True
            if name != "svg":
                self.fail(f"the root element is {_shown(name)}, not 'svg'")
        elif name == "svg":
            self.fail("a nested <svg> element")
        allowed = ELEMENTS.get(name)
        if allowed is None:
            local = name.rsplit(":", 1)[-1].lower()
            kind = "active content" if local in _ACTIVE_ELEMENTS else "not an element build123d's SVG export writes"
            self.fail(f"element <{_shown(name)[1:-1]}> ({kind})")
        if name == "svg" and "xmlns" not in attrs[0::2]:
            self.fail("the root <svg> element has no SVG namespace (xmlns)")
        for i in range(0, len(attrs), 2):
            key, value = attrs[i], attrs[i + 1]
            rule = allowed.get(key)
            if rule is None:
                low = key.lower()
                if low.startswith("on"):
                    why = "an event handler (script)"
                elif low.rsplit(":", 1)[-1] == "href":
                    why = "a link or external reference"
                elif low == "style":
                    why = "inline CSS (may load external resources)"
                else:
                    why = "not an attribute build123d's SVG export writes"
                self.fail(f"attribute {_shown(key)} on <{name}>: {why}")
            if not rule.match(value):
                why = " (only local url(#id) references are allowed)" if "url(" in value.lower() else ""
                self.fail(f"attribute {key}={_shown(value)} on <{name}> is not a plain value{why}")

    def end(self, _name: str) -> None:
        self.depth -= 1

    def chars(self, data: str) -> None:
        if data.strip():
            self.fail(f"text content {_shown(data.strip(), 30)} (build123d's SVG export writes none)")

    def doctype(self, *_a) -> None:
        self.fail("a <!DOCTYPE> declaration (no DTDs or entities are accepted)")

    def entity(self, *_a) -> None:
        self.fail("an entity declaration")

    def pi(self, target: str, _data: str) -> None:
        self.fail(f"a processing instruction <?{_shown(target)[1:-1]} ...?>")

    def cdata(self) -> None:
        self.fail("a CDATA section")

    def comment(self, _data: str) -> None:
        self.fail("a comment (build123d's SVG export writes none)")

    def xmldecl(self, version, encoding, _standalone) -> None:
        if encoding is not None and encoding.lower().replace("_", "-") not in ("utf-8", "utf8"):
            self.fail(f"the XML declaration names the encoding {_shown(encoding)}; only UTF-8 is accepted")

    def external(self, *_a) -> int:
        self.fail("an external entity reference")
        return 0


def check_svg(data: bytes) -> None:
    """Return None if ``data`` is an SVG with no active content (see the module docstring);
    raise :class:`SvgRefused` otherwise. Never raises anything else for any bytes."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise SvgRefused("the SVG data is not bytes")
    data = bytes(data)
    try:
        data.decode("utf-8", "strict")
    except UnicodeDecodeError as e:
        raise SvgRefused(f"the SVG is not valid UTF-8 (byte {e.start})") from None
    p = expat.ParserCreate("UTF-8")
    c = _Checker(p)
    p.StartElementHandler = c.start
    p.EndElementHandler = c.end
    p.CharacterDataHandler = c.chars
    p.StartDoctypeDeclHandler = c.doctype
    p.EntityDeclHandler = c.entity
    p.UnparsedEntityDeclHandler = c.entity
    p.NotationDeclHandler = c.entity
    p.ProcessingInstructionHandler = c.pi
    p.StartCdataSectionHandler = c.cdata
    p.CommentHandler = c.comment
    p.XmlDeclHandler = c.xmldecl
    p.ExternalEntityRefHandler = c.external
    p.ordered_attributes = True
    p.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    try:
        p.Parse(data, True)
    except SvgRefused:
        raise
    except expat.ExpatError as e:
        raise SvgRefused(f"the SVG is not well-formed XML ({expat.ErrorString(e.code)}, line {e.lineno})") from None
    except RecursionError:  # pragma: no cover - expat does not recurse in Python
        raise SvgRefused("the SVG is nested too deeply") from None
    if not c.seen_root:
        raise SvgRefused("the SVG has no root element")
