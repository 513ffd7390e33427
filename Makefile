# kb: `make run` starts the app, `make test` runs every test. Both install first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run serve test bench chaos install system-deps clean

$(STAMP): requirements.txt requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

install: $(STAMP) system-deps

# Debian packages the app and the tests use: redis-server (broker when none
# answers), chromium (browser tests), a JDK for Spark. Installed only if missing.
system-deps:
	bash scripts/system-deps.sh

run: install
	bash scripts/run.sh

# Production web server (gunicorn, README "Deployment"); needs SECRET_KEY in the environment.
serve: install
	bash scripts/serve.sh

test: install
	$(PY) -m pytest $(PYTEST_ARGS)

bench: install
	$(PY) -m scripts.bench $(BENCH_ARGS)
	$(PY) -m scripts.bench_api

chaos: install
	$(PY) -m pytest -m chaos --run-chaos $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) var .pytest_cache
