"""``Launcher(zygote=...)``: launchers on one already started zygote (what the tests do to save a
zygote start per module). The launcher uses it, never stops it, and refuses one started for
another userns mode or jail uid; when it dies, the launcher starts (and owns) its own."""
from __future__ import annotations

import dataclasses

import pytest

from launcher.core import Launcher
from launcher.profile import load_profile
from launcher.session.zygote import Zygote
from tests.helpers.cli import TEST_PROFILE
from tests.helpers.proc import wait_until


def test_a_shared_zygote_serves_two_launchers_and_outlives_them(tmp_path):
    prof = load_profile(TEST_PROFILE)
    z = Zygote(userns=prof.mode("userns"))
    try:
        for i in range(2):
            with Launcher(prof, output_dir=tmp_path / f"o{i}", spare_sessions=0, zygote=z) as L:
                assert L.zygote is z
                s = L.new_session()
                assert s.execute("x = 6 * 7")["ok"] and s.execute("print(x)")["stdout"] == "42\n"
            assert z.alive(), "close() stopped a zygote the launcher does not own"
        other = "required" if prof.mode("userns") != "required" else "auto"
        with pytest.raises(ValueError, match="shared zygote runs userns"):
            Launcher(dataclasses.replace(prof, layers={**prof.layers, "userns": other}), output_dir=tmp_path / "x",
                     zygote=z)
        with pytest.raises(ValueError, match="jail_uid"):
            Launcher(prof, output_dir=tmp_path / "y", jail_uid="65533", zygote=z)
    finally:
        z.close()


def test_a_dead_shared_zygote_is_replaced_by_one_the_launcher_owns(tmp_path):
    prof = load_profile(TEST_PROFILE)
    z = Zygote(userns=prof.mode("userns"))
    z.proc.kill()
    assert wait_until(lambda: not z.alive(), 10)
    with Launcher(prof, output_dir=tmp_path / "o", spare_sessions=0, zygote=z) as L:
        s = L.new_session()
        assert s.execute("print(1)")["stdout"] == "1\n"
        own = L.zygote
        assert own is not z and own.alive()
    assert wait_until(lambda: not own.alive(), 10), "the launcher's own zygote outlived close()"
    z.close()
