"""``build123d-launcher audit``: the escape-attempt matrix, run on this host.

Every payload in ``tests/escape/payloads/`` (session code that would escape if it ran unjailed;
format in :mod:`.payloads`) runs in a real session under three columns (:data:`.run.COLUMNS`):
``all`` (the default profile), ``os_only`` (the Python layers off: the OS layers alone) and
``python_only`` (every OS layer off; may really escape, destructive payloads are skipped;
reported, never required). A cell is judged by canaries (:mod:`.canaries`, :mod:`.checks`,
:mod:`.run`), not by what the payload says; a payload's ``then:`` step drives what leaves the jail
after its call (script, export names, inputs, reply, daemon slots: :mod:`.exits`) and judges it
the same way. :mod:`.classify` names the layer that stopped it and :mod:`.report` renders the
matrix. Required: every cell of ``all`` and every ``touches_os: yes`` or ``then:`` cell of
``os_only``. Entry point: :func:`run_audit` (:mod:`.cli`). The canaries and the payload
format in full: ``tests/escape/README.md``.
"""
from launcher.selftest.audit.cli import run_audit

__all__ = ["run_audit"]
