"""Rendering, step 5: what is drawn over the shaded image with Pillow: titles, the axis triad, the
legend, the scale bar, polylines of objects without faces, and the numbers on them.

Pillow's built-in default font only: no font file is opened. Pillow is imported where used.
"""

from __future__ import annotations

import math

import numpy as np

from jail.cad.render_shade import PALETTE
from jail.cad.render_view import View

__all__ = ["load_font", "nice", "nice_floor", "fmt", "scale_bar", "triad", "triad_size", "legend", "draw_polylines",
           "axis_names"]


def load_font(size: int = 13):
    """Pillow's default font at ``size`` (its bitmap font where FreeType is missing)."""
    from PIL import ImageFont
    try:
        return ImageFont.load_default(size=size)
    except Exception:  # noqa: BLE001 - an older Pillow or no FreeType: the bitmap font
        return ImageFont.load_default()


def nice(x: float) -> float:
    """The smallest 1, 2, 5 x 10^k at or above ``x`` (a grid step)."""
    if not (x > 0 and math.isfinite(x)):
        return 1.0
    e = 10 ** math.floor(math.log10(x))
    for m in (1, 2, 5, 10):
        if m * e >= x:
            return m * e
    return 10 * e


def nice_floor(x: float) -> float:
    """The largest 1, 2, 5 x 10^k at or below ``x`` (a scale bar length)."""
    if not (x > 0 and math.isfinite(x)):
        return 1.0
    e = 10 ** math.floor(math.log10(x))
    for m in (5, 2, 1):
        if m * e <= x:
            return m * e
    return e


def fmt(v: float) -> str:
    """A number for a label or message: 6 significant digits, ``0`` for tiny values."""
    if abs(v) < 1e-9:
        return "0"
    return f"{v:.6g}"


def scale_bar(draw, x: int, y: int, mm_per_px: float, max_px: int, font) -> None:
    """A scale bar of a round length in mm, at most ``max_px`` long, from (``x``, ``y``)."""
    length = nice_floor(max_px * mm_per_px)
    n = int(round(length / mm_per_px))
    if n < 4:
        return
    c = (40, 40, 40)
    draw.line([(x, y), (x + n, y)], fill=c, width=2)
    draw.line([(x, y - 4), (x, y + 3)], fill=c, width=1)
    draw.line([(x + n, y - 4), (x + n, y + 3)], fill=c, width=1)
    draw.text((x + n + 5, y - 7), f"{fmt(length)} mm", fill=c, font=font)


def triad_size(w: int, h: int) -> int:
    """The length of the triad's arms for a ``w`` x ``h`` image (about 7 % of its smaller side)."""
    return int(max(16, min(60, round(min(w, h) * 0.07))))


def triad(draw, view: View, cx: int, cy: int, size: int, font) -> None:
    """The X/Y/Z axis triad of ``view`` around (``cx``, ``cy``), arms ``size`` px long, each
    labelled at its tip; an axis seen end-on is a circle with its label beside it."""
    width = 2 if size < 40 else 3
    for vec, name, col in (((1, 0, 0), "X", (210, 50, 50)), ((0, 1, 0), "Y", (40, 160, 60)),
                           ((0, 0, 1), "Z", (50, 90, 220))):
        v = np.array(vec, float)
        sx, sy = float(v @ view.r), -float(v @ view.u)
        if abs(sx) + abs(sy) < 0.15:
            rr = max(3, size // 8)
            draw.ellipse([cx - rr, cy - rr, cx + rr, cy + rr], outline=col, width=width)
            draw.text((cx + rr + 2, cy - rr - 14), name, fill=col, font=font)
            continue
        ex, ey = cx + sx * size, cy + sy * size
        draw.line([(cx, cy), (ex, ey)], fill=col, width=width)
        n = math.hypot(sx, sy) or 1.0
        tx, ty = ex + 9 * sx / n, ey + 9 * sy / n  # the label beyond the tip, centred on the axis
        try:
            draw.text((tx, ty), name, fill=col, font=font, anchor="mm")
        except (ValueError, TypeError):  # a bitmap font (no FreeType) takes no anchor
            draw.text((tx - 3, ty - 6), name, fill=col, font=font)


def legend(draw, names: list[str], x: int, y: int, font, palette: list | None = None) -> None:
    """Colour swatches and names of the objects (at most 12, then a count)."""
    shown = names[:12]
    pal = palette or PALETTE
    for i, name in enumerate(shown):
        col = tuple(pal[i % len(pal)])
        yy = y + i * 16
        draw.rectangle([x, yy + 2, x + 10, yy + 12], fill=col, outline=(40, 40, 40))
        draw.text((x + 15, yy), name if len(name) <= 28 else name[:25] + "...", fill=(30, 30, 30), font=font)
    if len(names) > len(shown):
        draw.text((x, y + len(shown) * 16), f"... {len(names) - len(shown)} more", fill=(30, 30, 30), font=font)


def draw_polylines(draw, view: "View", polys: list, x0: int = 0, y0: int = 0, palette: list | None = None) -> None:
    """Objects without faces (``render_mesh.edge_polylines``) as lines in their colours."""
    pal = palette or PALETTE
    for oi, pts in polys:
        x = (pts @ view.r - view.cu) / view.mm_per_px + view.w / 2 + x0
        y = -(pts @ view.u - view.cv) / view.mm_per_px + view.h / 2 + y0
        xy = [(float(a), float(b)) for a, b in zip(x, y) if abs(a) < 1e6 and abs(b) < 1e6]
        if len(xy) >= 2:
            draw.line(xy, fill=tuple(pal[oi % len(pal)]), width=2, joint="curve")


def axis_names(r, u, axis) -> tuple[str, str]:
    """Names of a section's horizontal and vertical axes (``X``, ``-Y`` ...; ``u``/``v`` off-axis)."""
    def name(v, fallback):
        for i, a in enumerate("XYZ"):
            if abs(abs(v[i]) - 1) < 1e-9:
                return a if v[i] > 0 else "-" + a
        return fallback
    if axis is None:
        return "u", "v"
    return name(r, "u"), name(u, "v")
