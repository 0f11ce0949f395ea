# id: fw20-mesher-write-tmp
# category: file-write
# effect: Mesher().write (lib3mf's native writer) to /tmp
# touches_os: yes
# destructive: no
# fast: no
m = Mesher()
m.add_shape(Box(1, 1, 1))
m.write("/tmp/{MARK}.3mf")
