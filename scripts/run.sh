#!/usr/bin/env bash
# `make run`: migrate, load runbooks, make sure Redis answers, start a Celery
# worker and the web app on 127.0.0.1:8000. Ctrl-C stops everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
export DJANGO_SETTINGS_MODULE=kb.settings
mkdir -p var/log var/static
# kb refuses to start without SECRET_KEY when DEBUG is off. On a laptop: a random key made
# once and kept in var/secret_key (mode 600), so logins survive restarts; web and worker
# get it from the environment. A SECRET_KEY already set wins.
if [ -z "${SECRET_KEY:-}" ]; then
  [ -s var/secret_key ] || (umask 077; $PY -c "import secrets; print(secrets.token_urlsafe(50))" > var/secret_key)
  SECRET_KEY=$(cat var/secret_key)
  export SECRET_KEY
fi
$PY manage.py migrate --noinput >/dev/null
$PY manage.py sync_runbooks
pids=()
cleanup() { for p in "${pids[@]}"; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT INT TERM

REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/0}
if ! $PY -c "import redis,sys; redis.Redis.from_url('$REDIS_URL', socket_connect_timeout=1).ping()" 2>/dev/null; then
  port=$($PY -c "from urllib.parse import urlparse; print(urlparse('$REDIS_URL').port or 6379)")
  echo "kb: starting redis-server on 127.0.0.1:$port"
  setsid redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --logfile var/log/redis.log &
  pids+=($!)
  for _ in $(seq 50); do $PY -c "import redis; redis.Redis(port=$port).ping()" 2>/dev/null && break; sleep 0.2; done
fi

setsid $PY -m celery -A kb worker --loglevel INFO --concurrency 1 --logfile var/log/worker.log &
pids+=($!)
$PY manage.py ensure_login
echo "kb: worker log in var/log/worker.log; open http://127.0.0.1:8000"
# The development server, as before (static files by whitenoise); `make serve` runs gunicorn.
$PY manage.py runserver 127.0.0.1:8000 --noreload
