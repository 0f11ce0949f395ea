"""launcher/replies/png.py as properties: a PNG container is forwarded only when every byte of it
checks out; tests/unit/test_png_check.py has the named cases."""
from __future__ import annotations

import struct
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jail.wire.caps import RENDER_MAX_PX as MAX_DIM
from launcher.replies.png import SIGNATURE, PngError, check_png

PROPS = settings(max_examples=200, deadline=None, database=None)
DEPTHS = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16), 6: (8, 16)}


def chunk(ctype: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + ctype + body + struct.pack(">I", zlib.crc32(ctype + body) & 0xFFFFFFFF)


@st.composite
def pngs(draw, max_dim: int = MAX_DIM) -> tuple[bytes, int, int]:
    """A well-formed container (the pixels are not decoded, so IDAT may hold any zlib bytes)."""
    w, h = draw(st.integers(1, max_dim)), draw(st.integers(1, max_dim))
    colour = draw(st.sampled_from(sorted(DEPTHS)))
    depth = draw(st.sampled_from(DEPTHS[colour]))
    out = SIGNATURE + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, colour, 0, 0, draw(st.sampled_from([0, 1]))))
    if colour == 3 or draw(st.booleans()):
        out += chunk(b"PLTE", draw(st.binary(min_size=3, max_size=30)))
    for data in draw(st.lists(st.binary(max_size=64), min_size=1, max_size=3)):
        out += chunk(b"IDAT", zlib.compress(data))
    return out + chunk(b"IEND", b""), w, h


@PROPS
@given(pngs())
def test_a_well_formed_container_passes_with_its_size(p):
    data, w, h = p
    assert check_png(data) == (w, h)
    assert check_png(data, expect_size=(w, h)) == (w, h)
    with pytest.raises(PngError):
        check_png(data, expect_size=(w + 1, h))


@PROPS
@given(pngs(max_dim=64), st.data())
def test_any_changed_byte_is_refused(p, data):
    raw, _, _ = p
    i = data.draw(st.integers(0, len(raw) - 1))
    flip = data.draw(st.integers(1, 255))
    bad = raw[:i] + bytes([raw[i] ^ flip]) + raw[i + 1:]
    with pytest.raises(PngError):  # signature, length, type, body or CRC: every byte is checked
        check_png(bad)


@PROPS
@given(pngs(max_dim=64), st.data())
def test_a_cut_or_an_extension_is_refused(p, data):
    raw, _, _ = p
    with pytest.raises(PngError):
        check_png(raw[:data.draw(st.integers(0, len(raw) - 1))])
    with pytest.raises(PngError):
        check_png(raw + data.draw(st.binary(min_size=1, max_size=20)))


@PROPS
@given(st.binary(max_size=200) | st.binary(max_size=200).map(lambda b: SIGNATURE + b))
def test_arbitrary_bytes_are_refused_with_png_error_only(data):
    try:
        w, h = check_png(data)
    except PngError:
        return
    assert 1 <= w <= MAX_DIM and 1 <= h <= MAX_DIM  # (practically never reached: CRCs)


@pytest.mark.parametrize("ctype", [b"tEXt", b"iTXt", b"zTXt", b"eXIf", b"acTL", b"fcTL", b"iCCP", b"gAMA", b"abcd"])
def test_chunks_other_than_the_critical_four_are_refused(ctype):
    head = SIGNATURE + chunk(b"IHDR", struct.pack(">IIBBBBB", 8, 8, 8, 2, 0, 0, 0))
    tail = chunk(b"IDAT", zlib.compress(b"\0" * 10)) + chunk(b"IEND", b"")
    assert check_png(head + tail) == (8, 8)
    with pytest.raises(PngError, match="not allowed"):
        check_png(head + chunk(ctype, b"x" * 8) + tail)


@pytest.mark.parametrize("w, h", [(0, 8), (8, 0), (MAX_DIM + 1, 8), (8, MAX_DIM + 1), (2 ** 31, 8)])
def test_sizes_outside_the_bounds_are_refused(w, h):
    data = (SIGNATURE + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b""))
    with pytest.raises(PngError, match="outside"):
        check_png(data)


def test_the_byte_cap_is_checked_first_and_never_raised_by_the_caller():
    data = SIGNATURE + b"\0" * 100
    with pytest.raises(PngError, match="over the cap"):
        check_png(data, max_bytes=50)
    with pytest.raises(PngError, match="over the cap"):
        check_png(b"\0" * (8 * 1024 * 1024 + 1), max_bytes=10 ** 12)  # the module's cap still holds
