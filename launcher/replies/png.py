"""The outer format of a PNG that came back from a jailed ``render``: checked, never decoded.

The bytes come from a process that may have run hostile code; the launcher passes them on
untouched (as MCP image content) after checking only the container.

Blocks: more than ``PNG_MAX_BYTES`` (or the caller's smaller cap), a bad signature, a malformed
chunk walk (lengths, four-letter types, CRC-32s, IHDR first and 13 bytes, IEND last and empty,
nothing after it, at least one IDAT), any chunk but IHDR/PLTE/IDAT/IEND (no text or metadata, no
APNG), an IHDR size outside 1..``max_dim`` or other than what was asked for, invalid bit depth,
colour type, compression, filter or interlace. Does not block: a zlib bomb inside IDAT (never
decompressed here; the byte cap bounds what is forwarded) or a lying picture of the session's
own model. Pure functions; no I/O.
"""
from __future__ import annotations

import struct
import zlib

from jail.wire.caps import PNG_MAX_BYTES, RENDER_MAX_PX

__all__ = ["PngError", "check_png", "SIGNATURE"]

SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_CHUNKS = 100_000
ALLOWED = {b"IHDR", b"PLTE", b"IDAT", b"IEND"}
_DEPTHS = {0: {1, 2, 4, 8, 16}, 2: {8, 16}, 3: {1, 2, 4, 8}, 4: {8, 16}, 6: {8, 16}}


class PngError(ValueError):
    """The bytes are not a PNG this launcher forwards; the message says which check failed."""


def check_png(data: bytes, *, max_bytes: int = PNG_MAX_BYTES, max_dim: int = RENDER_MAX_PX,
              expect_size: tuple[int, int] | None = None) -> tuple[int, int]:
    """Return ``(width, height)`` of a well-formed PNG container, else raise ``PngError``."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise PngError("not bytes")
    data = bytes(data)
    cap = min(int(max_bytes), PNG_MAX_BYTES)
    if len(data) > cap:
        raise PngError(f"image of {len(data)} bytes is over the cap of {cap} bytes")
    if not data.startswith(SIGNATURE):
        raise PngError("not a PNG (bad signature)")
    pos, n, end = len(SIGNATURE), 0, len(data)
    width = height = None
    idat = False
    while True:
        if pos + 12 > end:
            raise PngError("truncated chunk")
        length, ctype = struct.unpack_from(">I4s", data, pos)
        if length > end - pos - 12:
            raise PngError("chunk length runs past the end")
        if not all(65 <= c <= 90 or 97 <= c <= 122 for c in ctype):
            raise PngError("chunk type is not four ASCII letters")
        body = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack_from(">I", data, pos + 8 + length)
        if zlib.crc32(ctype + body) & 0xFFFFFFFF != crc:
            raise PngError(f"bad CRC in a {ctype.decode('ascii')} chunk")
        if ctype not in ALLOWED:
            raise PngError(f"chunk type {ctype.decode('ascii')} is not allowed (only IHDR, PLTE, IDAT, IEND)")
        if n == 0:
            if ctype != b"IHDR" or length != 13:
                raise PngError("the first chunk is not a 13-byte IHDR")
            width, height, depth, colour, comp, filt, inter = struct.unpack(">IIBBBBB", body)
            if not (1 <= width <= max_dim and 1 <= height <= max_dim):
                raise PngError(f"image size {width}x{height} is outside 1..{max_dim} pixels")
            if depth not in _DEPTHS.get(colour, ()):
                raise PngError("invalid bit depth / colour type")
            if comp != 0 or filt != 0 or inter not in (0, 1):
                raise PngError("invalid compression, filter or interlace method")
        elif ctype == b"IHDR":
            raise PngError("more than one IHDR")
        if ctype == b"IDAT":
            idat = True
        pos += 12 + length
        n += 1
        if ctype == b"IEND":
            if length != 0:
                raise PngError("IEND is not empty")
            break
        if n > MAX_CHUNKS:
            raise PngError("too many chunks")
    if pos != end:
        raise PngError("bytes after IEND")
    if not idat:
        raise PngError("no image data")
    if expect_size is not None and (width, height) != tuple(expect_size):
        raise PngError(f"image is {width}x{height}, {expect_size[0]}x{expect_size[1]} was asked for")
    return width, height
