"""The "jail cannot start" message under uvx / uv tool as root names uv's directory and the fix."""
from __future__ import annotations

import sys

import pytest

from jail.wire.errors import LayerError
from launcher.selftest.preflight import check_jail_can_read, uv_hint


def _locked(tmp_path, *parts):
    home = tmp_path / "root"
    target = home.joinpath(*parts)
    target.mkdir(parents=True)
    home.chmod(0o700)
    return home, target


def test_uvx_cache_is_named_with_the_fix(tmp_path, monkeypatch):
    home, env_dir = _locked(tmp_path, ".cache", "uv", "archive-v0", "abc")
    monkeypatch.setenv("UV_CACHE_DIR", str(home / ".cache" / "uv"))
    monkeypatch.setattr(sys, "prefix", str(env_dir))
    try:
        with pytest.raises(LayerError) as ei:
            check_jail_can_read(65534, 65534)
    finally:
        home.chmod(0o755)
    msg = ei.value.reason
    assert "cannot enter /" in msg
    assert f"runs from uv's cache {home / '.cache' / 'uv'} (uvx)" in msg and "UV_CACHE_DIR=/var/tmp/uv uvx" in msg


def test_uv_tool_dir_and_uv_python_are_named(tmp_path):
    home = tmp_path / "h"
    tool = home / ".local/share/uv/tools/build123d-launcher"
    py = home / ".local/share/uv/python/cpython-3.12"
    hint = uv_hint([tool, py], env={}, home=home)
    assert "`uv tool install` under" in hint and "UV_TOOL_DIR=/opt/uv-tools" in hint
    assert "uv-managed one under" in hint and "--python /usr/bin/python3" in hint
    assert uv_hint([tmp_path / "venv"], env={}, home=home) == ""
