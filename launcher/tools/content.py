"""MCP content blocks, as plain dicts every front end can use, and their text form for the CLI.

A tool's content renderer returns a list of blocks shaped like MCP content:
``{"type": "text", "text": str}`` or ``{"type": "image", "data": <base64 str>, "mimeType": ...}``.
The MCP server turns them into SDK objects; :func:`as_text` prints them (images summarised).
Everything rendered here was already rebuilt from untrusted input (launcher/replies/); this module
only formats it.
"""
from __future__ import annotations

import json


def text(s: str) -> dict:
    return {"type": "text", "text": s}


def image(data_b64: str, mime: str = "image/png") -> dict:
    """An image block from already base64-encoded bytes (a render result's ``png_b64``)."""
    return {"type": "image", "data": data_b64, "mimeType": mime}


def as_json(result) -> list[dict]:
    """The default rendering of a result dict: indented JSON."""
    return [text(json.dumps(result, indent=1, default=str))]


def error(result) -> list[dict] | None:
    """``Error: ...`` when ``result`` is not a dict or carries an ``error`` string, else None."""
    if not isinstance(result, dict):
        return [text("Error: invalid result")]
    if isinstance(result.get("error"), str):
        return [text(f"Error: {result['error']}")]
    return None


def is_error(result) -> bool:
    """Whether a result dict is a failed call (MCP ``isError``)."""
    if not isinstance(result, dict):
        return True
    if isinstance(result.get("error"), str):
        return True
    return result.get("ok") is False


def as_text(blocks: list[dict]) -> str:
    """Content blocks as plain text: the text blocks, each image as ``[image image/png, N bytes]``."""
    out = []
    for b in blocks:
        if b.get("type") == "text":
            out.append(b["text"])
        else:
            out.append(f"[{b.get('type')} {b.get('mimeType', '')}, {len(b.get('data', '')) * 3 // 4} bytes]")
    return "\n".join(out)
