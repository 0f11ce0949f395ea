"""A few of build123d's own examples, unmodified, through ``execute`` (issue 21; the whole corpus is
bench/bench_corpus.py).

Each file of tests/data/corpus (verbatim from the build123d 0.13.0 sdist, see its README) is one
``execute`` call of a fresh session on the test profile's rules (default's), with a limit long enough
for a loaded machine. They cover what the corpus needed: the viewer (``ocp_vscode``), the CQ-editor
``locals()`` guard, ``os``/``__file__`` paths, and a file written by code; ``spring.py`` ran before.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import zygotes
from tests.helpers.cli import TEST_PROFILE
from tests.helpers.toolcalls import ToolCalls

pytestmark = pytest.mark.jail

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"
FILES = sorted(p.name for p in CORPUS.glob("*.py"))


@pytest.fixture(scope="module")
def launcher(tmp_path_factory):
    d = tmp_path_factory.mktemp("corpus")
    prof = d / "corpus.toml"
    prof.write_text(f'extends = "{TEST_PROFILE}"\nname = "corpus"\n[limits]\ntimeout_s = 60\ncpu_s = 60\n')
    with zygotes.on_shared_zygote(str(prof), output_dir=d / "out", input_dir=CORPUS, spare_sessions=1) as L:
        yield L


def test_the_sample_is_there():
    assert FILES == ["dual_color_3mf.py", "filter_geomtype.py", "handle_algebra.py", "pillow_block_algebra.py",
                     "spring.py"]


@pytest.mark.parametrize("name", FILES)
def test_corpus_file_runs_unmodified(launcher, name):
    ts = ToolCalls(launcher)
    try:
        r = ts.execute((CORPUS / name).read_text(encoding="utf-8"))
    finally:
        ts.close()
    assert r.get("ok"), (name, r.get("error"))
    if name == "dual_color_3mf.py":  # the 3MF the code wrote is delivered to the output directory
        assert any(p.name == "dual_color.3mf" for p in launcher.output_dir.rglob("*")), r
