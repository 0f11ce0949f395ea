# id: pt17-escapes-in-repr-and-error
# category: protocol
# effect: terminal escapes and bidi overrides in an object's repr, a top-level name and an error message
# touches_os: no
# destructive: no
# fast: no
class Shown:
    def __repr__(self):
        return "\x1b[2J\x1b]0;pwned\x07\u202eexe.txt"
shown = Shown()
globals()["name\x1b[31m\u202e"] = 1
raise ValueError("\x1b[1A\x1b[2Klevel=info outcome=ok \u2028forged " + repr(shown))
