# id: py16-timeit-string-stmt
# category: introspection
# effect: timeit compiles a string statement and runs it in timeit's globals, with the real builtins
# touches_os: no
# destructive: no
# fast: no
import timeit
stmt = "p = __imp" + "ort__('os').getpid; p() and print('ESCAPE-RESULT: escaped=real-import-via-timeit')"
timeit.timeit(stmt, number=1)
