# kb: `make run` starts the app, `make test` runs every test, `make check` the fast
# tier (no Spark, Celery, browser, chaos or slow test). All install first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run serve test check bench chaos install system-deps clean

# The fast tier: everything that needs no SparkSession, Celery worker, browser or
# long fault run, and no test marked slow (pytest.ini): the minutes while you work.
FAST := not spark and not celery and not browser and not chaos and not slow
# It runs in pytest-xdist workers, one per core (2 here; CHECK_WORKERS=0 for one
# process); worksteal hands a worker that ran out the tests still queued on the
# other, so one slow module does not leave a core idle at the end. Every fixture
# of the fast tier is per worker (tmp_path, free ports, the in-memory test database,
# var/ dirs under the worker's basetemp: tests/conftest.py).
CHECK_WORKERS ?= auto

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

# `make run PORT=8100` moves the web port (scripts/run.sh reads KB_PORT).
run: install
	$(if $(PORT),KB_PORT=$(PORT) )bash scripts/run.sh

# Production web server (gunicorn, README "Deployment"); needs SECRET_KEY in the environment.
serve: install
	bash scripts/serve.sh

test: install
	$(PY) -m pytest $(PYTEST_ARGS)

check: install
	$(PY) -m pytest -m "$(FAST)" -n $(CHECK_WORKERS) --dist worksteal $(PYTEST_ARGS)

bench: install
	$(PY) -m scripts.bench $(BENCH_ARGS)
	$(PY) -m scripts.bench_api
	$(PY) -m scripts.bench_search
	$(PY) -m scripts.accuracy_eval
	$(PY) -m scripts.wording_coverage

chaos: install
	$(PY) -m pytest -m chaos --run-chaos $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) var .pytest_cache
