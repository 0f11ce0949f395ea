"""Every tool's MCP annotations, pinned, and the tools/list entries built from them.

readOnlyHint: the tool changes nothing (no session state, no file). destructiveHint: it may
discard or replace something (meaningful only when not read-only). idempotentHint: the same
call again changes nothing more. openWorldHint: it reaches outside the user's machine (no tool
does). changes_session is separate: export writes a file but leaves the session as it was.
"""
from __future__ import annotations

import pytest

from launcher.mcp.server import list_tools
from launcher.tools import NAMES, TOOLS, Tool, get
from launcher.tools.tool import ANNOTATION_KEYS, hints

# name: (readOnlyHint, destructiveHint, idempotentHint, openWorldHint, changes_session)
PINNED = {
    "execute":          (False, True,  False, False, True),
    "session_state":    (True,  False, True,  False, False),
    "last_error":       (True,  False, True,  False, False),
    "save_snapshot":    (False, False, True,  False, True),
    "restore_snapshot": (False, True,  True,  False, True),
    "list_snapshots":   (True,  False, True,  False, False),
    "delete_snapshot":  (False, True,  True,  False, True),
    "reset":            (False, True,  True,  False, True),
    "export":           (False, False, True,  False, False),
    "api":              (True,  False, True,  False, False),
    "render":           (True,  False, True,  False, False),
    "measure":          (True,  False, True,  False, False),
    "distance":         (True,  False, True,  False, False),
    "validate":         (True,  False, True,  False, False),
    "features":         (True,  False, True,  False, False),
    "list_inputs":      (True,  False, True,  False, False),
    "import_file":      (False, True,  False, False, True),
    "script":           (True,  False, True,  False, False),
}


def test_every_tool_is_pinned():
    assert set(PINNED) == set(NAMES)


@pytest.mark.parametrize("name", sorted(PINNED))
def test_hints_are_pinned(name):
    t = get(name)
    assert tuple(t.annotations) == ANNOTATION_KEYS == ("readOnlyHint", "destructiveHint", "idempotentHint",
                                                       "openWorldHint")
    assert all(type(v) is bool for v in t.annotations.values()) and type(t.changes_session) is bool
    assert (*t.annotations.values(), t.changes_session) == PINNED[name]


def test_the_two_that_were_wrong():
    assert get("export").annotations["readOnlyHint"] is False         # it writes files
    assert get("export").annotations["destructiveHint"] is False      # ... never over an existing one
    assert get("save_snapshot").annotations["destructiveHint"] is False


def test_read_only_tools_change_nothing():
    for t in TOOLS:
        if t.annotations["readOnlyHint"]:
            assert not t.changes_session and not t.annotations["destructiveHint"], t.name
        else:
            assert t.changes_session or t.name == "export", t.name


def test_tools_list_carries_the_declared_hints():
    listed = {t.name: t for t in list_tools()}
    assert list(listed) == list(NAMES)
    for t in TOOLS:
        a = listed[t.name].annotations.model_dump(by_alias=True, exclude_none=True)
        assert a == {"title": t.title, **t.annotations}, t.name


def test_a_declaration_without_all_four_hints_is_refused():
    kw = dict(name="x", title="X", description="d", params={}, handler=lambda ctx, s: {}, changes_session=False)
    Tool(annotations=hints(read_only=True, destructive=False, idempotent=True, open_world=False), **kw)
    with pytest.raises(ValueError, match="four bools"):
        Tool(annotations={"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True}, **kw)
    with pytest.raises(ValueError, match="four bools"):
        Tool(annotations=hints(read_only=1, destructive=False, idempotent=True, open_world=False), **kw)
    with pytest.raises(ValueError, match="changes_session"):
        Tool(annotations=hints(read_only=True, destructive=False, idempotent=True, open_world=False),
             **dict(kw, changes_session=None))
