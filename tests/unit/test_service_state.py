"""doctor's daemon/socket/service lines (launcher/selftest/service.py): fake unit dirs, real sockets."""
from __future__ import annotations

import os
import socket
import sys
import threading

from launcher.daemon.client import recv_frame, send_frame
from launcher.selftest import service


def test_units_missing_incomplete_installed_and_foreign(tmp_path):
    d = tmp_path / "user"
    c = service.check_units([d])
    assert c.state.startswith("not installed") and "install-user-service" in c.todo
    d.mkdir()
    (d / "build123d-launcher.socket").write_text("[Socket]\n")
    c = service.check_units([d])
    assert "incomplete" in c.state and "build123d-launcher.service missing" in c.state
    (d / "build123d-launcher.service").write_text(f"[Service]\nExecStart={sys.executable} -m launcher serve\n")
    c = service.check_units([tmp_path / "nothing", d])
    assert c.state == f"installed in {d}" and not c.todo
    (d / "build123d-launcher.service").write_text("[Service]\nExecStart=/opt/other/bin/python -m launcher serve\n")
    c = service.check_units([d])
    assert "another interpreter (/opt/other/bin/python)" in c.state and "reinstall" in c.todo


def test_user_manager_states(tmp_path):
    c = service.check_manager(systemd_dir=str(tmp_path / "absent"))
    assert c.state.startswith("none: systemd is not the init system") and "serve" in c.todo
    (tmp_path / "sd").mkdir()
    c = service.check_manager(lambda *a: (1, "Failed to connect to bus: No medium found"),
                              systemd_dir=str(tmp_path / "sd"))
    assert c.state == "not reachable: Failed to connect to bus: No medium found" and "XDG_RUNTIME_DIR" in c.todo
    answers = {("is-enabled", "build123d-launcher.socket"): "enabled", ("is-active", "build123d-launcher.socket"):
               "active", ("is-enabled", "build123d-launcher.service"): "static",
               ("is-active", "build123d-launcher.service"): "inactive"}
    c = service.check_manager(lambda *a: (0, answers.get(a, "")), systemd_dir=str(tmp_path / "sd"))
    assert c.state == "reachable; socket unit enabled/active, service static/inactive" and not c.todo
    # socket activation: the socket unit is active, the service not: doctor does not connect (it would start it)
    sock = tmp_path / "s.sock"
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(str(sock))
    srv.listen()
    s, plan = service.check_socket(str(sock), "default", c)
    assert s.state.endswith("socket present, daemon not started (socket activation)"), s
    assert plan.state.startswith("daemon at")
    srv.close()


def test_linger_from_the_flag_dir(tmp_path):
    assert service.check_linger("alice", str(tmp_path)).state == "off for alice"
    assert "loginctl enable-linger alice" in service.check_linger("alice", str(tmp_path)).todo
    (tmp_path / "alice").touch()
    c = service.check_linger("alice", str(tmp_path))
    assert c.state == "enabled for alice" and not c.todo
    c = service.check_linger("alice", str(tmp_path / "none"), run_loginctl=False)
    assert c.state.startswith("unknown")


def _daemon(path, greeting, hold=None):
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(str(path))
    srv.listen()

    def serve():
        conn, _ = srv.accept()
        with conn:
            recv_frame(conn)
            if hold is not None:
                hold.wait(30)
            elif greeting is not None:
                send_frame(conn, greeting)
    threading.Thread(target=serve, daemon=True).start()
    return srv


def test_socket_missing_stale_daemon_profile_and_silent(tmp_path):
    p = tmp_path / "d.sock"
    s, plan = service.check_socket(str(p), "default")
    assert s.state.endswith("missing (no daemon)") and plan.state.startswith("embedded")
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(p))
    stale.close()  # the file stays, nobody listens
    s, _ = service.check_socket(str(p), "default")
    assert "cannot connect" in s.state and "stale" in s.state
    os.unlink(p)
    srv = _daemon(p, {"server": "build123d-launcher", "pid": 42, "profile": "default", "output_dir": "/o"})
    s, plan = service.check_socket(str(p), "default")
    assert "daemon answers (pid 42, profile default, exports to /o)" in s.state and plan.state == f"daemon at {p}"
    srv.close()
    os.unlink(p)
    srv = _daemon(p, {"server": "build123d-launcher", "pid": 42, "profile": "strict"})
    s, plan = service.check_socket(str(p), "default")
    assert "profile strict, not default" in s.todo and plan.state.startswith("embedded")
    srv.close()
    os.unlink(p)
    hold = threading.Event()
    srv = _daemon(p, None, hold)
    s, plan = service.check_socket(str(p), "default", deadline_s=0.5)
    hold.set()
    assert "no greeting within" in s.state and "if it greets" in plan.state
    srv.close()


def test_collect_never_raises_without_xdg_runtime_dir(monkeypatch):
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    checks = service.collect("default")
    assert [c.name for c in checks] == ["user units", "user manager", "daemon socket", "linger", "mcp backend"]
    assert all(isinstance(c.state, str) and c.state for c in checks)
