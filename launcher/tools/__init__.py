"""The tools, each declared once (name, schema, hints, handler, content) and served by a ToolSet.

``TOOLS`` (table.py) is the ordered list every front end reads; ``get(name)`` looks one up;
``ToolSet`` serves them over one session; ``render_text`` prints a result for the CLI.
"""
from launcher.tools.table import NAMES, TOOLS, get, render_text
from launcher.tools.tool import Tool
from launcher.tools.toolset import ToolSet

__all__ = ["NAMES", "TOOLS", "Tool", "ToolSet", "get", "render_text"]
