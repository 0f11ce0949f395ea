"""Rendering, step 1: the camera. Orthographic view directions, the fit of a box into the image,
and the world -> pixel mapping of one view (``View``, at supersampled size).

Camera angles (azimuth, elevation) in degrees: azimuth 0 looks from the front (camera on -Y), 90
from the right (camera on +X); elevation 90 looks down from +Z. ``RenderError`` is the refusal of
every rendering step; its message is meant for the assistant.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["RenderError", "VIEWS", "SHEET", "SS", "unit", "camera", "camera_along", "View", "fit", "number"]

SS = 2  # supersampling of edge pixels for images up to render.SS_MAX_PIXELS output pixels; larger: 1:1

VIEWS = {"iso": (45.0, math.degrees(math.atan(1 / math.sqrt(2)))), "top": (0.0, 90.0),
         "bottom": (0.0, -90.0), "front": (0.0, 0.0), "back": (180.0, 0.0), "right": (90.0, 0.0),
         "left": (-90.0, 0.0)}
SHEET = (("top", 0, 0), ("iso", 1, 0), ("front", 0, 1), ("right", 1, 1))  # third-angle layout


class RenderError(ValueError):
    """A request that cannot be rendered; the message is meant for the assistant."""


def unit(v) -> np.ndarray:
    """``v`` scaled to length 1 (RenderError when it is zero or not finite)."""
    v = np.asarray(v, np.float64)
    n = float(np.linalg.norm(v))
    if not math.isfinite(n) or n < 1e-12:
        raise RenderError("a direction vector must be finite and non-zero")
    return v / n


def camera(azimuth: float, elevation: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(right, up, toward_viewer)`` unit vectors for an orthographic camera."""
    a, e = math.radians(azimuth), math.radians(elevation)
    d = np.array([math.sin(a) * math.cos(e), -math.cos(a) * math.cos(e), math.sin(e)])
    r = np.array([math.cos(a), math.sin(a), 0.0])
    u = np.cross(d, r)
    return r, u / np.linalg.norm(u), d


def camera_along(d) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A camera looking along ``-d`` (the viewer on the ``d`` side), Z kept up where it can be."""
    d = unit(d)
    if abs(d[2]) > 0.999:
        r = np.array([1.0, 0.0, 0.0])
    else:
        r = unit(np.cross([0.0, 0.0, 1.0], d))
    u = np.cross(d, r)
    return r, u, d


class View:
    """A camera plus the pixel mapping: world -> (x, y) pixels at supersampled size."""

    def __init__(self, r, u, d, center_uv, mm_per_px: float, w: int, h: int, ss: int = SS):
        self.r, self.u, self.d = r, u, d
        self.ss = ss  # supersampling: drawn at ss x the size, averaged down
        self.cu, self.cv = center_uv
        self.mm_per_px = mm_per_px  # at output size
        self.w, self.h = w, h

    def project(self, pts: np.ndarray):
        s = self.ss / self.mm_per_px
        px = (pts @ self.r - self.cu) * s + self.w * self.ss / 2
        py = -(pts @ self.u - self.cv) * s + self.h * self.ss / 2
        pz = -(pts @ self.d)
        return px, py, pz


def fit(points: np.ndarray, r, u, w: int, h: int, fill: float = 0.86) -> tuple[tuple, float]:
    """``(centre (u, v), mm per pixel)`` that fits ``points`` seen along ``r``/``u`` into ``fill``
    of a ``w`` x ``h`` image."""
    us, vs = points @ r, points @ u
    du, dv = float(us.max() - us.min()), float(vs.max() - vs.min())
    mm = max(du / (w * fill), dv / (h * fill), 1e-9)
    return ((us.max() + us.min()) / 2, (vs.max() + vs.min()) / 2), mm


def number(v: Any, what: str) -> float:
    """A number of the request (an angle, a plane's coordinate), finite and within +-1e9."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise RenderError(f"{what} must be a number")
    x = float(v)
    if not math.isfinite(x) or abs(x) > 1e9:
        raise RenderError(f"{what} must be a finite number within +-1e9")
    return x
