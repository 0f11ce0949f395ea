"""max_timeout_s: a profile that raises timeout_s past its base's maximum raises the maximum too;
one that names a maximum below its own timeout_s is refused. A limit that is not a positive,
finite number (TOML has ``nan`` and ``inf``) is refused, naming the key."""
import pytest

from launcher.profile import ProfileError, load_profile


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_a_longer_default_lifts_the_inherited_maximum(tmp_path):
    p = load_profile(_write(tmp_path, "long.toml", 'extends = "default"\n[limits]\ntimeout_s = 300\n'))
    assert p.limits.timeout_s == 300 and p.limits.max_timeout_s == 300


def test_the_inherited_maximum_is_kept_when_the_default_fits(tmp_path):
    p = load_profile(_write(tmp_path, "short.toml", 'extends = "default"\n[limits]\ntimeout_s = 5\n'))
    assert p.limits.timeout_s == 5 and p.limits.max_timeout_s == load_profile("default").limits.max_timeout_s


def test_an_explicit_maximum_below_the_default_is_refused(tmp_path):
    with pytest.raises(ProfileError, match="max_timeout_s"):
        load_profile(_write(tmp_path, "bad.toml",
                            'extends = "default"\n[limits]\ntimeout_s = 300\nmax_timeout_s = 60\n'))


@pytest.mark.parametrize("key, value", [("timeout_s", "nan"), ("max_timeout_s", "inf"), ("timeout_s", "-inf"),
                                        ("session_cpus", "nan"), ("import_timeout_s", "+inf"), ("timeout_s", "0.0")])
def test_a_limit_that_is_not_positive_and_finite_is_refused(tmp_path, key, value):
    """``nan`` compares false with everything: a wall-clock limit of nan would never be reached."""
    with pytest.raises(ProfileError, match=f"{key} must be a positive, finite number"):
        load_profile(_write(tmp_path, "bad.toml", f'extends = "default"\n[limits]\n{key} = {value}\n'))
