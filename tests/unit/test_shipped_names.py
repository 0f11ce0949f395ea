"""The launcher finds the file names a call's code mentions without parsing the code (shipped.py)."""
import threading

from launcher.files.shipped import MAX_LITERALS, literal_names


def test_plain_string_literals_in_source_order():
    code = ("import_svg('logo.svg')\nx = f'{a}.step'\ny = b'x.stl'\nz = './parts/a.step'\n"
            "w = '''multi.dxf'''\nv = 'no-dot'\nu = 'logo.svg'\n")
    assert literal_names(code) == ["logo.svg", "parts/a.step", "multi.dxf"]


def test_hostile_code_never_raises():
    for code in ("(" * 100_000 + "'a.step'", "x = 'a.step\n", "\x00'b.step'", "'\\N{nope}.step'",
                 "[" * 5000 + "]" * 5000, "'a.step' " * (MAX_LITERALS + 10)):
        assert isinstance(literal_names(code), list)
    assert literal_names("(" * 100_000 + "'a.step'") == ["a.step"]  # no recursion: found anyway


def test_concurrent_calls_do_not_break_each_other():
    """Daemon clients are threads: ast.parse from several threads failed with SystemError on 3.11."""
    code = "\n".join(f"f{i} = ({'(' * 40}'p{i}.step'{')' * 40})" for i in range(200))
    errors, results = [], []

    def work():
        try:
            for _ in range(20):
                results.append(len(literal_names(code)))
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and results == [200] * 80, (errors, results[:5])
