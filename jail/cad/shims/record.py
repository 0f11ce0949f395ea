"""What ``show()`` displayed last in this process, and how many objects this call showed.

The state is plain module data of the process that ran the call: a successful call leaves it in the
session's head (forks and snapshots inherit it); a failed call's process dies with its record. The
render op reads it (``last``) to draw "what show() displayed"; the runner reads and clears the count
(``take_count``) for the result's ``shown`` field.

Blocks nothing by itself: user code with the Python layers off can replace this state with anything,
so both readers type-check what they find (``last`` returns only well-formed items, at most
``MAX_KEPT``; ``take_count`` only a non-negative int) and the launcher re-checks the count and the
picture.
"""
from __future__ import annotations

__all__ = ["MAX_KEPT", "put", "clear", "last", "take_count", "rgb"]

MAX_KEPT = 10_000  # objects one show() keeps for the picture (the rest are counted, not drawn)

_last: list = []   # [(object, name or None, (r, g, b) or None)]
_count = 0         # objects passed to show()/show_object() since the last take_count()


def put(items: list, passed: int) -> None:
    """``show()`` displayed ``items`` (replacing the last picture); ``passed`` objects were given."""
    global _last, _count
    _last = list(items[:MAX_KEPT])
    _count = (_count if type(_count) is int and _count >= 0 else 0) + max(0, int(passed))


def clear() -> None:
    """``show_clear()``: nothing is displayed (``render()`` goes back to its default)."""
    global _last
    _last = []


def last() -> list:
    """A copy of the last displayed items, each ``(object, str or None, (r, g, b) or None)``; the
    malformed ones (a patched state) are left out."""
    src = _last
    if type(src) is not list:
        return []
    out = []
    for item in list.__iter__(src):
        if len(out) >= MAX_KEPT:
            break
        if type(item) is not tuple or tuple.__len__(item) != 3:
            continue
        obj, name, col = item
        name = str.__str__(name) if type(name) is str else None
        col = col if type(col) is tuple and len(col) == 3 and all(type(c) is int and 0 <= c <= 255
                                                                  for c in col) else None
        out.append((obj, name, col))
    return out


def take_count() -> int:
    """The count of objects shown since the last call of this function (0 if the state is not an int)."""
    global _count
    n = _count
    _count = 0
    return n if type(n) is int and 0 <= n <= 10 ** 9 else 0


def rgb(color) -> tuple | None:
    """A colour as ocp_vscode takes it (a CSS name or ``#rrggbb``, ``(r, g, b[, a])`` in 0..1 or
    0..255, a build123d ``Color``) as three ints 0..255; None when it is none of those."""
    try:
        if isinstance(color, str):
            from PIL import ImageColor
            c = ImageColor.getrgb(str.__str__(color)[:64])
            return tuple(int(v) for v in c[:3])
        if not isinstance(color, (tuple, list)):
            from build123d import Color  # floats 0..1 (r, g, b, a)
            color = tuple(color)[:4] if isinstance(color, Color) else None
        if isinstance(color, (tuple, list)) and len(color) in (3, 4):
            vals = [float(v) for v in list(color)[:3]]
            scale = 255.0 if all(0.0 <= v <= 1.0 for v in vals) else 1.0  # 0..1 unless a value is over 1
            out = tuple(int(round(v * scale)) for v in vals)
            return out if all(0 <= v <= 255 for v in out) else None
    except Exception:  # noqa: BLE001 - a colour the viewer would not take: the palette's
        return None
    return None
