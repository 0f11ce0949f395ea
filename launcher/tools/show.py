"""``show()`` answers with a picture: after a successful ``execute`` whose code passed objects to
``ocp_vscode.show()`` (the jail's stand-in, jail/cad/shims/), one rendered PNG of what it displayed
is added to the reply.

:func:`attach` (called by the execute handler) re-types the result's ``shown`` count (it comes from
the session: untrusted) and, when it is positive and the ``show_images`` option is on, asks the
session for a ``render`` of what show() displayed (a disposable op; the request, PNG container
checks and size cap of the ``render`` tool, launcher/tools/cad.py and replies/cad.py) and
keeps the checked image, or a note saying why there is none: the execute result stays what it was.
:func:`blocks` (called by the execute renderer) turns that into the note line and the caption and
image blocks. Blocks: a picture that fails the render reply's checks (launcher/replies/png.py). Does
not block: a picture that lies about the session's own model (it is labelled as the session's).
"""
from __future__ import annotations

from jail.wire.caps import PNG_MAX_BYTES

from launcher.replies import cad as cad_replies
from launcher.replies import validate as replies
from launcher.session import SessionError
from launcher.tools import cad, content

__all__ = ["attach", "blocks", "note_line", "MAX_SHOWN"]

MAX_SHOWN = 10 ** 9
NOTE_CAP = 600


def attach(session, result: dict, enabled: bool = True) -> dict:
    """Add ``show_image`` (``{"png_b64", "caption"}``) or ``show_note`` to a successful execute result
    whose ``shown`` count is positive; ``result["shown"]`` becomes an int (0 when absent or invalid)."""
    if not isinstance(result, dict):
        return result
    shown = replies.count(result.get("shown"), MAX_SHOWN) or 0
    result["shown"] = shown
    if result.get("ok") is not True or not shown or not enabled:
        return result
    req = cad.render_request()  # the render tool's defaults, checks and reply checks
    req["shown"] = True         # only what show() displayed (never the default selection)
    try:
        msg, blob = session.ask(req, "render", cap=PNG_MAX_BYTES + 65536)
        r = cad_replies.render_reply(msg, blob, req)
    except cad_replies.ReplyRefused as e:
        r = {"ok": False, "error": str(e)}
    except SessionError as e:  # timed out, died, cancelled: the session is unchanged
        r = {"ok": False, "error": str(e)}
    except Exception as e:  # noqa: BLE001 - a launcher bug must not lose the call's result
        r = {"ok": False, "error": f"the launcher could not handle it ({type(e).__name__})"}
    if isinstance(r, dict) and r.get("ok") is True and isinstance(r.get("png_b64"), str):
        result["show_image"] = {"png_b64": r["png_b64"],
                                "caption": f"show(): what the code displayed, drawn in the session: {r['caption']}"}
    else:
        err = r.get("error") if isinstance(r, dict) else None
        result["show_note"] = ("show() was called but no picture was made (render: "
                               + (replies.line(err, NOTE_CAP) or "failed")
                               + "); the call itself succeeded: use render to look at the objects")
    return result


def note_line(result: dict) -> str | None:
    """The text line for a show() that made no picture, or None."""
    note = result.get("show_note") if isinstance(result, dict) else None
    return f"Note: {note}" if isinstance(note, str) else None


def blocks(result: dict) -> list[dict]:
    """The caption and image blocks of the picture :func:`attach` kept (none when it kept none)."""
    img = result.get("show_image") if isinstance(result, dict) else None
    if not isinstance(img, dict) or not isinstance(img.get("png_b64"), str):
        return []
    return [content.text(str(img.get("caption", "show()"))), content.image(img["png_b64"])]
