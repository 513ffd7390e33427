#!/usr/bin/env bash
# `make serve`: the production web server. Migrates, collects static files (served by
# whitenoise), then runs gunicorn with kb/gunicorn_conf.py (workers and timeouts from
# KB_BIND, KB_WEB_WORKERS, KB_WEB_TIMEOUT). Needs SECRET_KEY (and ALLOWED_HOSTS etc.) in
# the environment; the Celery worker runs separately (README, Deployment).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
export DJANGO_SETTINGS_MODULE=${DJANGO_SETTINGS_MODULE:-kb.settings}
$PY manage.py migrate --noinput >/dev/null
$PY manage.py collectstatic --noinput >/dev/null
$PY manage.py sync_runbooks
exec $PY -m gunicorn -c kb/gunicorn_conf.py
