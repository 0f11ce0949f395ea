# id: in15-warnings-showwarning
# category: introspection
# effect: warnings.warn_explicit with filename=secret: the formatter reads the source line
# touches_os: yes
# destructive: no
# fast: no
import build123d
b = build123d
w = b.warnings
print(w.formatwarning("x", UserWarning, "{SECRET}", 1))
