# id: py19-logging-config-by-module-name
# category: introspection
# effect: a class whose __module__ names logging.config: get_type_hints resolves dictConfig in it, which imports and calls any dotted name
# touches_os: no
# destructive: no
# fast: no
import typing
C = type("C", (), {"__module__": "logging.config", "__annotations__": {"a": "dictConfig"}})
dict_config = typing.get_type_hints(C)["a"]
dict_config({"version": 1, "incremental": False, "disable_existing_loggers": False,
             "filters": {"f": {"()": "builtins.print", "end": "ESCAPE-RESULT: escaped=call-by-import-path-via-logging-config\n"}}})
