# id: in02-format-leak
# category: introspection
# effect: str.format traversal built at run time prints os.environ of a library module
# touches_os: yes
# destructive: no
# fast: no
d = "_" * 2             # dunders assembled at run time: no literal dunder in the source
s = "{0." + d + "globals" + d + "[os].environ}"
print(s.format(import_step))
s2 = "{0." + d + "globals" + d + "[os].getcwd}"
print(s2.format(import_step))
