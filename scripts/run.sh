#!/usr/bin/env bash
# `make run`: migrate, load runbooks, make sure Redis answers, start a Celery
# worker and the web app on 127.0.0.1:8000. Ctrl-C stops everything it started.
# KB_PORT (or `make run PORT=8100`) moves the web port, and with it the login URL
# printed and SITE_URL (links in notifications) unless SITE_URL is set;
# KB_VAR_DIR moves the database, logs and secrets (kb.settings) from var/.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
export DJANGO_SETTINGS_MODULE=kb.settings
KB_PORT=${KB_PORT:-8000}
if ! [[ "$KB_PORT" =~ ^[0-9]+$ ]] || (( KB_PORT < 1 || KB_PORT > 65535 )); then
  echo "kb: KB_PORT (or PORT) must be a port number from 1 to 65535, not '$KB_PORT'" >&2
  exit 2
fi
export SITE_URL=${SITE_URL:-http://127.0.0.1:$KB_PORT}
VAR=${KB_VAR_DIR:-var}
mkdir -p "$VAR/log" "$VAR/static"
# kb refuses to start without SECRET_KEY when DEBUG is off. On a laptop: a random key made
# once and kept in var/secret_key (mode 600), so logins survive restarts; web and worker
# get it from the environment. A SECRET_KEY already set wins.
if [ -z "${SECRET_KEY:-}" ]; then
  [ -s "$VAR/secret_key" ] || (umask 077; $PY -c "import secrets; print(secrets.token_urlsafe(50))" > "$VAR/secret_key")
  SECRET_KEY=$(cat "$VAR/secret_key")
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
  setsid redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --logfile "$VAR/log/redis.log" &
  pids+=($!)
  for _ in $(seq 50); do $PY -c "import redis; redis.Redis(port=$port).ping()" 2>/dev/null && break; sleep 0.2; done
fi

setsid $PY -m celery -A kb worker --loglevel INFO --concurrency 1 --logfile "$VAR/log/worker.log" &
pids+=($!)
$PY manage.py ensure_login
echo "kb: worker log in $VAR/log/worker.log; open http://127.0.0.1:$KB_PORT"
# The development server, as before (static files by whitenoise); `make serve` runs gunicorn.
$PY manage.py runserver "127.0.0.1:$KB_PORT" --noreload
