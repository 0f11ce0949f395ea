"""The CAD workload in the jail: the runner, the Python layers (AST policy, builtins) and one
module per CAD service (render, measure, import, export, api)."""
