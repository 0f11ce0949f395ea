"""The daemon's log format: one ``key=value`` line per event on stderr (journald-friendly).

``level=info logger=build123d_launcher.daemon event=connect conn=1 peer_pid=42 ...``. Values are
quoted when needed, with every control character, bidi override, line separator and lone
surrogate escaped, so nothing a client or a session sends can start a forged record. Timestamps
are left out under journald (``$JOURNAL_STREAM``), which adds its own.
"""
from __future__ import annotations

import logging
import os
import sys
import time

from launcher.replies import sanitize

log = logging.getLogger("build123d_launcher.daemon")


def _quote(v) -> str:
    """One log value: quoted when needed, with every control character, bidi override, line
    separator and lone surrogate escaped (launcher/replies/sanitize.py), so no value can start a record."""
    s = str(v)
    if s == "" or any(c in s for c in ' "=\\') or sanitize.unsafe(s, keep=""):
        return '"' + sanitize.text(s.replace("\\", "\\\\").replace('"', '\\"'), keep="") + '"'
    return s


class KeyValueFormatter(logging.Formatter):
    """``level=info logger=x event=y k=v ...``: one line per record, no raw newlines.

    A message whose first word is not ``key=value`` becomes ``event=<word>``;
    anything else that is not ``key=value`` is kept in a quoted ``msg=``.
    Timestamps are left out under journald (``$JOURNAL_STREAM``), which adds its own.
    """

    def __init__(self, timestamps: bool | None = None):
        super().__init__()
        self.timestamps = (not os.environ.get("JOURNAL_STREAM")) if timestamps is None else timestamps

    def format(self, record: logging.LogRecord) -> str:
        msg = record.getMessage()
        head = []
        if self.timestamps:
            head.append("ts=" + time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
                        + f".{int(record.msecs):03d}Z")
        head += [f"level={record.levelname.lower()}", f"logger={record.name}"]
        words = msg.split(" ")
        body = []
        if getattr(record, "kv", False) and not sanitize.unsafe(msg, keep=""):
            body.append(msg)
        elif sanitize.unsafe(msg, keep=""):  # a control character, \r, U+2028, a bidi override ...
            body.append("msg=" + _quote(msg))
        elif words and words[0] and "=" not in words[0] and "\n" not in msg and all(
                "=" in w for w in words[1:] if w):
            body.append(f"event={_quote(words[0])}")
            body += [w for w in words[1:] if w]
        elif all("=" in w for w in words if w) and "\n" not in msg and msg:
            body += [w for w in words if w]
        else:
            body.append("msg=" + _quote(msg))
        if record.exc_info:
            body.append("exc=" + _quote(self.formatException(record.exc_info)))
        return " ".join(head + body)


def event(name: str, level: int = logging.INFO, *, exc_info=False, **kv) -> None:
    """Log one structured event: ``event=name k=v ...`` (values quoted as needed)."""
    line = " ".join([f"event={_quote(name)}"] + [f"{k}={_quote(v)}" for k, v in kv.items()])
    log.log(level, "%s", line, extra={"kv": True}, exc_info=exc_info)


def setup_logging(verbose: bool = False) -> None:
    root = logging.getLogger()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(KeyValueFormatter())
    for h in list(root.handlers):
        root.removeHandler(h)
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
