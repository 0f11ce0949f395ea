"""The audit line's ``layer`` field: only a (dotted) identifier the jail names, else ``other``."""
import logging

from launcher.session.reports import log_call, log_layer


def test_identifiers_pass_and_everything_else_is_other():
    assert log_layer("ZeroDivisionError") == "ZeroDivisionError"
    assert log_layer("OCP.StdFail_NotDone") == "OCP.StdFail_NotDone"
    assert log_layer(None) == "-"
    for bad in ("AWS_SECRET=abc", "x y", "line\nforged=1", "a" * 65, "é", "", 7, "1abc"):
        assert log_layer(bad) == "other", bad


def test_a_forged_type_never_reaches_the_log(caplog):
    with caplog.at_level(logging.INFO, logger="build123d_launcher.audit"):
        log_call("s1", "x = 1", "error", 1.0, "KEY=AKIA1234 outcome=ok")
    assert caplog.records[-1].getMessage().endswith("layer=other")
