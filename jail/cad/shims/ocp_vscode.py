"""``ocp_vscode`` in the jail: the OCP CAD Viewer's API, with a picture instead of a viewer.

Code written for the viewer (``from ocp_vscode import show, show_object, set_port, Camera``) runs
as written: every public name of the real module exists and takes what the real one takes
(unknown keyword options are accepted and ignored). ``show``, ``show_object``, ``show_objects``
and ``show_all`` record what they display (the objects, their names and colours) in this process
(``jail.cad.shims.record``); after the call the launcher asks for one rendered picture of it.
Everything else (ports, defaults, camera, screenshots, animations) is a harmless no-op: nothing
here opens a socket, a file or a window.

Blocks nothing: it is user-level code running with the user's rights, served under the name
``ocp_vscode`` (``jail.cad.shims``). What it records is untrusted to every reader.
"""
from __future__ import annotations

__name__ = "ocp_vscode"  # noqa: A001 - what user code sees (functions, classes, the module view)

import sys as _sys
from enum import Enum as _Enum

from jail.cad.shims import record as _record

__version__ = "2.8.0+jail"

__all__ = [
    # show.py
    "show", "show_object", "remove_object", "push_object", "show_objects", "reset_show", "show_all",
    "show_clear", "save_screenshot", "none_filter",
    # config.py
    "workspace_config", "combined_config", "set_viewer_config", "set_defaults", "reset_defaults",
    "get_default", "get_defaults", "status", "AnalysisTool", "Camera", "Collapse", "Render",
    "StudioEnvironment", "StudioBackground", "StudioToneMapping", "StudioTextureMapping", "UiTab",
    "check_deprecated",
    # comms.py, utils.py
    "send_data", "send_command", "send_response", "set_port", "get_port", "listener", "is_pytest",
    "ignore_camera_warnings", "camera_keep_warning",
    # colors.py, animation, selectors, tessellator
    "BaseColorMap", "ColorMap", "get_colormap", "set_colormap", "unset_colormap", "web_to_rgb",
    "Animation", "ImageFace", "select_vertex", "select_vertices", "select_edge", "select_edges",
    "select_face", "select_faces", "enable_native_tessellator", "disable_native_tessellator",
    "is_native_tessellator_enabled",
]

_STACK: list = []     # show_object's objects: [(object, name, colour)]
_DEFAULTS: dict = {}  # set_defaults(...)
_COLORMAP = [None]


# ------------------------------------------------------------------ showing
def _names(names, n: int) -> list:
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, (list, tuple)):
        return [None] * n
    return [x if isinstance(x, str) else None for x in list(names)[:n]] + [None] * max(0, n - len(names))


def _colors(colors, n: int) -> list:
    if isinstance(colors, str) or (isinstance(colors, tuple) and colors and
                                   all(isinstance(c, (int, float)) for c in colors)):
        colors = [colors] * n if n == 1 else [None] * n
    if not isinstance(colors, (list, tuple)):
        return [None] * n
    out = [_record.rgb(c) if c is not None else None for c in list(colors)[:n]]
    return out + [None] * (n - len(out))


def show(*cad_objs, names=None, colors=None, alphas=None, modes=None, materials=None, port=None,
         progress="-+*c", **kwargs):
    """Display ``cad_objs`` (shapes, builders, lists of them) named ``names`` in ``colors``: here,
    record them for the picture the launcher adds to the reply. The other options are ignored."""
    n = len(cad_objs)
    _record.put(list(zip(cad_objs, _names(names, n), _colors(colors, n))), n)


def show_object(obj, name=None, options=None, parent=None, clear=False, update=False, mode=None,
                material=None, port=None, progress="-+*c", **kwargs):
    """Add ``obj`` to the displayed objects (CQ-editor style) and show them all."""
    if clear:
        reset_show()
    if update and name is not None:
        remove_object(name)
    passed = 1
    if parent is not None:
        _STACK.append((parent, "parent", None))
        passed += 1
    color = options.get("color") if isinstance(options, dict) else None
    _STACK.append((obj, name if isinstance(name, str) else None, _record.rgb(color) if color is not None else None))
    _record.put(list(_STACK), passed)


def push_object(obj, name=None, color=None, alpha=None, material=None, mode=None, clear=False, update=False):
    """Add ``obj`` to the objects ``show_objects()`` displays, without showing."""
    if clear:
        reset_show()
    if update and name is not None:
        remove_object(name)
    _STACK.append((obj, name if isinstance(name, str) else None, _record.rgb(color) if color is not None else None))


def show_objects(modes=None, port=None, progress="-+*c", **kwargs):
    """Show the objects ``push_object``/``show_object`` collected."""
    _record.put(list(_STACK), len(_STACK))


def remove_object(name, call_show=False, port=None, progress="-+*c"):
    """Remove the collected object named ``name``."""
    for i, item in enumerate(_STACK):
        if item[1] == name:
            del _STACK[i]
            break
    if call_show:
        show_objects()


def reset_show():
    """Forget the objects ``show_object``/``push_object`` collected."""
    _STACK.clear()


def show_clear():
    """Clear the display: ``render()`` draws its default selection again."""
    _record.clear()


def show_all(variables=None, exclude=None, classes=None, include=None, _visual_debug=False, **kwargs):
    """Show every shape (or builder, or list of shapes) bound to a name in the caller's scope."""
    from jail.cad.measure import _topods
    try:
        scope = _sys._getframe(1).f_locals
    except Exception:  # noqa: BLE001
        return
    if not isinstance(scope, dict):
        scope = dict(scope)
    skip = set(exclude) if isinstance(exclude, (list, tuple, set)) else set()
    wanted = set(variables) if isinstance(variables, (list, tuple, set)) else None
    items = []
    for name, value in list(scope.items()):
        if not isinstance(name, str) or name.startswith("_") or name in skip:
            continue
        if wanted is not None and name not in wanted:
            continue
        if classes and not isinstance(value, tuple(c for c in classes if isinstance(c, type))):
            continue
        if _topods(value) is not None or (isinstance(value, (list, tuple)) and value
                                          and _topods(value[0]) is not None):
            items.append((value, name, None))
        if len(items) >= _record.MAX_KEPT:
            break
    _record.put(items, len(items))


def save_screenshot(filename, port=None, polling=True, progress_only=False):
    """No viewer, no screenshot: does nothing (the reply carries the picture)."""


def none_filter(d, excludes=None):
    excludes = excludes or []
    return {k: v for k, v in dict(d).items() if v is not None and k not in excludes}


# ------------------------------------------------------------------ config
class Camera(_Enum):
    RESET = "reset"
    CENTER = "center"
    KEEP = "keep"
    ISO = "iso"
    TOP = "top"
    BOTTOM = "bottom"
    LEFT = "left"
    RIGHT = "right"
    BACK = "rear"
    FRONT = "front"


class Collapse(_Enum):
    NONE = 2
    LEAVES = -1
    ALL = 0
    ROOT = 1


class Render(_Enum):
    ALL = "all"
    EDGES = "edges"
    FACES = "faces"
    NONE = "none"


class AnalysisTool(_Enum):
    PROPERTIES = "properties"
    DISTANCE = "distance"
    SELECT = "select"
    OFF = "off"


class UiTab(_Enum):
    TREE = "tree"
    CLIP = "clip"
    ZEBRA = "zebra"
    MATERIAL = "material"
    STUDIO = "studio"


class StudioEnvironment(_Enum):
    PROCEDURAL_STUDIO = "studio"
    SOFT_LIGHT = "studio_small_08"
    NEUTRAL_INDUSTRIAL = "empty_warehouse_01"


class StudioBackground(_Enum):
    ENVIRONMENT = "environment"
    TRANSPARENT = "transparent"
    GRADIENT = "gradient"
    WHITE = "white"
    GREY = "grey"


class StudioToneMapping(_Enum):
    NEUTRAL = "neutral"
    ACES = "ACES"
    NONE = "none"


class StudioTextureMapping(_Enum):
    TRIPLANAR = "triplanar"
    PARAMETRIC = "parametric"


def set_defaults(**kwargs):
    _DEFAULTS.update({k: v for k, v in kwargs.items() if v is not None})


def reset_defaults(port=None):
    _DEFAULTS.clear()


def get_defaults(port=None):
    return dict(_DEFAULTS)


def get_default(key, port=None):
    return _DEFAULTS.get(key)


def set_viewer_config(**kwargs):
    """No viewer: does nothing."""


def workspace_config(port=None, viewer=None):
    return {}


def combined_config(port=None, viewer=None):
    return dict(_DEFAULTS)


def status(port=None, viewer=None, debug=False):
    return {}


def check_deprecated(kwargs, _length=1):
    return kwargs


# ------------------------------------------------------------------ comms, utils
def set_port(port=None, host=None, **kwargs):
    """No viewer to connect to: does nothing."""


def get_port():
    return 3939


def send_data(*args, **kwargs):
    return None


def send_command(*args, **kwargs):
    return {}


def send_response(*args, **kwargs):
    return None


def listener(*args, **kwargs):
    return lambda *a, **k: None


def is_pytest():
    return False


def ignore_camera_warnings():
    """No camera: does nothing."""


def camera_keep_warning(*args, **kwargs):
    """No camera: does nothing."""


# ------------------------------------------------------------------ colours
class BaseColorMap:
    """A colour map whose colours the picture does not use (it keeps the renderer's palette)."""

    def __init__(self, *args, **kwargs):
        pass

    def __iter__(self):
        return self

    def __next__(self):
        return (0.5, 0.5, 0.5, 1.0)

    def reset(self):
        pass


class ColorMap:
    """``ColorMap.tab10()``, ``ColorMap.golden_ratio()``, ...: colour maps (no effect here)."""

    @staticmethod
    def _map(*args, **kwargs):
        return BaseColorMap()

    accent = dark2 = paired = pastel1 = pastel2 = set1 = set2 = set3 = tab10 = tab20 = tab20b = tab20c = _map
    golden_ratio = seeded = segmented = listed = _map


def get_colormap():
    return _COLORMAP[0]


def set_colormap(colormap):
    _COLORMAP[0] = colormap


def unset_colormap():
    _COLORMAP[0] = None


def web_to_rgb(name):
    c = _record.rgb(name)
    return None if c is None else tuple(v / 255 for v in c)


# ------------------------------------------------------------------ animation, selectors, tessellator
class Animation:
    """An animation of an assembly: nothing to animate without a viewer (every method does nothing)."""

    def __init__(self, assembly=None):
        self.assembly = assembly

    def add_track(self, path, action, times, values, animate_joints=False):
        pass

    def animate(self, speed=1):
        pass

    def set_relative_time(self, fraction, port=None):
        pass

    def save_as_gif(self, *args, **kwargs):
        pass


def ImageFace(image_path, scale=1.0, origin_pixels=(0, 0), location=None, name=None):  # noqa: N802
    """A plain rectangle the size of the image (the viewer would texture it with the image): ``scale``
    model units a pixel, pixel ``origin_pixels`` (from the top left) at the origin, then ``location``.
    The image is read from the scratch directory for its size only; when it cannot be read (not an
    offered input), a one-pixel placeholder is made and a note goes to stderr."""
    import build123d as _b
    from jail.cad import fsviews
    try:
        from PIL import Image
        with fsviews.open_(image_path, "rb") as f:
            w, h = Image.open(f).size
    except Exception as e:  # noqa: BLE001 - a picture for the viewer only: the model does not depend on it
        print(f"ocp_vscode.ImageFace: {image_path!s:.80} not readable here ({type(e).__name__}); "
              "a 1-pixel placeholder face stands in for the picture", file=_sys.stderr)
        w = h = 1
    s = float(scale)
    ox, oy = origin_pixels
    face = _b.Face.make_rect(w * s, h * s).moved(_b.Location(((w / 2 - ox) * s, (oy - h / 2) * s, 0)))
    if location is not None:
        face = face.moved(location)
    if name is not None:
        face.label = str(name)
    return face


def _select(obj, indices, getter):
    items = getattr(obj, getter)()
    if isinstance(indices, int):
        return items[indices]
    return [items[i] for i in indices]


def select_vertices(obj, indices):
    return _select(obj, indices, "vertices")


def select_edges(obj, indices):
    return _select(obj, indices, "edges")


def select_faces(obj, indices):
    return _select(obj, indices, "faces")


def select_vertex(obj, index):
    return _select(obj, index, "vertices")


def select_edge(obj, index):
    return _select(obj, index, "edges")


def select_face(obj, index):
    return _select(obj, index, "faces")


def enable_native_tessellator():
    pass


def disable_native_tessellator():
    pass


def is_native_tessellator_enabled():
    return False
