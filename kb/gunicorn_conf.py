"""gunicorn settings for `make serve` (scripts/serve.sh), from the environment.

Sync workers behind a buffering proxy (README, Deployment): each worker serves one request
at a time, and a worker silent for KB_WEB_TIMEOUT seconds (a client that sends a large
Content-Length and then stalls) is killed and replaced, so a slow client holds at most
KB_WEB_WORKERS workers, each for at most the timeout. nginx in front reads whole request
bodies first (proxy_request_buffering on), so real uploads reach a worker at disk speed.
"""

import os

bind = os.environ.get("KB_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("KB_WEB_WORKERS", "4"))
worker_class = "sync"
timeout = int(os.environ.get("KB_WEB_TIMEOUT", "120"))
graceful_timeout = int(os.environ.get("KB_WEB_GRACEFUL_TIMEOUT", "30"))
# Load Django once in the master: a bad configuration (no SECRET_KEY) stops the server at
# once with its one-line message instead of workers failing to boot in a loop.
preload_app = True
wsgi_app = "kb.wsgi:application"
# Restart workers now and then, so a slow leak cannot grow without end.
max_requests = 2000
max_requests_jitter = 200
limit_request_line = 8190
limit_request_fields = 100
# No gunicornc control socket: nothing uses it, and it would be one per user, shared.
control_socket_disable = True
accesslog = "-"
errorlog = "-"
