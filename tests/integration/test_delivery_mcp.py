"""Files written by code and files a script ships with, end to end over MCP stdio (issue 21).

``python -m launcher mcp --embedded --input-dir IN --output-dir OUT`` driven by the real ``mcp``
SDK client. Unmodified build123d code writes files (``export_step(part, "p.step")``, an
``exporters/`` folder, a log file); a successful call's files are delivered to the output
directory, re-checked, and listed in the reply; a failed call delivers nothing; a rerun replaces
the file this server delivered but never the user's own; ``import_step("part.step")`` reads a
file list_inputs offers, and nothing else in the input directory becomes readable.

Tests after the "with the jail's scratch directory" line need the jail's scratch directory (jail/cad/scratch.py); the first test
needs only the launcher: a session with the Python layers off forges its result with files.
"""
from __future__ import annotations

import re
import shutil

import pytest

from tests.helpers.faults import profile_path
from tests.helpers.cli import REPO, launcher_env  # noqa: F401 (launcher_env: mcpclient's environment)

import mcpclient

PART = "part = Box(10, 20, 30)\n"
STEP_VOLUME = 6000.0


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    d = tmp_path_factory.mktemp("delivery-mcp")
    (d / "in").mkdir()
    (d / "out").mkdir()
    return d


@pytest.fixture(scope="module")
def client(dirs):
    with mcpclient.running(dirs / "out", dirs / "stderr.log", "--input-dir", str(dirs / "in")) as c:
        yield c


def delivered(text: str) -> dict[str, str]:
    """path -> its line, from the reply's list of delivered files."""
    return {m.group(1): m.group(0) for m in re.finditer(r"^  (/\S+) \((.*)$", text, re.M)}


def test_forged_files_are_listed_safely_over_mcp(tmp_path):
    """A session that owns its process sends files with hostile names: the reply lists the one
    delivered and each refusal, escaped (no raw control or bidi character reaches the client)."""
    from build123d import Box, export_step
    export_step(Box(1, 2, 3), str(tmp_path / "b.step"))
    step = (tmp_path / "b.step").read_bytes()
    names = ["ok.step", "evil\u202egpj.step", "\x1b]0;title\x07.step", "../up.step", "conftest.py", "run.log"]
    files = [{"name": n, "size": len(step)} for n in names]
    code = ("import os\nfrom jail.wire import protocol\n"
            f"msg = {{'t': 'result', 'ok': True, 'stdout': '', 'stderr': '', 'objects': [], 'files': {files!r}}}\n"
            f"for d in protocol.frames(msg, {step!r} * {len(names)}):\n    os.write(3, d)\n")
    out = tmp_path / "out"
    params = mcpclient.server_params(out)
    params.args[params.args.index("--profile") + 1] = profile_path("faults_delivery")
    with mcpclient.running(out, tmp_path / "stderr.log", params=params) as c:
        t = c.text("execute", {"code": code})
    assert "Files the code wrote, delivered to the output directory (made by untrusted code" in t, t
    assert str(out / "ok.step") in delivered(t), t
    assert "Not delivered: evil\\u202egpj.step: filename contains an invisible format character (U+202E" in t, t
    assert "Not delivered: \\x1b]0;title\\x07.step: filename contains a control character" in t, t
    assert "Not delivered: ../up.step: '..' is refused" in t
    assert "Not delivered: conftest.py: a .py file written by code is never delivered" in t
    assert "Not delivered: run.log: only files of the export formats are delivered" in t
    assert "\u202e" not in t and "\x1b" not in t and "\x07" not in t
    assert sorted(p.name for p in out.iterdir() if p.name != "stderr.log") == ["ok.step"]


# ------------------------------------------------------------------ with the jail's scratch directory (H10)
# needs the jail's scratch directory (H10)
def test_export_step_in_code_delivers_a_verified_step(client, dirs):
    t = client.text("execute", {"code": PART + 'export_step(part, "p.step")\n'})
    line = delivered(t).get(str(dirs / "out" / "p.step"))
    assert line and "STEP" in line and "volume 6000" in line, t
    from build123d import import_step
    assert abs(import_step(str(dirs / "out" / "p.step")).volume - STEP_VOLUME) < 1e-6


# needs the jail's scratch directory (H10)
def test_exporters_folder_and_a_log_file(client, dirs):
    code = (PART + "import os\nos.makedirs('exporters', exist_ok=True)\n"
            "export_stl(part, os.path.join('exporters', 'p.stl'))\n"
            "with open('build.log', 'w') as f:\n    f.write('built')\n")
    t = client.text("execute", {"code": code})
    assert str(dirs / "out" / "exporters" / "p.stl") in delivered(t), t
    assert "Not delivered: build.log: only files of the export formats are delivered" in t, t
    assert not (dirs / "out" / "build.log").exists()


# needs the jail's scratch directory (H10)
def test_a_failed_call_delivers_nothing(client, dirs):
    t = client.error("execute", {"code": PART + 'export_step(part, "failed.step")\nraise ValueError("boom")\n'})
    assert "ValueError" in t and "delivered" not in t, t
    assert not (dirs / "out" / "failed.step").exists()
    client.text("execute", {"code": "n = 1"})
    assert not (dirs / "out" / "failed.step").exists()


# needs the jail's scratch directory (H10)
def test_rerun_replaces_ours_never_the_users(client, dirs):
    code = PART + 'export_step(part, "again.step")\n'
    assert str(dirs / "out" / "again.step") in delivered(client.text("execute", {"code": code}))
    t = client.text("execute", {"code": code.replace("Box(10, 20, 30)", "Box(1, 2, 3)")})
    assert "replaced the file an earlier call delivered" in t, t
    (dirs / "out" / "mine.step").write_bytes(b"the user's own")
    t = client.text("execute", {"code": PART + 'export_step(part, "mine.step")\n'})
    assert "Not delivered: mine.step: 'mine.step' already exists and was not delivered by this server" in t, t
    assert (dirs / "out" / "mine.step").read_bytes() == b"the user's own"


# needs the jail's scratch directory (H10)
def test_files_the_script_ships_with_are_read(client, dirs):
    client.text("execute", {"code": PART + 'export_step(part, "shipped.step")\n'})
    shutil.copy(dirs / "out" / "shipped.step", dirs / "in" / "part.step")
    (dirs / "in" / "parts").mkdir(exist_ok=True)
    shutil.copy(dirs / "out" / "shipped.step", dirs / "in" / "parts" / "a.step")
    (dirs / "in" / ".env").write_bytes(b"SECRET=1\n")
    t = client.text("execute", {"code": 'p = import_step("part.step")\nq = import_step("./parts/a.step")\n'
                                        "from pathlib import Path\n"
                                        'r = import_step(Path(__file__).parent / "part.step")\n'
                                        "print(round(p.volume), round(q.volume), round(r.volume))\n"})
    assert "6000 6000 6000" in t, t
    assert "Input files sent with the call (from the input directory, never changed there): part.step" in t, t
    # nothing else of the input directory is readable: not a dot file, not a name the code builds
    t = client.error("execute", {"code": 'open(".env").read()\n'})
    assert "SECRET" not in t
    t = client.error("execute", {"code": 'n = "part" + ".step"\nimport_step(n)\n'})
    assert "6000" not in t
