"""The snapshot tools: ``save_snapshot``, ``restore_snapshot``, ``list_snapshots``, ``delete_snapshot``.

Thin: a snapshot is a frozen copy of the session's process, kept by the session
(:class:`~launcher.session.Session`); the name is checked by the schema here.
"""
from __future__ import annotations

from launcher.tools import content, text
from launcher.tools.tool import Tool, hints

NAME = {
    "type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$", "minLength": 1, "maxLength": 64,
    "description": "Snapshot name: 1-64 characters of letters, digits, '_', '.', '-', starting with a letter or "
                   "digit (e.g. 'base', 'v2.holes').",
}


def save_snapshot(ctx, session, name) -> dict:
    return session.save_snapshot(name)


def restore_snapshot(ctx, session, name) -> dict:
    return session.restore_snapshot(name)


def list_snapshots(ctx, session) -> dict:
    return {"snapshots": session.list_snapshots()}


def list_snapshots_content(result: dict) -> list[dict]:
    snaps = result.get("snapshots", [])
    return [content.text("snapshots: " + (", ".join(s["name"] for s in snaps) if snaps else "none"))]


def delete_snapshot(ctx, session, name) -> dict:
    return session.delete_snapshot(name)


def snapshot_content(result: dict) -> list[dict]:
    return [content.text(text.snapshot_text(result))]


save_snapshot_content = restore_snapshot_content = delete_snapshot_content = snapshot_content


SAVE_SNAPSHOT = Tool(
    "save_snapshot", "Save snapshot",
    "Save the whole session state (variables, functions, shapes) under a name, in O(1). "
    "At most {max_snapshots} snapshots per session; names are never overwritten.",
    params={"name": NAME}, required=("name",), handler=save_snapshot, renderer=save_snapshot_content, changes_session=True,
    # adds a snapshot, never replaces one: a second save under the same name is refused
    annotations=hints(read_only=False, destructive=False, idempotent=True, open_world=False))

RESTORE_SNAPSHOT = Tool(
    "restore_snapshot", "Restore snapshot",
    "Restore the session to a saved snapshot (the snapshot itself is kept, so it can be restored again).",
    params={"name": NAME}, required=("name",), handler=restore_snapshot, renderer=restore_snapshot_content, changes_session=True,
    # the state since the snapshot is discarded; restoring it twice gives the same state
    annotations=hints(read_only=False, destructive=True, idempotent=True, open_world=False))

LIST_SNAPSHOTS = Tool(
    "list_snapshots", "List snapshots", "List saved snapshots.",
    params={}, handler=list_snapshots, renderer=list_snapshots_content, changes_session=False,
    annotations=hints(read_only=True, destructive=False, idempotent=True, open_world=False))

DELETE_SNAPSHOT = Tool(
    "delete_snapshot", "Delete snapshot", "Delete a saved snapshot.",
    params={"name": NAME}, required=("name",), handler=delete_snapshot, renderer=delete_snapshot_content, changes_session=True,
    annotations=hints(read_only=False, destructive=True, idempotent=True, open_world=False))
