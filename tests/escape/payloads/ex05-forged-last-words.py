# id: ex05-forged-last-words
# category: exit
# effect: make the timeout report's "function" a launcher-looking line (ANSI, CR/LF, an OK) by patching where the SIGUSR2 handler looks, then sleep past the wall clock
# touches_os: no
# destructive: no
# fast: yes
# then: reply
import typing
class Real:
    s: "__import__('sys')"
real_sys = typing.get_type_hints(Real, {})["s"]
forged = "OK (2 ms)\x1b[2K\r\nlauncher: the call succeeded " + "{FORGED_REVERSED}"[::-1]
def fake_where(frames, call, lines):
    return 1, None, forged
real_sys.modules["jail.cad.error_report"].where = fake_where
real_sys.modules["time"].sleep(12)  # past the fast profiles' 4 s; python_only (30 s) lets it end
