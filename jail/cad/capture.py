"""Bounded capture of user code's stdout and stderr.

``BoundedOutput(limit)`` hands out text streams that share one byte budget: the first half of
``limit`` bytes (UTF-8) is kept as written (the head), the last half as whole lines in write order
across both streams (the tail); what falls between is counted, not stored, and shown in place as
``[... N bytes, L lines not shown ...]``. Memory stays bounded whatever is printed.

Does not capture: output written straight to file descriptors 1/2 by C code (OCP); the
supervisor owns those descriptors.
"""

from __future__ import annotations

import io

__all__ = ["BoundedOutput"]

MARKER_RESERVE = 64   # bytes kept free per stream for its "[... N bytes not shown ...]" line

class BoundedOutput:
    """Shared byte budget for stdout+stderr: keeps the first half of ``limit`` bytes (the head)
    and the last half (the tail, in write order across both streams); what falls between is
    counted, not stored, and reported in place as ``[... N bytes (L lines) not shown ...]``."""

    def __init__(self, limit: int):
        self.limit = max(int(limit), 0)
        usable = self.limit - min(2 * MARKER_RESERVE, self.limit // 4)  # room for the markers
        self.head_limit = usable - usable // 2
        self.tail_limit = usable // 2
        self.used = 0                 # head bytes used
        self.tail: list = []          # [stream, text, bytes] chunks, oldest first
        self.tail_used = 0
        self.streams: dict[str, _BoundedStream] = {}

    def stream(self, name: str) -> "_BoundedStream":
        s = _BoundedStream(self, name)
        self.streams[name] = s
        return s

    @property
    def truncated(self) -> bool:
        return any(s.dropped for s in self.streams.values())

    def _to_tail(self, stream: "_BoundedStream", s: str, size: int) -> None:
        cap = self.tail_limit
        if size >= cap:  # this write alone fills the tail
            for st, txt, n in self.tail:
                st._drop(txt, n)
            self.tail.clear()
            self.tail_used = 0
            head, keep = _split_tail(s, cap)
            if head and not head.endswith("\n"):
                head, keep = _to_line_start(head, keep)
            stream._drop(head, size - _utf8_len(keep))
            s, size = keep, _utf8_len(keep)
        last = self.tail[-1] if self.tail else None
        if last is not None and last[0] is stream and not last[1].endswith("\n") and last[2] + size <= cap:
            last[1] += s  # the rest of a line (print writes the text, then "\n"): one chunk per line
            last[2] += size
        else:
            self.tail.append([stream, s, size])
        self.tail_used += size
        while self.tail_used > cap and self.tail:
            first = self.tail[0]
            over = self.tail_used - cap
            if first[2] <= over:
                self.tail.pop(0)
                self.tail_used -= first[2]
                first[0]._drop(first[1], first[2])
            else:
                cut, keep = _split_head(first[1], over)
                if not cut.endswith("\n") and "\n" in keep:  # drop the rest of a cut line too
                    i = keep.index("\n") + 1
                    cut, keep = cut + keep[:i], keep[i:]
                n = _utf8_len(cut)
                first[0]._drop(cut, n)
                first[1], first[2] = keep, first[2] - n
                self.tail_used -= n
                if not keep:
                    self.tail.pop(0)

    def tail_of(self, stream: "_BoundedStream") -> str:
        return "".join(c[1] for c in self.tail if c[0] is stream)


def _utf8_len(s: str) -> int:
    if s.isascii():  # O(1) in CPython
        return len(s)
    return len(s.encode("utf-8", "surrogatepass"))


def _split_head(s: str, nbytes: int) -> tuple[str, str]:
    """(the first ``nbytes`` bytes of ``s``, at a character boundary at or after them; the rest)."""
    if s.isascii():
        return s[:nbytes], s[nbytes:]
    b = s.encode("utf-8", "surrogatepass")
    cut = b[:nbytes].decode("utf-8", "ignore")
    if _utf8_len(cut) < nbytes:  # the character that straddles the cut goes too
        cut = s[:len(cut) + 1]
    return cut, s[len(cut):]


def _to_line_start(cut: str, keep: str) -> tuple[str, str]:
    """Move the cut to the start of the next line of ``keep`` (if one starts inside it)."""
    i = keep.find("\n")
    if 0 <= i < len(keep) - 1:
        return cut + keep[:i + 1], keep[i + 1:]
    return cut, keep


def _split_tail(s: str, nbytes: int) -> tuple[str, str]:
    """(the rest; the last at most ``nbytes`` bytes of ``s``, at a character boundary)."""
    if s.isascii():
        return (s[:-nbytes], s[-nbytes:]) if nbytes else (s, "")
    b = s.encode("utf-8", "surrogatepass")
    keep = b[len(b) - nbytes:].decode("utf-8", "ignore") if nbytes else ""
    return s[:len(s) - len(keep)], keep


class _BoundedStream(io.TextIOBase):
    def __init__(self, owner: BoundedOutput, name: str):
        super().__init__()
        self._owner = owner
        self._name = name
        self._parts: list[str] = []
        self.dropped = 0        # bytes not kept
        self.dropped_lines = 0  # newlines in them

    def _drop(self, s: str, n: int) -> None:
        self.dropped += n
        self.dropped_lines += s.count("\n")

    # text file API used by print() and friends
    @property
    def encoding(self):  # type: ignore[override]
        return "utf-8"

    @property
    def errors(self):  # type: ignore[override]
        return "replace"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise io.UnsupportedOperation("captured output has no file descriptor")

    def flush(self) -> None:
        pass

    def close(self) -> None:  # user code closing sys.stdout must not break capture
        pass

    @property
    def closed(self) -> bool:  # type: ignore[override]
        return False

    def write(self, s) -> int:
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        s = str.__str__(s)  # an exact str: no user methods later
        n = len(s)
        if not n:
            return 0
        o = self._owner
        size = _utf8_len(s)
        room = o.head_limit - o.used
        if room > 0:
            if size <= room:
                self._parts.append(s)
                o.used += size
                return n
            head, s = _split_head(s, room)
            head_n = _utf8_len(head)
            if head_n > room:  # a character straddles the boundary: it goes to the tail
                s, head, head_n = head[-1:] + s, head[:-1], _utf8_len(head[:-1])
            self._parts.append(head)
            o.used += head_n
            size -= head_n
            o.used = max(o.used, o.head_limit)  # the head is closed from now on
        if o.tail_limit <= 0:
            self._drop(s, size)
        else:
            o._to_tail(self, s, size)
        return n

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def getvalue(self) -> str:
        text = "".join(self._parts)
        if self.dropped:
            if text and not text.endswith("\n"):
                text += "\n"
            lines = f", {self.dropped_lines} line{'s' if self.dropped_lines != 1 else ''}" \
                if self.dropped_lines else ""
            text += f"[... {self.dropped} bytes{lines} not shown ...]\n"
        text += self._owner.tail_of(self)
        # lone surrogates cannot go into JSON as UTF-8
        return text.encode("utf-8", "replace").decode("utf-8") if not text.isascii() else text
