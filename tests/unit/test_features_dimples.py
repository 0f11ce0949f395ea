"""``features``: spherical dimples (a ball seat, a detent: a sphere's cap in a flat face) are blind
holes with ``ball`` (jail/cad/features_dimples.py), in process and through the launcher's reply."""
from __future__ import annotations

import json

import pytest
from build123d import Box, Cylinder, Pos, Rot, Sphere

from jail.cad import features
from launcher.replies import features as R
from launcher.tools import table


def run(part) -> dict:
    return json.loads(json.dumps(features.features({"p": part}, "p"), allow_nan=False))


def text(d: dict) -> str:
    return table.render_text("features", {"ok": True, "features": R.features_reply(d, "p")})


def test_a_dimple_is_a_blind_hole_with_its_ball():
    """A sphere r=3 centred 2 above a block's top: a cap 1 deep, its mouth d=2*sqrt(5). Before, a
    dimple read as nothing."""
    d = run(Box(40, 40, 10) - Pos(0, 0, 7) * Sphere(3))
    (h,) = d["holes"]
    assert (h["ball"], h["depth"], h["through"], h["axis"]) == (3, 1, False, [0, 0, -1]), h
    assert h["diameter"] == pytest.approx(2 * 5 ** 0.5, abs=1e-5) and h["center"] == [0, 0, 5], h
    assert "blind depth 1 d=4.47214 spherical (ball r=3)" in text(d), text(d)


def test_a_ball_seat_deeper_than_the_ball_s_radius_and_a_row_of_detents():
    """The centre 1 below the face: 4 deep, the mouth narrower than the ball (it holds the ball).
    Three detents 10 apart: a linear pattern, turned and moved alike."""
    (h,) = run(Box(40, 40, 10) - Pos(0, 0, 4) * Sphere(3))["holes"]
    assert (h["ball"], h["depth"]) == (3, 4) and h["diameter"] == pytest.approx(2 * 8 ** 0.5, abs=1e-5), h
    row = Box(60, 20, 10) - Pos(-10, 0, 6) * Sphere(2) - Pos(0, 0, 6) * Sphere(2) - Pos(10, 0, 6) * Sphere(2)
    for part in (row, Pos(30, -20, 50) * Rot(10, 20, 30) * row):
        d = run(part)
        assert [(h["ball"], round(h["depth"], 6)) for h in d["holes"]] == [(2, 1)] * 3, d["holes"]
        (p,) = d["patterns"]
        assert (p["type"], p["count"], p["pitch"]) == ("linear", 3, pytest.approx(10)), p


def test_a_ball_ended_hole_and_a_spherical_cavity_are_no_dimples():
    """A ball-end mill's hole (its floor meets a cylinder) and a spherical cavity a hole opens into
    are holes without ``ball``; a ball standing on a face (convex) is none."""
    ball_end = Box(60, 40, 20) - Pos(0, 0, 5) * Cylinder(4, 10) - Sphere(4)
    cavity = Box(30, 30, 30) - Sphere(8) - Pos(0, 0, 10) * Cylinder(3, 20)
    for part in (ball_end, cavity):
        assert [h["ball"] for h in run(part)["holes"]] == [None], part
    assert run(Box(40, 40, 10) + Pos(0, 0, 7) * Sphere(3))["holes"] == []
