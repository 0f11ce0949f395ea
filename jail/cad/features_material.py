"""Point-in-material probes for the ``features`` op: is a point inside one of a shape's solids?

Each probe casts one ray (a fixed direction, skew to the part's axes so that it does not run
along a hole's axis or a wall) and reads the nearest face it crosses: leaving the material there
means the point is inside. OCCT's ``IntCurvesFace_ShapeIntersector`` tests each face's bounding
box first, so a probe costs ~1.5 ms on a part of 1 500 faces where the solid classifier
(``BRepClass3d_SolidClassifier``, which casts rays of its own and decides in more cases) costs
8-12 ms. When the nearest crossing is not clean (on a face's boundary, tangent, or at the point
itself), the probe is asked of the classifier, and so is every probe of a solid with a face
that is not a plane, cylinder, cone, sphere or torus: the intersector approximates such a
surface and can miss a crossing near a grazing one (a lofted part's B-spline read a point outside
as inside). Each solid is tested on its own (a compound's solids may overlap). ``open_along`` asks
whether a ray meets no solid at all (a cut's mouth opening to the outside), of every solid's faces.

Blocks nothing (a computation). OCP is imported at the top: jailed processes and tests only.
"""
from __future__ import annotations

from OCP.BRepAdaptor import BRepAdaptor_Surface
from OCP.BRepClass3d import BRepClass3d_SolidClassifier
from OCP.GeomAbs import GeomAbs_Cone, GeomAbs_Cylinder, GeomAbs_Plane, GeomAbs_Sphere, GeomAbs_Torus
from OCP.IntCurveSurface import IntCurveSurface_In, IntCurveSurface_Out
from OCP.IntCurvesFace import IntCurvesFace_ShapeIntersector
from OCP.TopAbs import TopAbs_FACE, TopAbs_IN, TopAbs_SOLID
from OCP.TopExp import TopExp_Explorer
from OCP.TopoDS import TopoDS
from OCP.gp import gp_Dir, gp_Lin, gp_Pnt

RAY = (0.1234, 0.2345, 0.9642)  # skew to the axes and to 45-degree diagonals
FAR = 1e100
EXACT = (GeomAbs_Plane, GeomAbs_Cylinder, GeomAbs_Cone, GeomAbs_Sphere, GeomAbs_Torus)


def _analytic(solid) -> bool:
    """Every face of ``solid`` on a surface the intersector meets exactly."""
    ex = TopExp_Explorer(solid, TopAbs_FACE)
    while ex.More():
        if BRepAdaptor_Surface(TopoDS.Face(ex.Current()), False).GetType() not in EXACT:
            return False
        ex.Next()
    return True


class Material:
    """Point-in-material tests against the solids of a shape, one ray intersector per solid of
    exact faces (loaded once: its faces' boxes) and a classifier per solid for the others and for
    unclear rays (built when
    first needed: O(faces), 25 ms a probe on a plate of 600 holes when built for every probe).
    ``rays`` / ``classified`` count the probes each way answered; the finders count in ``said`` the
    ends they read from the faces there instead (``features_faces.end_open``)."""

    def __init__(self, shape, tol: float = 1e-7):
        self.solids = []
        ex = TopExp_Explorer(shape, TopAbs_SOLID)
        while ex.More():
            self.solids.append(TopoDS.Solid(ex.Current()))
            ex.Next()
        self.tol = tol
        self._rays: list = []
        self._any: list = []  # an intersector per solid, whatever its faces (open_along)
        self._classifiers: dict = {}
        self.rays = self.classified = self.said = 0  # probes by ray, by classifier; ends read from faces

    def _load(self) -> None:
        if not self._rays:
            for so in self.solids:
                si = None
                if _analytic(so):
                    si = IntCurvesFace_ShapeIntersector()
                    si.Load(so, self.tol)
                self._rays.append(si)

    def inside(self, p) -> bool:
        self._load()
        return any(self._in_solid(i, p) for i in range(len(self.solids)))

    def open_along(self, p, d) -> bool:
        """Does the ray from ``p`` along the unit vector ``d`` meet no solid (a cut's mouth that opens
        to the outside, not into a cavity under an overhang)? Read from the faces it crosses, a
        solid's B-splines too (approximated: a grazing crossing may be missed, and the mouth called
        open)."""
        self._load()
        if not self._any:
            for so, si in zip(self.solids, self._rays, strict=True):
                if si is None:
                    si = IntCurvesFace_ShapeIntersector()
                    si.Load(so, self.tol)
                self._any.append(si)
        for si in self._any:
            si.Perform(gp_Lin(gp_Pnt(*p), gp_Dir(*d)), 10 * self.tol, FAR)
            if not si.IsDone() or si.NbPnt():
                return False
        return True

    def _in_solid(self, i: int, p) -> bool:
        state = None if self._rays[i] is None else self._ray(self._rays[i], p)
        if state is not None:
            self.rays += 1
            return state
        self.classified += 1
        c = self._classifiers.get(i)
        if c is None:
            c = self._classifiers[i] = BRepClass3d_SolidClassifier()
            c.Load(self.solids[i])
        c.Perform(gp_Pnt(*p), self.tol)
        return c.State() == TopAbs_IN

    def _ray(self, si, p) -> bool | None:
        """Inside (the ray leaves the material at its nearest crossing), outside (enters it, or
        crosses nothing), or None when that crossing is not clean."""
        si.Perform(gp_Lin(gp_Pnt(*p), gp_Dir(*RAY)), 0.0, FAR)
        if not si.IsDone():
            return None
        if si.NbPnt() == 0:
            return False
        si.SortResult()
        tr = si.Transition(1)
        if si.State(1) != TopAbs_IN or si.WParameter(1) <= 10 * self.tol or tr not in (IntCurveSurface_In,
                                                                                       IntCurveSurface_Out):
            return None
        return tr == IntCurveSurface_Out
