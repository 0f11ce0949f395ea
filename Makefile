# build123d-launcher — `make demo` and `make test` do all set-up on Debian/Ubuntu.
SHELL := /bin/bash
# The venv is built from the system interpreter so that unprivileged uids (the
# jail's `nobody`, a systemd user service) can read it; pyenv/conda homes often cannot.
SYSTEM_PYTHON ?= $(shell for p in /usr/bin/python3 /usr/local/bin/python3 python3; do \
	if command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then \
	command -v $$p; break; fi; done)
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
APT_PACKAGES := python3-venv python3-dev gcc libcap-dev make
TEST_APT_PACKAGES := systemd strace util-linux procps

.PHONY: demo test test-fast soak bench audit doctor system-deps test-system-deps venv install-user-service wheel clean

system-deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing system packages:$$missing"; \
	    (apt-get update -qq || true) && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else \
	    echo "missing system packages. Run:"; echo "  sudo apt-get install -y$$missing"; echo "then run make again."; exit 1; \
	  fi; \
	fi
	@if [ -z "$(SYSTEM_PYTHON)" ]; then echo "Python >= 3.11 is required (install python3 >= 3.11)"; exit 1; fi

test-system-deps:
	@missing=""; for p in $(TEST_APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing test packages:$$missing"; \
	    (apt-get update -qq || true) && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else \
	    echo "note: some tests are skipped without:$$missing (sudo apt-get install -y$$missing)"; \
	  fi; \
	fi

$(STAMP): pyproject.toml | system-deps
	@test -x $(PY) || (umask 022 && $(SYSTEM_PYTHON) -m venv $(VENV))
	umask 022 && $(PY) -m pip install -q --upgrade pip
	umask 022 && $(PY) -m pip install -q -e '.[test]'
	@chmod -R a+rX $(VENV)
	@touch $(STAMP)

venv: system-deps $(STAMP)

demo: venv
	$(PY) -m launcher demo

doctor: venv
	$(PY) -m launcher doctor

# Test tiers (markers: pyproject.toml; how a test gets them: tests/helpers/tiers.py).
# make test-fast  the inner loop, under a minute: tests/unit without the `jail` marker (pure logic,
#                 the security functions' property tests, in-process CAD); no session, no jail layer.
# make test       the whole suite, as CI runs it (.ci/run); soak variants are skipped.
# make soak       tests/faults with --soak: the long counts and the soak variants.
# Other cuts by marker, e.g. .venv/bin/python -m pytest -m "jail and not slow and not root" tests
# test and test-fast run whole modules side by side in TEST_WORKERS processes (pytest-xdist, --dist
# loadfile: a module's launcher fixture is made once); most of a test's time is waiting for processes.
TEST_WORKERS ?= 2
test: venv test-system-deps
	$(PY) -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile tests

test-fast: venv
	$(PY) -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile -m "not jail" tests/unit

audit: venv
	$(PY) -m launcher audit

bench: venv
	$(PY) bench/run_all.py

soak: venv
	$(PY) -m pytest -q -s -p no:cacheprovider tests/faults --soak --durations=10

install-user-service: venv
	$(PY) -m launcher.daemon.install

# a wheel with its data (profiles, unit templates, payloads): pip/pipx/uv install dist/*.whl
wheel: venv
	$(PY) -m pip wheel --no-deps -w dist .

clean:
	rm -rf $(VENV) build dist *.egg-info
