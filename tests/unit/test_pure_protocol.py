"""jail/wire/protocol.py's strict decoding directly: anything that is not a plain, finite, shallow
enough JSON object with a string ``t`` is a ProtocolError, and nothing else ever escapes."""
from __future__ import annotations

import json
import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jail.wire.protocol import ProtocolError, decode, encode, loads_strict

PROPS = settings(max_examples=200, deadline=None, database=None)

TEXT = st.text(st.characters(exclude_categories=()), max_size=30)
FINITE_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10 ** 30, 10 ** 30) | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT, lambda c: st.lists(c, max_size=5) | st.dictionaries(TEXT, c, max_size=5), max_leaves=30)


def payload(obj_text: bytes, blob: bytes = b"") -> bytes:
    return struct.pack(">I", len(obj_text)) + obj_text + blob


# ------------------------------------------------------------------ loads_strict
@pytest.mark.parametrize("text", ["NaN", "[1, NaN]", '{"a": Infinity}', "-Infinity", '{"t": "x", "v": [NaN]}'])
def test_non_finite_literals_are_refused(text):
    with pytest.raises(ProtocolError, match="non-finite"):
        loads_strict(text)


@pytest.mark.parametrize("depth", [10_000, 200_000])
def test_deep_nesting_is_refused(depth):
    for text in ("[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth):
        with pytest.raises(ProtocolError):
            loads_strict(text)


def test_integers_over_the_digit_limit_are_refused():
    with pytest.raises(ProtocolError):
        loads_strict("1" * 5000)
    assert loads_strict("1" * 4000) == int("1" * 4000)


def test_an_out_of_range_float_is_infinity_for_the_readers_to_drop():
    # documented: the reader keeps finite numbers only (launcher/replies/validate.py)
    assert loads_strict("1e999") == math.inf


@PROPS
@given(FINITE_JSON)
def test_finite_json_round_trips(v):
    assert loads_strict(json.dumps(v, allow_nan=False)) == v


@PROPS
@given(st.text(max_size=200) | st.text(st.sampled_from('[]{}",:0123456789.eE+-tnfrualsNIiy \\'), max_size=200))
def test_arbitrary_text_parses_or_is_a_protocol_error(text):
    try:
        loads_strict(text)
    except ProtocolError:
        pass


# ------------------------------------------------------------------ decode
@PROPS
@given(st.dictionaries(TEXT, FINITE_JSON, max_size=5), TEXT, st.binary(max_size=100))
def test_encode_then_decode_gives_the_message_back(d, t, blob):
    obj = {**d, "t": t}
    frames = encode(obj, blob)
    assert all(f[:1] in (b"M", b"E") for f in frames) and frames[-1][:1] == b"E"
    got, rest = decode(b"".join(f[1:] for f in frames))
    assert got == json.loads(json.dumps(obj)) and rest == blob


@PROPS
@given(st.binary(max_size=300))
def test_arbitrary_bytes_decode_or_are_a_protocol_error(data):
    for p in (data, payload(data)):
        try:
            obj, blob = decode(p)
        except ProtocolError:
            continue
        assert isinstance(obj, dict) and isinstance(obj.get("t"), str) and isinstance(blob, bytes)


@pytest.mark.parametrize("p, match", [
    (b"", "shorter"), (b"\0\0\0", "shorter"),
    (struct.pack(">I", 100) + b'{"t":"x"}', "exceeds the message"),
    (payload(b'{"t":"x"}\xff'), "UTF-8"),
    (payload(b'["t"]'), "string 't'"), (payload(b'{"t":1}'), "string 't'"), (payload(b'"t"'), "string 't'"),
    (payload(b'{"t":"x","v":NaN}'), "non-finite"),
    (payload(b'{"t":"x"'), "not valid JSON"),
])
def test_malformed_payloads_are_refused(p, match):
    with pytest.raises(ProtocolError, match=match):
        decode(p)


def test_the_json_cap_is_checked_before_parsing():
    big = payload(json.dumps({"t": "x", "s": "a" * 1000}).encode())
    assert decode(big)[0]["t"] == "x"
    with pytest.raises(ProtocolError, match="cap"):
        decode(big, max_json=100)
