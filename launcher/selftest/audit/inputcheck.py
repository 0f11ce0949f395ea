"""``then: inputs``: what of the input directory reaches a session and its replies.

The audit's input directory (``planted.INPUT_FILES``) holds ``part.step`` beside ``.env``,
``.git/config``, ``notes.txt``, ``customer-part.txt``, ``.hidden/part.step`` (a real STEP file in
a dot directory) and malformed CAD files, each carrying its own token. ``list_inputs`` must offer
no dot path and no non-CAD file. ``import_file`` on each of those, with and without ``format=``,
runs on the attacker session (whose payload may have patched the jail's parser to echo what it
is given) and must not be served (``ok``); the malformed CAD files are imported into a fresh,
honest session: the parse error must not echo them. No input token may be in any reply, JSON or
rendered text.
"""
from __future__ import annotations

from launcher.files.inputs import EXTENSIONS
from launcher.selftest.audit.exits import scan, toolset
from launcher.tools.files import import_file_content, list_inputs_content

#: (file, format) pairs that must never be served: dot components, non-CAD extensions.
REFUSED = ((".env", ""), (".env", "dxf"), (".env", "stl"), (".git/config", ""), (".git/config", "step"),
           ("notes.txt", ""), ("notes.txt", "svg"), ("customer-part.txt", "dxf"), (".hidden/part.step", ""),
           (".hidden/part.step", "step"))
MALFORMED = ("broken.dxf", "broken.3mf", "broken.stl")


def _offered_wrongly(name: str) -> bool:
    parts = name.split("/")
    ext = ("." + parts[-1].rsplit(".", 1)[-1].lower()) if "." in parts[-1] else ""
    return any(p.startswith(".") for p in parts) or ext not in EXTENSIONS


def _import(ts, filename: str, fmt: str, leaks: dict) -> tuple[dict, list[str]]:
    r = ts.call("import_file", {"filename": filename, "name": "imported", "format": fmt})
    where = f"import_file {filename!r} format={fmt!r}"
    fired = scan(where, r, leaks)
    try:
        fired += scan(where + " (text)", import_file_content(r)[0]["text"], leaks)
    except Exception:  # noqa: BLE001 - an error dict has no content to render
        pass
    return r, fired


def check_inputs(rig, values: dict) -> list[str]:
    leaks = rig.canaries.leak_markers()
    ts = toolset(rig)
    lst = ts.call("list_inputs", {})
    fired = scan("list_inputs", lst, leaks)
    if "error" not in lst:
        fired += scan("list_inputs (text)", list_inputs_content(lst)[0]["text"], leaks)
    wrong = [f.get("name", "?") for f in lst.get("files") or [] if _offered_wrongly(str(f.get("name", "")))]
    if wrong:
        fired.append(f"inputs: list_inputs offers {', '.join(map(str, wrong))[:160]}")
    for filename, fmt in REFUSED:
        r, f = _import(ts, filename, fmt, leaks)
        fired += f
        if r.get("ok") is True:
            fired.append(f"inputs: import_file({filename!r}, format={fmt!r}) was served to the session")
    honest = rig.launcher.new_session()
    try:
        ts2 = toolset(rig, honest)
        for filename in MALFORMED:
            fired += _import(ts2, filename, "", leaks)[1]
    finally:
        rig.launcher.close_session(honest)
    return fired
