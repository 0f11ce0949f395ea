"""Read-only calls keep the next (issue 22): a child of the next serves them; hostile servers stay bounded.

A read-only op (``state``, ``measure``, ``render``, ...) is served by the next's spare (a child forked
while the next is idle) that says ``serving``, replies and is SIGKILLed; the next stays the next.
Without a spare the next serves it itself and is discarded. Here earlier user code (profile
``faults_os_only``: only the OS layers, so it can patch ``jail.proc.chain.serve_disposable`` in the
head, which every next forked from it inherits) makes the serving path hostile: a child that lingers
and forks, a reply from the next itself, two replies, no reply. Each time: the call is bounded, every
process the launcher did not sanction is killed, and the session serves the following call.
"""
from __future__ import annotations

import time

import pytest

from launcher.session.errors import SessionError
from tests.helpers.faults import launcher_fixture
from tests.helpers.proc import alive, children, live_descendants, wait_until

PROFILE = "faults_os_only"

# the path without a spare (which an idle next forks), so every read-only op meets the patch
PATCH = "import os, time\nimport jail.proc.chain as C\nC.Spare.start = lambda *a, **k: None\n"

SPARE_LINGERS = """
import os, time
import jail.proc.chain as C
def hostile(sock, msg, ctx):
    for _ in range(3):
        if os.fork() == 0:
            time.sleep(1000)
    C.send_or_exit(sock, {"t": "serving", "rid": msg.get("rid")})
    C.send_or_exit(sock, {"t": "state", "objects": [{"name": "spare"}], "rid": msg.get("rid")})
    time.sleep(1000)
C.serve_in_child = hostile
"""

LINGERS = PATCH + '''
def hostile(sock, op, msg, ctx, w):
    if os.fork() == 0:
        for _ in range(3):
            if os.fork() == 0:
                time.sleep(1000)
        C.send_or_exit(sock, {"t": "serving", "rid": msg.get("rid")})
        C.send_or_exit(sock, {"t": "state", "objects": [{"name": "first"}], "rid": msg.get("rid")})
        C.send_or_exit(sock, {"t": "state", "objects": [{"name": "second"}], "rid": msg.get("rid")})
        time.sleep(1000)
C.serve_disposable = hostile
'''

IN_NEXT = PATCH + '''
def hostile(sock, op, msg, ctx, w):
    C.send_or_exit(sock, {"t": "serving", "rid": msg.get("rid")})
    C.send_or_exit(sock, {"t": "state", "objects": [{"name": "from-next"}], "rid": msg.get("rid")})
C.serve_disposable = hostile
'''

SILENT = {
    "next-sleeps": PATCH + "C.serve_disposable = lambda *a: time.sleep(1000)\n",
    "child-sleeps": PATCH + '''
def hostile(sock, op, msg, ctx, w):
    if os.fork() == 0:
        C.send_or_exit(sock, {"t": "serving", "rid": msg.get("rid")})
        for _ in range(3):
            os.fork()
        time.sleep(1000)
C.serve_disposable = hostile
''',
    "grandchild-serves": PATCH + '''
def hostile(sock, op, msg, ctx, w):
    if os.fork() == 0:
        if os.fork() == 0:
            C.send_or_exit(sock, {"t": "serving", "rid": msg.get("rid")})
            C.send_or_exit(sock, {"t": "state", "objects": [{"name": "forged"}], "rid": msg.get("rid")})
        time.sleep(1000)
C.serve_disposable = hostile
''',
}


launcher = launcher_fixture(PROFILE)


@pytest.fixture
def session(launcher):
    s = launcher.new_session()
    r = s.execute("n = 41")
    assert r["ok"], r
    yield s
    launcher.close_session(s)


def spares(nxt: int) -> list[int]:
    """The next's live children (its spare, once forked while idle)."""
    return [c for c in children(nxt) if alive(c)]


def only_sanctioned(s) -> bool:
    """Nothing alive in the session but its head, its next, the next's spare and snapshots."""
    s.ensure_next()  # the head's new next, if it forked one since
    s.channel.pump(time.monotonic() + 0.02)  # file a spare's offer sent since the last call
    s.chain.take_spare()
    known = {p.pid for p in (s.head, s.next, s.chain.spare) if p is not None} | {p.pid for p, _ in s.snapshots.values()}
    return set(live_descendants(s.init.pid)) <= known


def assert_usable(s) -> None:
    r = s.execute("print(n)")
    assert r["ok"] and r["stdout"] == "41\n", r


def test_a_read_only_call_keeps_the_next(session):
    """The honest path: the same next serves the following execute; its server is gone."""
    session.ensure_next()
    nxt = session.next.pid
    used: set[int] = set()
    for _ in range(3):
        spare = wait_until(lambda: set(spares(nxt)) - used, 10)  # idle: its (new) spare is forked
        assert spare
        used |= spare
        msg, _ = session.ask({"t": "state"}, "state")
        assert [o["name"] for o in msg["objects"]] == ["n"], msg
        assert "rid" not in msg
        assert session.next is not None and session.next.pid == nxt
    assert wait_until(lambda: only_sanctioned(session), 10)
    r = session.execute("print(n + 1)")
    assert r["ok"] and r["stdout"] == "42\n", r
    assert session.head.pid == nxt  # the kept next ran the execute and was promoted


def test_an_idle_next_forks_its_spare_which_serves_the_read_only_call(session):
    session.ensure_next()
    nxt = session.next.pid
    spare = wait_until(lambda: spares(nxt), 10)
    assert spare and len(spare) == 1, spare
    msg, _ = session.ask({"t": "state"}, "state")
    assert [o["name"] for o in msg["objects"]] == ["n"], msg
    assert session.next.pid == nxt
    assert wait_until(lambda: not alive(spare[0]), 5), "the spare outlived its reply"
    again = wait_until(lambda: [c for c in spares(nxt) if c not in spare], 10)  # idle again: a new spare
    assert again and again != spare
    assert_usable(session)
    assert wait_until(lambda: not alive(again[0]), 5), "a spare outlived a transaction"
    assert wait_until(lambda: only_sanctioned(session), 10)


IDLE_EXIT = "from jail.proc import spare as S\nS.IDLE_EXIT_S = 0.5\n"  # 60 s in a real session (decision 0026)


def _goes_cold(session) -> int:
    """Let the session's next sit idle past ``IDLE_EXIT_S`` (patched to 0.5 s): it and its spare
    exit; returns the cold next its head forks instead, once that has forked no spare for a while."""
    assert session.execute(IDLE_EXIT)["ok"]
    session.ensure_next()
    head, nxt = session.head.pid, session.next.pid
    spare = wait_until(lambda: spares(nxt), 10)
    assert spare and len(spare) == 1, spare
    assert wait_until(lambda: not alive(nxt) and not alive(spare[0]), 10), "the idle next or its spare stayed"
    cold = wait_until(lambda: [c for c in children(head) if c != nxt and alive(c)], 10)
    assert cold and len(cold) == 1, cold
    assert not wait_until(lambda: spares(cold[0]), 1.0), "the cold next forked a spare"
    assert alive(cold[0]), "the cold next left too"
    return cold[0]


def test_an_idle_next_leaves_and_a_cold_next_serves_the_read_only_call(session):
    """A session left idle gives back its spare's and its next's memory (decision 0026): with no request
    for ``IDLE_EXIT_S`` the next kills its spare and exits; the head forks a cold next, which warms
    nothing and forks no spare. A read-only call is then served by that next itself (it exits), and the
    session goes on with warm nexts again."""
    cold = _goes_cold(session)
    msg, _ = session.ask({"t": "state"}, "state", timeout=5)
    assert "n" in [o["name"] for o in msg["objects"]], msg
    assert wait_until(lambda: not alive(cold), 5), "the cold next outlived the read-only call it served"
    session.ensure_next()
    assert wait_until(lambda: spares(session.next.pid), 10), "the next after it forked no spare"
    assert_usable(session)
    assert wait_until(lambda: only_sanctioned(session), 10)


def test_a_cold_next_runs_the_execute_and_the_session_warms_again(session):
    cold = _goes_cold(session)
    r = session.execute("print(n)\nm = n + 1")
    assert r["ok"] and r["stdout"] == "41\n", r
    assert session.head.pid == cold  # it ran the call and was promoted
    session.ensure_next()
    assert wait_until(lambda: spares(session.next.pid), 10), "the next after it forked no spare"
    assert session.execute("print(m)")["stdout"] == "42\n"
    assert wait_until(lambda: only_sanctioned(session), 10)


def test_a_killed_next_is_followed_by_a_cold_one(session):
    """A next killed between calls (the watchdog's sweep at the session's memory bound, the OOM
    killer) is followed by a cold next: it forks no spare and warms nothing before a request, so the
    copies that took the session over its bound are not made again at once (decision 0026). It
    serves the next call, and the session warms again after it."""
    head = session.head.pid  # its next, taken ahead but sent nothing (decision 0028): the sweep kills it
    # the head's child that forked a spare (not the spare the call's process killed, still dying)
    found = wait_until(lambda: [(c, sp) for c in children(head) if alive(c) and (sp := spares(c))], 10)
    assert found and len(found) == 1, f"the next forked no spare: {found}"
    nxt, spare = found[0]
    with session.lock:
        # the next and its spare, as the watchdog does. The count is 2 when the spare's offer was
        # filed before the sweep, else 1: the spare then dies with the next (a race under load)
        assert session.sweep_strays() >= 1
    assert wait_until(lambda: not alive(nxt) and not alive(spare[0]), 10)
    cold = wait_until(lambda: [c for c in children(head) if c != nxt and alive(c)], 10)
    assert cold and len(cold) == 1, cold
    assert not wait_until(lambda: spares(cold[0]), 1.0), "the next after a killed one forked a spare"
    assert_usable(session)
    assert session.head.pid == cold[0]
    session.ensure_next()
    assert wait_until(lambda: spares(session.next.pid), 10), "the next after it forked no spare"


def test_a_spare_that_takes_a_request_before_its_idle_exit_serves_it(session):
    """The idle exit never drops a request: one that arrives before it is served by the spare."""
    assert session.execute(IDLE_EXIT.replace("0.5", "3.0"))["ok"]
    session.ensure_next()
    nxt = session.next.pid
    spare = wait_until(lambda: spares(nxt), 10)
    assert spare
    msg, _ = session.ask({"t": "state"}, "state", timeout=5)
    assert "n" in [o["name"] for o in msg["objects"]], msg
    assert session.next.pid == nxt  # served by the spare: the next stays
    assert_usable(session)


def test_a_lingering_server_that_forks_and_replies_twice(session):
    assert session.execute(LINGERS)["ok"]
    session.ensure_next()
    nxt = session.next.pid
    for _ in range(2):  # the second reply of the first call is never taken as the reply of the second
        msg, _ = session.ask({"t": "state"}, "state", timeout=5)
        assert msg["objects"] == [{"name": "first"}], msg
        assert session.next.pid == nxt
        assert wait_until(lambda: only_sanctioned(session), 10), "the server or what it forked outlived the call"
    assert_usable(session)


def test_a_hostile_spare_is_bounded_too(session):
    assert session.execute(SPARE_LINGERS)["ok"]
    session.ensure_next()
    nxt = session.next.pid
    spare = wait_until(lambda: spares(nxt), 10)
    assert spare
    msg, _ = session.ask({"t": "state"}, "state", timeout=5)
    assert msg["objects"] == [{"name": "spare"}], msg
    assert session.next.pid == nxt
    assert wait_until(lambda: not alive(spare[0]), 5)
    assert wait_until(lambda: only_sanctioned(session), 10), "the spare or what it forked outlived the call"
    assert_usable(session)


SPARE_DIES = """
import os
import jail.proc.chain as C
from jail.proc import spare as S
def dies(self, r, ack, announce, warm):
    announce()
    S._read_exact(r, S.HEADER.size)  # takes the request, then dies without a word (as if swept meanwhile)
    os._exit(0)
C.Spare._child = dies
"""


def test_a_spare_that_dies_with_the_request_costs_nothing(session):
    assert session.execute(SPARE_DIES)["ok"]
    session.ensure_next()
    nxt = session.next.pid
    assert wait_until(lambda: spares(nxt), 10)
    msg, _ = session.ask({"t": "state"}, "state", timeout=5)  # served by the next itself
    assert "n" in [o["name"] for o in msg["objects"]], msg
    assert session.next is None or session.next.pid != nxt
    assert_usable(session)


def test_a_reply_from_the_next_itself_costs_the_next(session):
    assert session.execute(IN_NEXT)["ok"]
    session.ensure_next()
    nxt = session.next
    msg, _ = session.ask({"t": "state"}, "state", timeout=5)
    assert msg["objects"] == [{"name": "from-next"}], msg
    assert session.next is None or session.next.pid != nxt.pid
    assert wait_until(lambda: not nxt.alive(), 5), "a next that served in-process was kept"
    session.ensure_next()
    assert wait_until(lambda: only_sanctioned(session), 10)
    assert_usable(session)


@pytest.mark.parametrize("case", sorted(SILENT))
def test_no_reply_is_bounded_and_killed(session, case):
    assert session.execute(SILENT[case])["ok"]
    session.ensure_next()
    nxt = session.next
    with pytest.raises(SessionError, match="did not finish within 1s"):
        session.ask({"t": "state"}, "state", timeout=1)
    assert wait_until(lambda: not nxt.alive(), 5)
    assert wait_until(lambda: only_sanctioned(session), 10), "a silent server outlived its call"
    assert_usable(session)


# A transaction holds the spare (decision 0029): it serves nothing more, but its exit (the kernel
# unmapping its copy of the session) runs after the reply, not beside the call's code.
HELD = """
import gc, os
import jail.proc.chain as C
held = [s for s in gc.get_objects() if isinstance(s, C.Spare)]
assert len(held) == 1, held
held_pid = held[0].pid


def state():
    with open(f"/proc/{held_pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


import time
deadline = time.monotonic() + 10  # a spare still warming stops at its next step
while held_pid and state() != "S" and time.monotonic() < deadline:
    pass
held_state = state() if held_pid else "gone"
"""


def test_a_transaction_holds_the_spare_and_lets_it_go_after_its_reply(session):
    """While the call's code runs, its spare is alive and asleep (before decision 0029 it was
    already let go, tearing down beside the code); once the reply is out it is gone."""
    session.ensure_next()
    nxt = session.next.pid
    spare = wait_until(lambda: spares(nxt), 10)
    assert spare and len(spare) == 1, spare
    r = session.execute(HELD + "print(held_pid != 0, held_state)")
    assert r["ok"] and r["stdout"] == "True S\n", r  # held: asleep on its pipe, its warm-up stopped
    assert wait_until(lambda: not alive(spare[0]), 5), "a held spare outlived its transaction"
    assert wait_until(lambda: only_sanctioned(session), 10)
    assert_usable(session)


def test_a_long_call_gets_its_held_spare_s_memory_back(session):
    """A held spare leaves by itself about ``HOLD_S`` into the call: a long call (one that may need
    the memory) does not keep it to its reply. Seen from the call's code, it is then a zombie (its
    parent, the next, runs the code and reaps nothing meanwhile)."""
    session.ensure_next()
    spare = wait_until(lambda: spares(session.next.pid), 10)
    assert spare
    code = HELD + """
deadline = time.monotonic() + 10
while held_pid and state() != "Z" and time.monotonic() < deadline:
    time.sleep(0.01)
print(held_state, state() if held_pid else "gone")
"""
    r = session.execute(code)
    assert r["ok"] and r["stdout"] == "S Z\n", r
    assert wait_until(lambda: not alive(spare[0]), 5)
    assert wait_until(lambda: only_sanctioned(session), 10)
    assert_usable(session)


def test_a_failed_transaction_lets_its_held_spare_go(session):
    session.ensure_next()
    spare = wait_until(lambda: spares(session.next.pid), 10)
    assert spare
    r = session.execute(HELD + "raise ValueError(held_state)")
    assert not r["ok"] and "ValueError" in str(r["error"]), r
    assert wait_until(lambda: not alive(spare[0]), 5), "a held spare outlived a failed call"
    assert wait_until(lambda: only_sanctioned(session), 10)
    assert_usable(session)


def test_a_held_spare_kept_by_the_call_is_killed_by_the_launcher(session):
    """The call's code stops its process from letting the spare go (``Spare.kill`` a no-op) and
    feeds the held spare a forged request: the spare holds the state from before the call, so the
    launcher kills it at the promotion, and no reply of the spare is taken for any later call."""
    session.ensure_next()
    spare = wait_until(lambda: spares(session.next.pid), 10)
    assert spare
    code = HELD + """
import json
from jail.proc import spare as S
C.Spare.kill = lambda self: None
raw = json.dumps({"t": "state", "rid": 1}).encode()
os.write(held[0].w, S.HEADER.pack(len(raw), 0) + raw)
n = 41
m = 7
"""
    r = session.execute(code)
    assert r["ok"], r
    assert wait_until(lambda: not alive(spare[0]), 5), "the launcher let a held spare live on"
    assert wait_until(lambda: only_sanctioned(session), 10)
    msg, _ = session.ask({"t": "state"}, "state", timeout=5)  # the state after the call, not the spare's
    assert "m" in [o["name"] for o in msg["objects"]], msg
    r = session.execute("print(n, m)")
    assert r["ok"] and r["stdout"] == "41 7\n", r
