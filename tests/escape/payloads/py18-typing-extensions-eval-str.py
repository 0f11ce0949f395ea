# id: py18-typing-extensions-eval-str
# category: introspection
# effect: typing_extensions.get_annotations(eval_str=True) evals annotation strings in the globals of the module the class names
# touches_os: no
# destructive: no
# fast: no
import typing_extensions
C = type("C", (), {"__module__": "os", "__annotations__": {"x": "getpid"}})
pid = typing_extensions.get_annotations(C, eval_str=True)["x"]()
if isinstance(pid, int):
    print("ESCAPE-RESULT: escaped=real-os-via-typing-extensions-eval")
