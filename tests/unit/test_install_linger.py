"""install-user-service ends with `loginctl enable-linger` advice only when linger is off."""
from __future__ import annotations

from launcher.daemon.install import install
from launcher.selftest.service import current_user


def test_linger_advice_only_when_off(tmp_path, capsys):
    linger = tmp_path / "linger"
    linger.mkdir()
    kw = dict(profile="default", output_dir=str(tmp_path / "out"), systemctl=False, linger_dir=str(linger))
    done = install(tmp_path / "units", **kw)
    assert f"loginctl enable-linger {current_user()}" in done[-1], done
    assert "loginctl enable-linger" in capsys.readouterr().out
    (linger / current_user()).touch()
    done = install(tmp_path / "units", **kw)
    assert not any("enable-linger" in d for d in done), done
