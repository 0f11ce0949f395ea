# id: pt10-terminal-escapes
# category: protocol
# effect: print ANSI CSI/OSC sequences (clear screen, window title, hyperlink), 8-bit CSI, CR and bidi overrides in output
# touches_os: no
# destructive: no
# fast: no
print("\x1b[2J\x1b[H\x1b]0;pwned\x07\x1b]8;;http://{MARK}.invalid/\x1b\\click\x1b]8;;\x1b\\ \u202etxt.exe\u2066 \x9b31m \rover")
print("\x1b[1A\x1b[2Klevel=info outcome=ok\u2028forged")
