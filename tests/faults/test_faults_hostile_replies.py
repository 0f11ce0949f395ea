"""A session process, patched by user code, sends hostile replies: the launcher holds nothing
unbounded, blocks on nothing, crashes on nothing, and shows nothing that can deceive.

Runs under ``faults_os_only`` (AST policy and filtered builtins off: only the OS
layers), so user code can write raw datagrams in the wire format to the session
socket (fd 3) and patch the jail-side code of its own process (which the
processes forked from it inherit). For every payload:

* the call gets an error reply (or, for a well-formed forged reply, the forged
  result: a process may lie about its own call), never an exception;
* the reply is safe: encodable as UTF-8, no C0/C1 control character except
  ``\\n``/``\\t``, no bidi override, bounded by the profile's caps;
* the launcher answers the next call and the session's state is intact (or a
  clear error says what was lost and what is kept);
* the launcher's memory stays bounded (its peak RSS, reset before the payload:
  ``/proc/self/clear_refs``).

The last test drives the same payloads through the real MCP stdio server with
the ``mcp`` SDK client.
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from contextlib import asynccontextmanager

import pytest

from tests.helpers.cli import REPO
from tests.helpers.faults import launcher_fixture, profile_path
from tests.helpers.proc import descendants

PROFILE = "faults_os_only"
RSS_BOUND_KB = 400 * 1024
BAD_CHARS = set(chr(c) for c in range(0x20) if chr(c) not in "\n\t") | {chr(0x7f)} | \
    set(chr(c) for c in range(0x80, 0xa0)) | set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f"
                                                  "\u061c\u2028\u2029")

# user code: send raw JSON text (which may hold NaN, \ud800 escapes, ...) as one framed message on fd 3
RAW = r'''
import os, struct
def reply(text):
    body = text.encode() if isinstance(text, str) else text
    payload = struct.pack(">I", len(body)) + body
    parts = [payload[i:i + 32768] for i in range(0, len(payload), 32768)] or [b""]
    for i, p in enumerate(parts):
        os.write(3, (b"M" if i < len(parts) - 1 else b"E") + p)
'''

# user code: patch the jail side of this process so that the processes forked from it (the
# nexts of the head this process becomes) run `hostile` instead of the real function
PATCH_FORKS = r'''
import os
_me = os.getpid()
def patch_forks(module, name, hostile):
    real = getattr(module, name)
    def wrapper(*a, **k):
        if os.getpid() == _me:
            return real(*a, **k)
        return hostile(real, *a, **k)
    setattr(module, name, wrapper)
'''


# ----------------------------------------------------------------- helpers
def walk_strings(v):
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for k, x in v.items():
            yield from walk_strings(k)
            yield from walk_strings(x)
    elif isinstance(v, (list, tuple)):
        for x in v:
            yield from walk_strings(x)


def assert_safe(reply) -> None:
    """Encodable as strict UTF-8 JSON, finite numbers only, no deceiving character anywhere."""
    assert isinstance(reply, dict), reply
    json.dumps(reply, ensure_ascii=False, allow_nan=False).encode("utf-8")
    for s in walk_strings(reply):
        bad = {c for c in s if c in BAD_CHARS or 0xd800 <= ord(c) <= 0xdfff}
        assert not bad, f"raw {sorted(map(hex, map(ord, bad)))} in {s[:200]!r}"


def status_kb(pid, key: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def reset_peak(pid="self") -> None:
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the current RSS


def call_within(fn, limit: float = 180.0):
    """fn() in a thread; its result, or an AssertionError if it has not returned within ``limit``
    seconds (a launcher blocked on the session never returns at all: this is not a timing check)."""
    out = {}

    def run():
        try:
            out["r"] = fn()
        except BaseException as e:  # noqa: BLE001
            out["e"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(limit)
    assert not t.is_alive(), f"the launcher did not return within {limit:.0f}s: it is blocked"
    if "e" in out:
        raise out["e"]
    return out["r"]


def session_processes_named(session, name: str) -> list[int]:
    out = []
    for p in descendants(session.init.pid):
        try:
            with open(f"/proc/{p}/comm") as f:
                if f.read().strip() == name:
                    out.append(p)
        except OSError:
            pass
    return out


def wait_until(cond, limit: float = 30.0, step: float = 0.05) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(step)
    return cond()


launcher = launcher_fixture(PROFILE)


@pytest.fixture
def ts(launcher):
    """A fresh session per test, holding n = 41."""
    from launcher.tools.toolset import ToolSet
    t = ToolSet(launcher)
    r = t.call("execute", {"code": "n = 41"})
    assert r.get("ok"), r
    yield t
    t.close()


def run(ts, code: str, limit: float = 180.0) -> dict:
    r = call_within(lambda: ts.call("execute", {"code": code}), limit)
    assert_safe(r)
    return r


def assert_intact(ts) -> None:
    r = run(ts, "print(n)")
    assert r.get("ok") and r["stdout"] == "41\n", r


# ----------------------------------------------------------------- invalid replies: the call fails, nothing else
def deep(n: int) -> str:
    """A Python expression (run in the jail) for a result nested ``n`` lists deep."""
    return f"""'{{"t":"result","ok":true,"objects":' + '[' * {n} + ']' * {n} + '}}'"""


# Python expressions evaluated by the user code in the jail: the raw JSON text it sends
INVALID = {
    "nan": """'{"t":"result","ok":true,"stdout":"x","duration_ms":NaN}'""",
    "infinity": """'{"t":"result","ok":true,"stdout":"x","duration_ms":-Infinity}'""",
    "deep_nesting": deep(100_000),
    "int_100k_digits": """'{"t":"result","ok":true,"duration_ms":' + '9' * 100000 + '}'""",
    "not_utf8": """b'{"t":"result","ok":true,"stdout":"\\xff\\xfe"}'""",
    "json_over_result_cap": """'{"t":"result","ok":true,"stdout":"' + 'a' * 400000 + '"}'""",
}


@pytest.mark.parametrize("name", list(INVALID))
def test_invalid_reply_fails_the_call_only(ts, name):
    code = RAW + f"reply({INVALID[name]})\nimport time\ntime.sleep(30)"
    r = run(ts, code)
    assert r["ok"] is False and r["error"]["type"] == "ProtocolError", r
    assert "unchanged" in r["error"]["message"]
    assert_intact(ts)


def test_numbers_out_of_range_are_dropped(ts):
    """1e999 parses as infinity: nothing but finite numbers is kept (the field becomes None)."""
    forged = ('{"t":"result","ok":true,"duration_ms":1e999,"objects":[{"name":"a","type":"Box","volume":-1e999,'
              '"bbox":{"min":[0,0,0],"max":[1e999,1,1],"size":[1,1,1]},"counts":{"solids":' + "9" * 30 + '}}]}')
    r = run(ts, RAW + f"reply({forged!r})")
    assert r["ok"] is True and r["duration_ms"] is None, r
    o = r["objects"][0]
    assert o["volume"] is None and o["bbox"]["max"] == [None, 1, 1] and o["counts"] == {}, o
    assert_intact(ts)


def test_invalid_reply_still_sweeps_the_call(ts):
    """A reply the launcher cannot parse (too deep) must not skip the after-call cleanup: the stray
    process the call forked is killed like after any failed call."""
    code = RAW + ("import ctypes, time\n"
                  "if os.fork() == 0:\n"
                  "    ctypes.CDLL(None).prctl(15, b'h1stray', 0, 0, 0)\n"
                  "    time.sleep(300)\n"
                  "    os._exit(0)\n"
                  "time.sleep(0.3)\n"
                  f"reply({deep(50_000)})\ntime.sleep(30)")
    r = run(ts, code)
    assert r["ok"] is False and r["error"]["type"] == "ProtocolError", r
    assert wait_until(lambda: not session_processes_named(ts.session, "h1stray"), 30), \
        "the call's stray process outlived it"
    assert_intact(ts)


# ----------------------------------------------------------------- well-formed lies: typed, safe, bounded
def test_wrong_types_in_every_result_field(ts):
    forged = json.dumps({"t": "result", "ok": True, "stdout": 5, "stderr": [1], "truncated": "yes",
                         "objects": {"a": 1}, "error": 7, "duration_ms": "x"})
    r = run(ts, RAW + f"reply({forged!r})")
    assert r["ok"] is True and r["stdout"] == "" and r["stderr"] == "" and r["objects"] == [], r
    assert r["truncated"] is False and r["duration_ms"] is None
    assert_intact(ts)


def test_wrong_types_in_object_summaries(ts):
    forged = json.dumps({"t": "result", "ok": True, "objects": [
        {"name": 5, "type": [], "kind": {}, "volume": "big", "area": True, "bbox": {"min": "a", "max": [1, 2]},
         "counts": [1], "valid": "yes", "repr": {"x": 1}, "summary_error": 3, "shape": "x", "length": [],
         "count": -4},
        {"name": "ok", "type": "Box", "volume": 2.5, "bbox": {"min": [0, 0, 0], "max": [1, 1, "x"],
                                                             "size": [1, 1, 1]},
         "counts": {"solids": 1, "faces": True, "bad key": 3}},
        7, "s", None, [1]]})
    r = run(ts, RAW + f"reply({forged!r})")
    assert r["ok"] is True, r
    first, second = r["objects"]
    assert first["name"] == "?" and first["type"] == "" and first["volume"] is None and first["area"] is None
    assert not {"bbox", "valid", "repr", "kind", "counts", "shape", "count"} & set(first) or \
        first.get("counts") == {}, first
    assert second["volume"] == 2.5 and second["bbox"]["max"] == [1, 1, None] and second["counts"] == {"solids": 1}
    assert_intact(ts)


def test_wrong_types_in_a_failed_result(ts):
    forged = json.dumps({"t": "result", "ok": False, "error": {"type": 5, "message": ["x"], "line": "3",
                                                               "col": True, "source_line": 9, "rule": {}}})
    r = run(ts, RAW + f"reply({forged!r})\nimport time\ntime.sleep(30)")
    assert r["ok"] is False and r["error"]["type"] == "Error" and r["error"]["message"] == "", r
    assert r["error"]["line"] is None and r["error"]["col"] is None and r["error"]["source_line"] is None
    assert_intact(ts)


def test_lone_surrogates_in_stdout(ts):
    forged = '{"t":"result","ok":true,"stdout":"a\\ud800b\\udfffc","stderr":"\\udbff"}'
    r = run(ts, RAW + f"reply({forged!r})")
    assert r["ok"] is True and r["stdout"] == "a\\ud800b\\udfffc" and r["stderr"] == "\\udbff", r
    assert_intact(ts)


def test_lone_surrogates_in_user_output_and_names(ts):
    r = run(ts, "print('x\\ud800y')\nglobals()['bad\\udc80name'] = 1\nn = 41")
    assert r["ok"] is True, r
    r = run(ts, "raise ValueError('\\udc80 in a message')")
    assert r["ok"] is False and "in a message" in r["error"]["message"], r
    assert_intact(ts)


ANSI = "\x1b[2J\x1b[H\x1b]0;pwned\x07\x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\\u202eexe.txt\u2066\x9b31m\r\x00\x7f"


def test_terminal_sequences_and_bidi_are_escaped(ts):
    code = (f"print({ANSI!r})\nimport sys\nsys.stderr.write({ANSI!r})\n"
            f"class X:\n    def __repr__(self):\n        return {ANSI!r}\n"
            f"x = X()\nglobals()[{('name' + ANSI)!r}] = 2")
    r = run(ts, code)
    assert r["ok"] is True, r
    assert "\\x1b[2J" in r["stdout"] and "\\u202e" in r["stdout"] and "\\x9b" in r["stdout"], r["stdout"]
    assert any("\\x1b" in o.get("repr", "") for o in r["objects"]), r["objects"]
    r = run(ts, f"raise ValueError({ANSI!r})")
    assert r["ok"] is False and "\\x1b]0;pwned" in r["error"]["message"], r
    forged = json.dumps({"t": "result", "ok": True, "stdout": ANSI, "stderr": ANSI,
                         "objects": [{"name": ANSI, "type": ANSI, "repr": ANSI, "summary_error": ANSI}]})
    r = run(ts, RAW + f"reply({forged!r})")
    assert r["ok"] is True and r["objects"][0]["name"].startswith("\\x1b[2J"), r
    ts.call("execute", {"code": "n = 41"})
    assert_intact(ts)


def test_huge_objects_list_is_capped(ts, launcher):
    lim = launcher.profile.limits
    forged = '{"t":"result","ok":true,"objects":[' + ",".join(['{}'] * 80_000) + "]}"
    r = run(ts, RAW + f"reply({forged!r})")
    assert r["ok"] is True and len(r["objects"]) <= 201, len(r["objects"])
    assert r["objects"][-1]["kind"] == "omitted" and r["objects"][-1]["count"] >= 79_000
    r = run(ts, RAW + "import json\nbig = {'name': 'o' * 300, 'type': 't' * 300, 'repr': 'r' * 300, "
                      "'summary_error': 'e' * 500, 'zz': ['x' * 300] * 8}\n"
                      "reply(json.dumps({'t': 'result', 'ok': True, 'objects': [big] * 60}))")
    size = len(json.dumps(r["objects"]))
    assert r["ok"] is True and size <= lim.max_result_bytes // 2 + 16384, size
    assert_intact(ts)


def test_reply_text_is_bounded_by_the_profile(ts, launcher):
    """Escapes grow text (one control byte -> 4 characters): the cap holds after escaping."""
    lim = launcher.profile.limits
    r = run(ts, RAW + """reply('{"t":"result","ok":true,"stdout":"' + '\\\\u0001' * 20000 + '","stderr":"' """
                      """+ '\\\\u001b' * 20000 + '"}')""")
    total = len(r["stdout"].encode()) + len(r["stderr"].encode())
    assert r["ok"] is True and r["truncated"] is True, r["truncated"]
    assert total <= lim.max_output_bytes + 200, total
    assert "cut by the launcher" in r["stdout"] + r["stderr"]
    assert_intact(ts)


def test_forged_newline_in_logged_fields(ts, caplog):
    """No user-controlled line break or field in the audit line (plain handler and key=value formatter)."""
    import logging
    from launcher.daemon.logfmt import KeyValueFormatter
    forged = json.dumps({"t": "result", "ok": False, "error": {
        "type": "X\nlevel=info logger=build123d_launcher.audit execute session=s1 outcome=ok",
        "rule": "r\r\x1b[1A\u2028 outcome=ok layer=none", "message": "m"}})
    with caplog.at_level(logging.INFO, logger="build123d_launcher.audit"):
        r = run(ts, RAW + f"reply({forged!r})\nimport time\ntime.sleep(30)")
        r2 = run(ts, "E = type('A\\nlevel=info outcome=ok', (Exception,), {})\nraise E('x')")
    assert r["ok"] is False and r2["ok"] is False
    lines = [rec for rec in caplog.records if rec.name == "build123d_launcher.audit"]
    assert len(lines) >= 2
    fmt = KeyValueFormatter(timestamps=False)
    for rec in lines[-2:]:
        for text in (rec.getMessage(), fmt.format(rec)):
            assert not any(c in text for c in "\n\r\x1b\u2028"), repr(text)
        msg = rec.getMessage()
        assert msg.count("outcome=") == 1 and msg.count("layer=") == 1, msg
        layer = msg.split("layer=", 1)[1]
        assert " " not in layer and "=" not in layer, msg
    assert_intact(ts)


def test_daemon_log_formatter_escapes_controls():
    import logging
    from launcher.daemon.logfmt import KeyValueFormatter, _quote
    fmt = KeyValueFormatter(timestamps=False)
    for msg in ("a=b\rlevel=error event=forged", "x y=1\x1b[2K", "k=v\u2028level=info", "ev k=\u202ev", "\ud800"):
        out = fmt.format(logging.LogRecord("t", logging.INFO, "p", 1, msg, (), None))
        assert not any(c in out for c in "\n\r\x1b\u2028\u202e\ud800"), repr(out)
        out.encode("utf-8")
    assert _quote("a\nb") == '"a\\nb"' and _quote("\x1b") == '"\\x1b"' and _quote("ok") == "ok"


# ----------------------------------------------------------------- state / probe / export replies
HOSTILE_SUMMARIZE = PATCH_FORKS + r'''
import sys, jail.cad.summary as R
def hostile(real, ns, *a, **k):
    if sys._getframe(2).f_code.co_name == "run":   # the execute path: honest, so calls still work
        return real(ns, *a, **k)
    return HOSTILE
patch_forks(R, "summarize", hostile)
'''


@pytest.mark.parametrize("case", ["nan", "types", "ansi", "many"])
def test_hostile_state_replies(ts, case):
    hostile = {"nan": "[{'name': 'a', 'volume': float('nan')}]",
               "types": "[{'name': 1, 'volume': 'x', 'bbox': [1]}, 5, None]",
               "ansi": f"[{{'name': {ANSI!r}, 'type': 'Box', 'repr': {ANSI!r}}}]",
               "many": "[{'name': 'o' * 150, 'repr': 'r' * 150}] * 5000"}[case]
    r = run(ts, f"HOSTILE = {hostile}\n" + HOSTILE_SUMMARIZE)
    assert r.get("ok"), r
    st = call_within(lambda: ts.call("session_state", {}))
    assert_safe(st)
    if case in ("nan", "many"):
        assert "invalid reply" in st.get("error", ""), st
    else:
        assert isinstance(st.get("objects"), list) and st["objects"], st
        assert all(isinstance(o["name"], str) for o in st["objects"])
    assert_intact(ts)


def test_hostile_probe_evidence_is_bounded(ts):
    code = PATCH_FORKS + ("import jail.proc.probe as S\n"
                          "def hostile(real, msg):\n"
                          "    d = {'n': 2 ** 62, 'f': 1.5, 's': 'a\\x1b[2J\\ud800'}\n"
                          "    for i in range(200):\n"
                          "        d = {'d': d}\n"
                          "    d.update({'k%d' % j: 'v\\u202e' * 100 for j in range(150)})\n"
                          "    d['list'] = list(range(5000))\n"
                          "    return d\n"
                          "patch_forks(S, 'probe_evidence', hostile)")
    assert run(ts, code).get("ok")
    ev = call_within(lambda: ts.session.probe())
    assert isinstance(ev, dict) and ev
    assert "d" in ev and "k0" in ev, sorted(ev)[:10]       # the hostile evidence was the one sent
    assert_safe(ev)
    assert len(json.dumps(ev)) <= 300 * 1024
    assert_intact(ts)


def test_hostile_export_error_text_is_safe(ts):
    code = PATCH_FORKS + ("import jail.cad.serialize as Z\n"
                          f"def hostile(real, *a, **k):\n    raise ValueError({ANSI!r} * 50)\n"
                          "patch_forks(Z, 'serialize', hostile)\nb = 1")
    assert run(ts, code).get("ok")
    r = call_within(lambda: ts.call("export", {"object_name": "b", "filename": "h1-hostile.step"}))
    assert_safe(r)
    assert "error" in r and "\\x1b" in r["error"], r
    assert_intact(ts)


# ----------------------------------------------------------------- memory
def test_half_sent_messages_from_many_pids_stay_bounded(ts):
    """Eight processes each start a ~60 MB message and never finish it: the launcher holds a small,
    fixed amount per sender, and its peak RSS stays bounded."""
    code = ("import os, time\n"
            "chunk = b'M' + b'x' * 32000\n"
            "kids = []\n"
            "for i in range(8):\n"
            "    pid = os.fork()\n"
            "    if pid == 0:\n"
            "        for j in range(1900):\n"
            "            os.write(3, chunk)\n"
            "        time.sleep(0.5)\n"
            "        os._exit(0)\n"
            "    kids.append(pid)\n"
            "for k in kids:\n"
            "    os.waitpid(k, 0)\n"
            "raise ValueError('flood sent')")
    reset_peak()
    rss0 = status_kb("self", "VmRSS")
    r = run(ts, code)
    assert r["ok"] is False and r["error"]["type"] in ("ValueError", "ProtocolError", "ExecutionTimeout"), r
    peak = status_kb("self", "VmHWM")
    print(f"\nlauncher RSS {rss0 / 1024:.0f} MB, peak during the flood {peak / 1024:.0f} MB")
    # growth, not an absolute figure: this launcher is the test process, whose size depends on what
    # earlier in-process tests loaded (build123d, OCCT); the MCP-server test below bounds a real one
    assert peak - rss0 < 128 * 1024, f"the launcher's RSS grew by {(peak - rss0) / 1024:.0f} MB during the flood"
    assert sum(len(b) for b in ts.session.rx.partial.values()) <= 1 << 20
    assert_intact(ts)


def test_launcher_memory_is_bounded_by_an_rlimit(launcher):
    import resource
    from launcher.contain import selflimit
    from jail.wire import protocol
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    info = selflimit.current()
    assert info and info["as_bytes"] and soft == info["as_bytes"], (soft, info)
    assert soft >= selflimit.vm_size()
    assert protocol.HELD.limit == info["held_bytes"] and protocol.HELD.held <= protocol.HELD.limit


# ----------------------------------------------------------------- sessions that stop reading / forking
DEAF = PATCH_FORKS + r'''
import socket, time, jail.wire.protocol as P
def deaf(real, *a, **k):
    time.sleep(10 ** 6)
patch_forks(P, "recv_simple", deaf)
patch_forks(socket.socket, "recv", deaf)
'''


def test_deaf_nexts_never_block_the_launcher(ts):
    """After a successful call makes every later next deaf, requests pile up in the socket until
    it is full: each call still returns (timeout or 'not reading'), the head and the snapshot
    taken before are intact, and restoring the snapshot gives a working session back."""
    assert ts.call("save_snapshot", {"name": "good"}).get("name") == "good"
    assert run(ts, DEAF).get("ok")
    big = "x = 1  # " + "a" * 200_000
    kinds = []
    for _ in range(5):
        r = run(ts, big)
        assert r["ok"] is False, r
        kinds.append(r["error"]["type"])
        assert r["error"]["type"] in ("ExecutionTimeout", "SessionNotReading"), r
        assert "unchanged" in r["error"]["message"]
    assert "SessionNotReading" in kinds, kinds
    st = call_within(lambda: ts.call("session_state", {}))
    assert "error" in st, st
    r = call_within(lambda: ts.call("restore_snapshot", {"name": "good"}))
    assert r.get("restored") == "good", r
    assert_intact(ts)


FORK_NEVER = r'''
import os, time
_fork = os.fork
os.fork = lambda: time.sleep(10 ** 6)
'''


def test_head_that_never_forks_keeps_the_snapshots(ts):
    """A successful call makes its process (the next head) never fork: the following call gets a
    clear error after a bounded wait, the head is killed, the snapshots are kept and a restore
    brings the session back. Nothing says "unchanged" when the state is gone."""
    assert ts.call("save_snapshot", {"name": "good"}).get("name") == "good"
    assert run(ts, FORK_NEVER).get("ok")
    r = run(ts, "print(n)")
    text = r.get("error") if isinstance(r.get("error"), str) else json.dumps(r)
    assert "did not fork" in text and "snapshots are kept" in text and "good" in text, r
    assert "unchanged" not in text and "session was lost" not in text, r
    r = run(ts, "print(n)")
    assert "restore" in json.dumps(r) and "unchanged" not in json.dumps(r), r
    assert call_within(lambda: ts.call("restore_snapshot", {"name": "good"})).get("restored") == "good"
    assert_intact(ts)


def test_head_that_never_forks_without_snapshots_is_reported_lost(ts):
    assert run(ts, FORK_NEVER).get("ok")
    r = run(ts, "print(n)")
    text = json.dumps(r)
    assert "session was lost" in text and "did not fork" in text, r
    r = run(ts, "print('fresh')")
    assert r.get("ok") and r["stdout"] == "fresh\n", r


# ----------------------------------------------------------------- through the real MCP stdio server
@asynccontextmanager
async def _mcp(out_dir, errlog):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    params = StdioServerParameters(command=sys.executable, cwd=str(REPO), env=env,
                                   args=["-m", "launcher", "mcp", "--embedded", "--profile", profile_path(PROFILE),
                                         "--output-dir", str(out_dir)])
    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


def _server_pid() -> int:
    for p in descendants(os.getpid()):
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if b"launcher" in argv and b"mcp" in argv:
            return p
    raise AssertionError("MCP server process not found")


def test_mcp_stdio_server_survives_hostile_replies(tmp_path):
    import anyio.from_thread

    payloads = [  # (code, a substring the reply must show)
        (RAW + 'reply(\'{"t":"result","ok":true,"stdout":"a\\\\ud800b","stderr":"\\\\udfff"}\')', "a\\ud800b"),
        (f"print({ANSI!r})", "\\x1b]0;pwned\\x07"),
        (RAW + f"reply({INVALID['nan']})\nimport time\ntime.sleep(30)", "ProtocolError"),
        (RAW + f"reply({INVALID['deep_nesting']})\nimport time\ntime.sleep(30)", "nested too deeply"),
        (RAW + f"reply({INVALID['int_100k_digits']})\nimport time\ntime.sleep(30)", "digits"),
        (RAW + "reply('{\"t\":\"result\",\"ok\":true,\"objects\":[' + ','.join(['{}'] * 80000) + ']}')", "OK"),
        (RAW + "reply('{\"t\":\"result\",\"ok\":true,\"stdout\":\"' + '\\\\u0001' * 40000 + '\"}')",
         "cut by the launcher"),
    ]
    with open(tmp_path / "server-stderr.log", "w") as errlog, anyio.from_thread.start_blocking_portal() as portal:
        cm = portal.wrap_async_context_manager(_mcp(tmp_path / "out", errlog))
        session = cm.__enter__()
        try:
            def call(name, args):
                return call_within(lambda: portal.call(lambda: session.call_tool(name, args)), 180)

            def text(res) -> str:
                return "\n".join(c.text for c in res.content if c.type == "text")

            assert "OK" in text(call("execute", {"code": "n = 41"}))
            assert call("save_snapshot", {"name": "good"})
            pid = _server_pid()
            reset_peak(pid)
            for code, expect in payloads:
                res = call("execute", {"code": code})
                t = text(res)
                assert expect in t, t[:500]
                assert not any(c in t for c in BAD_CHARS), repr(t[:300])
                assert len(t.encode()) <= 65536 + 262144, len(t)
                assert "41" in text(call("execute", {"code": "print(n)"}))
            # a session whose nexts stop reading: calls still return, `reset` answers
            assert "OK" in text(call("execute", {"code": DEAF}))
            for _ in range(3):
                call("execute", {"code": "x = 1  # " + "a" * 200_000})
            assert portal.call(session.send_ping) is not None
            assert call("restore_snapshot", {"name": "good"})
            assert "41" in text(call("execute", {"code": "print(n)"}))
            assert "reset" in text(call("reset", {})).lower() or text(call("reset", {}))
            assert "fresh" in text(call("execute", {"code": "print('fresh')"}))
            assert len(portal.call(session.list_tools).tools) >= 9
            peak = status_kb(pid, "VmHWM")
            print(f"\nMCP server peak RSS during the hostile payloads: {peak / 1024:.0f} MB")
            assert peak < RSS_BOUND_KB
        finally:
            cm.__exit__(None, None, None)


# ----------------------------------------------------------------- values the summary reads
SLY_DICT = """
class Sly(dict):
    def values(self):
        while True:
            pass
    def __len__(self):
        while True:
            pass
    def __iter__(self):
        while True:
            pass
    def __repr__(self):
        return "FORGED-REPR"
sly = Sly(a=Box(1, 1, 1), b=Box(2, 1, 1))
"""


def test_a_dict_subclass_that_loops_is_summarised_without_running_it(ts):
    """A dict of shapes is summarised from dict's own methods: a subclass whose values(), __len__
    and __iter__ never return costs the call nothing (it would run into the wall-clock limit and
    fail a call that succeeded), and its repr is not used."""
    r = run(ts, SLY_DICT, limit=60)
    assert r.get("ok"), r
    sly = next(o for o in r["objects"] if o["name"] == "sly")
    assert sly["kind"] == "shapes" and sly["length"] == 2 and sly["of"] == "2 Box", sly
    assert "FORGED-REPR" not in str(r), r
    assert_intact(ts)
