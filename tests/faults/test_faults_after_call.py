"""A successful call replies before its promotion (decision 0028): nothing may see the gap, or use it.

Real sessions on the os-only profile (the session code reaches its socket, fd 3, and forks):

* right after a reply, with the finisher thread held back, the watchdog's non-blocking acquisition is
  refused, a reader of the roles (``Session.head``) sees the promoted process, and the following call
  sees the state the first left;
* during think time the new head's next is taken ahead (``Chain.prefetch_next``), and it is the head's
  child;
* attack: the call forks a child that keeps forging ``ready`` messages across the promotion and the
  prefetch; neither that child nor its messages are taken as the next, and the state is intact.
"""
from __future__ import annotations

import pytest

from launcher.contain.procs import ppid_of
from launcher.session import lock as lock_mod
from tests.helpers import zygotes
from tests.helpers.proc import alive, wait_until
from tests.helpers.faults import profile_path

FORGER = ("import os, json, struct, time\n"
          "if os.fork() == 0:\n"
          "    b = json.dumps({'t': 'ready', 'nonce': 'forged'}).encode()\n"
          "    for i in range(200):\n"
          "        try:\n"
          "            os.write(3, b'E' + struct.pack('>I', len(b)) + b)\n"
          "        except OSError:\n"
          "            pass\n"
          "        time.sleep(0.002)\n"
          "    os._exit(0)\n"
          "n = 7\n")


@pytest.fixture(scope="module")
def os_only():
    with zygotes.on_shared_zygote(profile_path("faults_os_only"), spare_sessions=0) as L:
        yield L


def test_no_one_sees_a_reply_before_its_promotion(os_only, monkeypatch):
    monkeypatch.setattr(lock_mod.FINISHER, "soon", lambda lock, delay=0.0: None)  # only readers settle it
    s = os_only.new_session()
    try:
        assert s.execute("n = 1")["ok"]
        with s.lock:
            s.ensure_next()
            served, old_head = s.chain.next.pid, s.chain.head.pid
        r = s.execute("n = 2")
        assert r["ok"], r
        assert s.lock.pending(), "the promotion ran before the reply returned"
        assert s.lock.acquire(blocking=False) is False, "the watchdog could take a session mid-promotion"
        assert s.head.pid == served, "a reader saw the head from before the call"
        assert not s.lock.pending()
        assert old_head in s.chain.dying_pids() or not alive(old_head)
        r = s.execute("print(n)")
        assert r["ok"] and r["stdout"] == "2\n", r
        assert [e.call for e in s.history] == [1, 2, 3]
    finally:
        os_only.close_session(s)


def test_the_next_is_taken_while_the_client_thinks(os_only):
    s = os_only.new_session()
    try:
        assert s.execute("n = 1")["ok"]
        assert wait_until(lambda: not s.lock.pending() and s.chain.next is not None, 10.0), \
            "the new head's next was not taken after the reply"
        assert s.chain.next_sent is False
        assert ppid_of(s.chain.next.pid) == s.chain.head.pid
        r = s.execute("print(n)")
        assert r["ok"] and r["stdout"] == "1\n", r
    finally:
        os_only.close_session(s)


def test_forged_readies_across_the_promotion_are_never_taken(os_only):
    s = os_only.new_session()
    try:
        for _ in range(3):
            r = s.execute(FORGER)
            assert r["ok"], r
            assert wait_until(lambda: not s.lock.pending() and s.chain.next is not None, 10.0)
            nxt, head = s.chain.next, s.chain.head
            assert s.chain.next_nonce != "forged"
            assert ppid_of(nxt.pid) == head.pid
            r = s.execute("print(n)")
            assert r["ok"] and r["stdout"] == "7\n", r
    finally:
        os_only.close_session(s)
