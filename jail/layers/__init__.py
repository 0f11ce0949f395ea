"""The OS layers 1-6, one module each; table.py lists all nine layers in order and applies them,
syscalls.py is the seccomp policy by purpose."""
