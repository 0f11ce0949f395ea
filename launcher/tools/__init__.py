"""The tools, declared once (name, schema, handler, content) and served by a ToolSet for every transport."""
