"""What the launcher keeps of a jailed process's reply: strict types, finite numbers, bounded size.

A reply comes from a process that ran the user's code, so it may say anything the wire format
allows (jail/wire/protocol.py already refused non-finite numbers, huge integers, deep or
oversized JSON). Every field the launcher uses is rebuilt with its type checked, every string
made safe (sanitize.py) and cut, every list and dict capped in count and size: execute results
(stdout+stderr within ``max_output_bytes``, at most ``MAX_OBJECTS`` summaries in about
``max_result_bytes // 2``, error fields cut), state summaries, probe evidence, export replies.
Unknown fields (a newer jail may add some) are kept only as a few bounded generic copies
(:func:`bounded`). A reply that fails to validate is never an exception: the caller gets a safe
default. Does not block: a reply that lies about its own call.
"""
from __future__ import annotations

import math
import re

from jail.wire.caps import (FUNCTION_NAME_CAP, HINT_CAP, MESSAGE_CAP, NAME_CAP, REPR_CAP as JAIL_REPR_CAP,
                             SOURCE_LINE_CAP, SUMMARY_MAX_OBJECTS, VALUE_REPR_CAP)

from launcher.replies import sanitize

MAX_OBJECTS = SUMMARY_MAX_OBJECTS + 1  # the runner's summaries plus its "omitted" item
REPR_CAP = JAIL_REPR_CAP + 40  # the jail's cap, and the length note of a bytes value
MAX_EXTRA_KEYS = 8         # unknown fields kept per dict
_INT_MAX = 2 ** 53


def number(x) -> float | int | None:
    """A finite int/float (not a bool), else None."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    if isinstance(x, int):
        return x if -_INT_MAX <= x <= _INT_MAX else None
    return x if math.isfinite(x) else None


def count(x, hi: int = _INT_MAX) -> int | None:
    """A non-negative int up to ``hi`` (not a bool), else None."""
    if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x <= hi:
        return None
    return x


def line(x, cap: int) -> str | None:
    """A one-line safe string (newlines escaped), or None when ``x`` is not a string."""
    return sanitize.text(x, cap, keep="") if isinstance(x, str) else None


_NAME_PART = re.compile(r"(?:[A-Za-z_][A-Za-z0-9_]*|<(?:module|lambda|listcomp|setcomp|dictcomp|genexpr|locals)>)\Z")


def function_name(x) -> str | None:
    """A function name from the jail, or None: dotted parts that are each a Python identifier or one of
    ``<module> <lambda> <listcomp> <setcomp> <dictcomp> <genexpr> <locals>`` (``f``, ``Part.rib``,
    ``f.<locals>.<lambda>``), at most ``FUNCTION_NAME_CAP`` characters once shown. Non-ASCII
    identifiers come back ``\\uXXXX``-escaped (nothing invisible); anything else is dropped."""
    if not isinstance(x, str) or not x or len(x) > FUNCTION_NAME_CAP:
        return None
    parts = x.split(".")
    if not all(p.isidentifier() or _NAME_PART.match(p) for p in parts):
        return None
    if not x.isascii():
        x = x.encode("ascii", "backslashreplace").decode("ascii")
        if len(x) > FUNCTION_NAME_CAP:
            return None
    return x


def line_number(x) -> int | None:
    """A source line number: an int from 1 to 10**7 (not a bool), else None."""
    n = count(x, 10 ** 7)
    return n if n else None


class _Budget:
    def __init__(self, n: int):
        self.left = n

    def spend(self, n: int) -> bool:
        self.left -= n
        return self.left >= 0


def bounded(v, *, depth: int = 4, items: int = 64, str_cap: int = 2000, budget: _Budget | None = None):
    """A JSON-safe, bounded copy of ``v``: safe strings, finite numbers, at most ``depth`` levels,
    ``items`` entries per list/dict and about ``budget`` characters in all; anything else is None."""
    budget = budget if budget is not None else _Budget(64 * 1024)
    if v is None or isinstance(v, bool):
        budget.spend(4)
        return v
    if isinstance(v, (int, float)):
        budget.spend(8)
        return number(v)
    if isinstance(v, str):
        s = sanitize.text(v, min(str_cap, max(budget.left, 0)))
        budget.spend(len(s) + 2)
        return s
    if depth <= 0 or budget.left <= 0:
        return None
    if isinstance(v, list):
        budget.spend(2)  # the brackets: a structure of empty containers is charged too
        out = []
        for x in v[:items]:
            if budget.left <= 0:
                break
            budget.spend(1)
            out.append(bounded(x, depth=depth - 1, items=items, str_cap=str_cap, budget=budget))
        return out
    if isinstance(v, dict):
        budget.spend(2)
        out = {}
        for k, x in list(v.items())[:items]:
            if budget.left <= 0:
                break
            key = sanitize.text(k, 64, keep="")
            budget.spend(len(key) + 2)
            out[key] = bounded(x, depth=depth - 1, items=items, str_cap=str_cap, budget=budget)
        return out
    return None


def _extras(src: dict, known, out: dict, budget: _Budget) -> None:
    n = 0
    for k, v in src.items():
        if k in known or k in out:
            continue
        if n >= MAX_EXTRA_KEYS or budget.left <= 0:
            break
        if not isinstance(k, str) or not k.isidentifier() or len(k) > 40:
            continue
        out[k] = bounded(v, depth=3, items=32, str_cap=REPR_CAP, budget=budget)
        budget.spend(len(k))
        n += 1


# ------------------------------------------------------------------ object summaries
_STR, _NUM, _BOOL, _BBOX, _COUNTS, _SHAPE, _COUNT = range(7)
_FIELDS = {"name": (_STR, NAME_CAP), "type": (_STR, NAME_CAP), "kind": (_STR, 32), "of": (_STR, 200),
           "change": (_STR, 16),
           "repr": (_STR, REPR_CAP), "dtype": (_STR, 50), "summary_error": (_STR, 2 * REPR_CAP),
           "volume": (_NUM, 0), "area": (_NUM, 0), "length": (_NUM, 0),
           "valid": (_BOOL, 0), "empty": (_BOOL, 0), "bbox": (_BBOX, 0), "counts": (_COUNTS, 0),
           "shape": (_SHAPE, 0), "count": (_COUNT, 0)}


def _fnum(x):
    """number() with the common case (a finite float) first."""
    if type(x) is float:
        return x if x - x == 0.0 else None
    return number(x)


def _vec3(v) -> list | None:
    if type(v) is not list or len(v) != 3:
        return None
    a, b, c = v
    if type(a) is float and type(b) is float and type(c) is float and a - a == 0.0 and b - b == 0.0 \
            and c - c == 0.0:
        return v  # the common case: three finite floats (a fresh list from the parser: kept as it is)
    return [_fnum(x) for x in v]


def _counts(v) -> dict:
    items = list(v.items())[:16]
    if all(type(n) is str and type(x) is int and 0 <= x <= _INT_MAX and len(n) <= 32 and n.isidentifier()
           for n, x in items):
        return v if len(items) == len(v) else dict(items)
    return {n: x for n, x in items
            if type(n) is str and len(n) <= 32 and n.isidentifier() and count(x) is not None}


def _short_line(v, cap: int) -> str | None:
    if type(v) is not str:
        return None
    if len(v) <= cap and sanitize._OK[""].fullmatch(v) is not None:
        return v
    return sanitize.text(v, cap, keep="")


def summary(o, budget: _Budget) -> dict | None:
    """One object summary (see ``jail.cad.summary.summarize``) with known fields typed, or None."""
    if type(o) is not dict:
        return None
    out: dict = {}
    spent = 0
    extra: dict = {}
    for k, v in o.items():
        f = _FIELDS.get(k)
        if f is None:
            if len(extra) < MAX_EXTRA_KEYS:
                extra[k] = v
            continue
        kind, cap = f
        if kind == _STR:
            sv = _short_line(v, cap)
            if sv is not None:
                out[k] = sv
                spent += len(sv) + 8
        elif kind == _NUM:
            out[k] = _fnum(v)
            spent += 16
        elif kind == _BOOL:
            if type(v) is bool:
                out[k] = v
        elif kind == _BBOX:
            if type(v) is dict:
                mn, mx, sz = _vec3(v.get("min")), _vec3(v.get("max")), _vec3(v.get("size"))
                if mn is not None and mx is not None and sz is not None:
                    out[k] = {"min": mn, "max": mx, "size": sz}
                    spent += 120
        elif kind == _COUNTS:
            if type(v) is dict:
                c = _counts(v)
                out[k] = c
                spent += 20 * len(c)
        elif kind == _SHAPE:
            if type(v) is list and len(v) <= 32 and all(count(x) is not None for x in v):
                out[k] = list(v)
                spent += 8 * len(v)
        elif kind == _COUNT:
            if count(v) is not None:
                out[k] = v
    out.setdefault("name", "?")
    out.setdefault("type", "")
    budget.spend(spent)
    if extra:
        _extras(extra, (), out, budget)
    return out


def objects(lst, budget_chars: int) -> list[dict]:
    """At most ``MAX_OBJECTS`` summaries and about ``budget_chars`` characters of them; what does not
    fit is counted in a last ``omitted`` item."""
    if not isinstance(lst, list):
        return []
    budget = _Budget(budget_chars)
    out: list[dict] = []
    omitted = 0
    for o in lst:
        if len(out) >= MAX_OBJECTS - 1 or budget.left <= 0:
            omitted += 1
            continue
        s = summary(o, budget)
        if s is not None:
            out.append(s)
    if omitted:
        prev = out[-1] if out and out[-1].get("kind") == "omitted" else None
        if prev is not None and count(prev.get("count")) is not None:
            prev["count"] += omitted
        else:
            out.append({"name": "...", "type": "", "kind": "omitted", "count": omitted})
    return out


# ------------------------------------------------------------------ execute results
_ERR_STR = {"type": NAME_CAP, "rule": 64, "text": SOURCE_LINE_CAP, "hint": HINT_CAP}
_ERR_KNOWN = {"type", "message", "line", "col", "source_line", "rule", "text", "hint", "context", "origin",
              "function"}
CONTEXT_MAX = 9            # source lines shown around a failing line


_CONTEXT_LINE = re.compile(r"[> ] {1,9}[0-9]{1,8} \| ")


def context(v) -> list[str]:
    """Numbered source lines around a failing line: at most CONTEXT_MAX one-line strings, each in the
    runner's shape ``"> 12 | code"`` / ``"  11 | code"`` (others are dropped)."""
    if not isinstance(v, list):
        return []
    return [line(x, SOURCE_LINE_CAP + 16) for x in v[:CONTEXT_MAX]
            if isinstance(x, str) and _CONTEXT_LINE.match(x)]


def origin(v) -> dict | None:
    """Where the innermost session frame is: ``{"call", "line", "function", "source_line", "context"}``."""
    if not isinstance(v, dict):
        return None
    return {"call": count(v.get("call"), 10 ** 9), "line": line_number(v.get("line")),
            "function": function_name(v.get("function")), "source_line": line(v.get("source_line"), SOURCE_LINE_CAP),
            "context": context(v.get("context"))}


def error(e, budget: _Budget) -> dict:
    e = e if isinstance(e, dict) else {}
    out: dict = {"type": line(e.get("type"), NAME_CAP) or "Error",
                 "message": sanitize.text(e.get("message"), MESSAGE_CAP) if isinstance(e.get("message"), str) else ""}
    for k in ("line", "col"):
        out[k] = count(e.get(k), 10 ** 9)
    sl = e.get("source_line")
    out["source_line"] = line(sl, SOURCE_LINE_CAP)
    for k, cap in _ERR_STR.items():
        if k != "type" and isinstance(e.get(k), str):
            out[k] = line(e[k], cap)
    out["context"] = context(e.get("context"))
    fn = function_name(e.get("function"))
    if fn is not None:
        out["function"] = fn
    o = origin(e.get("origin"))
    if o is not None:
        out["origin"] = o
    _extras(e, _ERR_KNOWN, out, budget)
    return out


_RESULT_KNOWN = {"t", "ok", "stdout", "stderr", "truncated", "objects", "error", "duration_ms", "to", "nonce",
                 "deleted", "value", "call", "note", "files", "shown"}


def head_tail(s: str, max_bytes: int) -> tuple[str, int]:
    """``s`` (a safe string) cut to about ``max_bytes`` UTF-8 bytes keeping its head and its tail,
    with ``[... N bytes not shown ...]`` between them; and N (0 when it fits)."""
    b = s.encode("utf-8")
    if len(b) <= max_bytes:
        return s, 0
    half = max(0, max_bytes // 2)
    head = b[:half].decode("utf-8", "ignore")
    tail = b[len(b) - half:].decode("utf-8", "ignore") if half else ""
    cut = len(b) - len(head.encode("utf-8")) - len(tail.encode("utf-8"))
    return f"{head}\n[... {cut} bytes not shown ...]\n{tail}", cut


def names(v, n: int = MAX_OBJECTS) -> list[str]:
    """A list of at most ``n`` safe one-line names."""
    if not isinstance(v, list):
        return []
    return [line(x, NAME_CAP) for x in v[:n] if isinstance(x, str)]


def result(msg: dict, *, max_output_bytes: int, max_result_bytes: int) -> dict:
    """An execute reply, rebuilt: ``{"ok", "stdout", "stderr", "truncated", "objects", "error",
    "duration_ms"}`` (+ a few bounded unknown fields)."""
    ok = msg.get("ok") is True
    # escaping may grow the text: keep up to 4x before cutting head+tail to the byte cap
    out_text = sanitize.text(msg.get("stdout"), 4 * max_output_bytes + 64)
    err_text = sanitize.text(msg.get("stderr"), 4 * max_output_bytes + 64)
    truncated = msg.get("truncated") is True
    out_text, cut_out = head_tail(out_text, max_output_bytes)
    err_text, cut_err = head_tail(err_text, max(0, max_output_bytes - len(out_text.encode("utf-8"))))
    if cut_out or cut_err:
        truncated = True
        note = f"\n[output cut by the launcher: {cut_out + cut_err} more bytes not shown]\n"
        if cut_err:
            err_text += note
        else:
            out_text += note
    budget = _Budget(max(4096, max_result_bytes // 8))
    dur = number(msg.get("duration_ms"))
    r = {
        "ok": ok,
        "stdout": out_text,
        "stderr": err_text,
        "truncated": truncated,
        "objects": objects(msg.get("objects"), max(16 * 1024, max_result_bytes // 2)) if ok else [],
        "error": None if ok else error(msg.get("error"), budget),
        "duration_ms": dur if dur is not None and dur >= 0 else None,
        "deleted": names(msg.get("deleted")) if ok else [],
        "value": summary(msg.get("value"), budget) if ok and isinstance(msg.get("value"), dict) else None,
        "call": count(msg.get("call"), 10 ** 9),
        "shown": (count(msg.get("shown"), 10 ** 6) or 0) if ok else 0,  # objects passed to show() (show.py)
    }
    if ok and isinstance(msg.get("note"), str):
        r["note"] = line(msg["note"], HINT_CAP)
    if r["value"] is not None and isinstance(msg["value"].get("repr"), str):  # a REPL value: longer than a name's
        r["value"]["repr"] = sanitize.text(msg["value"]["repr"], VALUE_REPR_CAP, keep="\n")
    _extras(msg, _RESULT_KNOWN, r, budget)
    return r


def partial(msg: dict, *, max_output_bytes: int) -> dict:
    """A timed-out call's last words (its SIGUSR2 reply), rebuilt field by field: ``{"stdout",
    "stderr", "line", "function", "source_line", "context", "origin"}``. ``line``: an int from 1
    to 10**7 or None; ``function``: :func:`function_name` or None; ``source_line`` and each of at
    most CONTEXT_MAX ``context`` lines: one escaped line, capped; output: escaped, head and tail
    within ``max_output_bytes``; ``origin``: :func:`origin`. The process may lie: this is only what
    it said, and the launcher shows it labelled as such, never in its own words."""
    out_text, _ = head_tail(sanitize.text(msg.get("stdout"), 4 * max_output_bytes + 64), max_output_bytes)
    err_text, _ = head_tail(sanitize.text(msg.get("stderr"), 4 * max_output_bytes + 64),
                            max(0, max_output_bytes - len(out_text.encode("utf-8"))))
    return {"stdout": out_text, "stderr": err_text, "line": line_number(msg.get("line")),
            "function": function_name(msg.get("function")),
            "source_line": line(msg.get("source_line"), SOURCE_LINE_CAP), "context": context(msg.get("context")),
            "origin": origin(msg.get("origin"))}


# ------------------------------------------------------------------ other replies
def evidence(v) -> dict:
    """Probe/init evidence: a bounded generic copy of a dict (or {})."""
    if not isinstance(v, dict):
        return {}
    return bounded(v, depth=5, items=128, str_cap=2000, budget=_Budget(256 * 1024))


def export_meta(msg: dict) -> dict:
    """An export reply's JSON part: typed ``ok``/``size``/``format``/``view``, bounded ``check``/``source``."""
    out: dict = {"t": "export", "ok": msg.get("ok") is True, "size": count(msg.get("size"))}
    if "error" in msg:
        out["error"] = sanitize.text(str(msg["error"]) if not isinstance(msg["error"], str) else msg["error"],
                                     MESSAGE_CAP, keep="")
    for k, cap in (("format", 16), ("view", 200)):
        if isinstance(msg.get(k), str):
            out[k] = line(msg[k], cap)
    budget = _Budget(16 * 1024)
    for k in ("check", "source"):
        if isinstance(msg.get(k), dict):
            out[k] = bounded(msg[k], depth=3, items=16, str_cap=200, budget=budget)
    _extras(msg, set(out) | {"t", "to"}, out, budget)
    return out


# ------------------------------------------------------------------ files a call wrote (its scratch directory)
class Written:
    """The files a successful call says it wrote: ``entries`` ``[(name, data)]`` cut from the blob, or
    ``refused`` (why the whole list is refused: nothing of it is delivered). Names are the jail's raw
    strings, only type- and length-checked: launcher/files/delivery.py judges them and shows them
    escaped; never put one in a reply unchecked."""

    def __init__(self, entries=(), refused: str | None = None, claimed: int = 0):
        self.entries: list[tuple[str, memoryview]] = list(entries)
        self.refused = refused
        self.claimed = claimed  # how many files the list claimed (shown when refused)

    def __bool__(self) -> bool:
        return bool(self.entries) or self.refused is not None


NAME_BYTES_CAP = 1024  # as safepath.MAX_TOTAL: longer names are refused, never cut (a cut name is another name)


def written(msg: dict, blob, *, max_files: int, max_bytes: int) -> Written:
    """A result's ``files`` (``[{"name": str, "size": int}]``) and the blob they were cut from,
    checked as hostile: a list of at most ``max_files`` entries, each a str name of at most
    NAME_BYTES_CAP UTF-8 bytes and an int size >= 0, the sizes summing exactly to ``len(blob)``
    and to at most ``max_bytes``. Anything else refuses the whole list (a process that lies about
    its own list gets nothing delivered). No ``files`` and an empty blob: an empty Written."""
    files = msg.get("files")
    blob = bytes(blob or b"")
    if files is None and not blob:
        return Written()
    if not isinstance(files, list):
        return Written(refused="the call's file list is not a list")
    n = len(files)
    if n > max_files:
        return Written(refused=f"the call listed {n} files; at most {max_files} are delivered per call", claimed=n)
    sizes, names_ = [], []
    for f in files:
        name, size = (f.get("name"), f.get("size")) if isinstance(f, dict) else (None, None)
        if not isinstance(name, str) or count(size) is None:
            return Written(refused="the call's file list has an entry that is not {name: str, size: int}", claimed=n)
        if len(name.encode("utf-8", "surrogatepass")) > NAME_BYTES_CAP:
            return Written(refused=f"the call's file list has a name over {NAME_BYTES_CAP} bytes", claimed=n)
        names_.append(name)
        sizes.append(size)
    total = sum(sizes)
    if total != len(blob):
        return Written(refused=f"the call's file sizes add up to {total} bytes but it sent {len(blob)}", claimed=n)
    if total > max_bytes:
        return Written(refused=f"the call's files hold {total} bytes; at most {max_bytes} are delivered per call",
                       claimed=n)
    out, at = [], 0
    mv = memoryview(blob)
    for name, size in zip(names_, sizes):
        out.append((name, mv[at:at + size]))  # a view of the blob: no copy
        at += size
    return Written(out, claimed=n)
