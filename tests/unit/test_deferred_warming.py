"""DeferredBackend.warming/wait_warm: the set-up, then an embedded launcher's zygote start."""
from __future__ import annotations

import threading

from launcher.mcp import warmup
from launcher.mcp.deferred import DeferredBackend


class _Launcher:
    def __init__(self):
        self.started = threading.Event()

    def wait_started(self, timeout=None):
        return self.started.wait(timeout)

    def close(self):
        pass


class _ToolSet:
    def __init__(self, launcher):
        self.launcher = launcher

    def call(self, tool, args, call_id=None):
        return {"ok": True}

    def close(self):
        pass


def test_warming_until_setup_and_zygote_are_ready():
    gate, launcher = threading.Event(), _Launcher()
    b = DeferredBackend(lambda: (gate.wait(30), _ToolSet(launcher))[1])
    assert b.warming()
    gate.set()
    assert b.wait(30)
    assert b.warming()  # the set-up is done, the zygote is not
    b.wait_warm(0.05)
    assert b.warming()
    launcher.started.set()
    b.wait_warm(5)
    assert not b.warming()
    b.close()


def test_note_goes_on_the_last_text_block():
    img = {"type": "image", "data": "", "mimeType": "image/png"}
    out = warmup.add_note([{"type": "text", "text": "a"}, img], 14.23)
    assert out[0]["text"] == "a\n" + warmup.note(14.23) and "waited 14.2 s" in out[0]["text"]
    assert warmup.add_note([img], 1.0)[-1]["text"] == warmup.note(1.0)
    assert warmup.add_note([img], None) == [img] == warmup.add_note([img], 0.1)  # a handshake is no warm-up
