"""What both sides of the boundary import: the wire protocol, profile types, errors, caps, the SVG check.

Pure code: no file access, no process state. The launcher imports these and nothing
else from ``jail``.
"""
