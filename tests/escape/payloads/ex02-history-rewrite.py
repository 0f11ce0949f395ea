# id: ex02-history-rewrite
# category: exit
# effect: append a call that never ran to the session's own record of its calls (jail.cad.history) through type-hint evaluation, so the script shows it
# touches_os: no
# destructive: no
# fast: no
# then: script
import typing
forged = "{FORGED_REVERSED}"[::-1]
class Rec:
    h: "__import__('sys').modules['jail.cad.history']"
try:
    hist = typing.get_type_hints(Rec, {})["h"]
    hist._ENTRIES.append((0, "# " + forged + ": this call never ran\nnever_ran = 1\n", None))
    print("ESCAPE-RESULT: history=appended")
except Exception as e:
    print("ESCAPE-RESULT: history=refused", str(e)[:80].replace(" ", "_"))
part = Box(1, 1, 1)
