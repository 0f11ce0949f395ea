"""What runs inside the jail: the OS layers (namespaces, rlimits, filesystem,
privileges, seccomp), the Python layers (AST policy, builtins) and the runner.

Every module here runs in a process that user code may later run in, or in the
zygote that forks them. Nothing here may depend on the launcher side (`launcher`), which opens
sockets or files outside the session.
"""
