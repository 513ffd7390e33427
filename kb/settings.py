"""Settings from environment variables only (healthchecks style).

Embedded defaults: SQLite, Redis on 127.0.0.1:6379, local Spark. PostgreSQL
(DATABASE_URL), an external Redis (REDIS_URL) and a Spark cluster
(SPARK_MASTER) are opt-in.
"""

from __future__ import annotations

import os
import secrets
import sys
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def envbool(name: str, default: str) -> bool:
    value = os.environ.get(name, default).strip().lower()
    if value not in ("true", "false", "1", "0", "yes", "no"):
        raise ImproperlyConfigured(f"{name} must be true or false, not {value!r}")
    return value in ("true", "1", "yes")


def envint(name: str, default: str) -> int:
    value = os.environ.get(name, default)
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, not {value!r}") from None


def envstr(name: str, default: str) -> str:
    return os.environ.get(name, default)


# manage.py commands that serve nobody and sign nothing (the CLI contract: `analyze` works
# with no Redis, no database and no web app): without a key they get a throwaway one.
OFFLINE_COMMANDS = ("analyze", "sync_runbooks", "export_runbooks")


def _offline_command() -> bool:
    return os.path.basename(sys.argv[0]) == "manage.py" and len(sys.argv) > 1 and sys.argv[1] in OFFLINE_COMMANDS


DEBUG = envbool("DEBUG", "false")
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY and not DEBUG and _offline_command():
    SECRET_KEY = secrets.token_urlsafe(50)
if not SECRET_KEY:
    if not DEBUG:
        # Refuse to start (web, worker, manage.py alike) rather than sign sessions with a
        # guessable key; one line, no traceback. `make run` and the tests set a key themselves.
        sys.exit("kb: SECRET_KEY is not set: set SECRET_KEY to a long random string "
                 "(python -c 'import secrets; print(secrets.token_urlsafe(50))'), or DEBUG=true for development")
    # DEBUG=true only: a development key, stable per checkout.
    SECRET_KEY = "dev-insecure-" + str(BASE_DIR)
ALLOWED_HOSTS = [h for h in envstr("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",") if h]
CSRF_TRUSTED_ORIGINS = [o for o in envstr("CSRF_TRUSTED_ORIGINS", "").split(",") if o]
SITE_URL = envstr("SITE_URL", "http://127.0.0.1:8000")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "axes",
    "kb",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "kb.middleware.ContentSecurityPolicyMiddleware",
    "kb.middleware.ServerHeaderMiddleware",
    # Outside everything that can answer an error, so /api/ errors all become JSON.
    "kb.middleware.ApiJsonErrorsMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Every view needs a login unless marked @login_not_required or under
    # LOGIN_EXEMPT_PREFIXES (the token API authenticates itself: 401, no redirect).
    "kb.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes requires: turns a locked-out login into its lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "kb.urls"
WSGI_APPLICATION = "kb.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "kb.current_team.team_context",   # the header's team switcher
            ]
        },
    }
]

VAR_DIR = Path(envstr("KB_VAR_DIR", str(BASE_DIR / "var")))
DATABASES = {
    "default": dj_database_url.parse(
        envstr("DATABASE_URL", f"sqlite:///{VAR_DIR / 'kb.sqlite3'}"), conn_max_age=60
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Web and worker write to the same file: wait for the lock instead of failing.
    # IMMEDIATE takes the write lock when a transaction starts, so a read-then-write
    # transaction waits (timeout) instead of failing with "database is locked";
    # WAL lets pages read while the worker writes.
    DATABASES["default"].setdefault("OPTIONS", {}).update({
        "timeout": envint("KB_SQLITE_TIMEOUT", "30"),
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL;",
    })
    DATABASES["default"]["CONN_MAX_AGE"] = 0

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
LOGIN_EXEMPT_PREFIXES = ["/api/"]

# Login throttling (django-axes): every password check (login page, admin login, anything
# calling authenticate() with a request) goes through AxesStandaloneBackend first.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = envint("KB_LOGIN_FAILURE_LIMIT", "5")
AXES_COOLOFF_TIME = timedelta(seconds=envint("KB_LOGIN_COOLOFF_SECONDS", "900"))
# Locked by username OR by client IP, each after AXES_FAILURE_LIMIT failures: one user
# guessed from many IPs, and many users guessed from one IP.
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# Behind a reverse proxy REMOTE_ADDR is the proxy: KB_PROXY_COUNT trusted proxies append to
# X-Forwarded-For, so the client is the entry that many places from its end.
KB_PROXY_COUNT = envint("KB_PROXY_COUNT", "0")
AXES_CLIENT_IP_CALLABLE = "kb.login_throttle.client_ip"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Serve static/ straight from the source folders, so `make run` needs no collectstatic.
WHITENOISE_USE_FINDERS = True
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# Security headers; the cookie/HSTS ones are switched on by KB_SECURE (HTTPS deployments).
SECURE = envbool("KB_SECURE", "false")
SESSION_COOKIE_SECURE = SECURE
CSRF_COOKIE_SECURE = SECURE
# The CSRF cookie ends with the browser session (Django's default keeps it a year).
CSRF_COOKIE_AGE = None
SECURE_SSL_REDIRECT = SECURE
SECURE_HSTS_SECONDS = 31536000 if SECURE else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE
SECURE_HSTS_PRELOAD = SECURE
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
# Empty KB_CSP switches the header off.
CONTENT_SECURITY_POLICY = envstr(
    "KB_CSP",
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'self'; frame-ancestors 'none'; form-action 'self'",
)

# Runbooks, bundles, limits.
RUNBOOKS_DIR = Path(envstr("RUNBOOKS_DIR", str(BASE_DIR / "runbooks")))
BUNDLES_DIR = Path(envstr("BUNDLES_DIR", str(VAR_DIR / "bundles")))
UPLOAD_MAX_BYTES = envint("KB_UPLOAD_MAX_BYTES", str(2 * 1024**3))
UPLOAD_MAX_FILES = envint("KB_UPLOAD_MAX_FILES", "20")
BUNDLE_MAX_UNPACKED_BYTES = envint("KB_BUNDLE_MAX_UNPACKED_BYTES", str(20 * 1024**3))
BUNDLE_MAX_FILES = envint("KB_BUNDLE_MAX_FILES", "20000")
BUNDLE_MAX_RATIO = envint("KB_BUNDLE_MAX_RATIO", "200")
# Per team (kb.services.storage; 0: no limit): bytes kept on disk (uploads and the
# analyses' compressed context copies; over it an upload gets 413), analyses started
# in the last hour (429), and days a bundle's files are kept (`manage.py prune`).
KB_TEAM_STORAGE_BYTES = envint("KB_TEAM_STORAGE_BYTES", str(50 * 1024**3))
KB_TEAM_ANALYSES_PER_HOUR = envint("KB_TEAM_ANALYSES_PER_HOUR", "60")
KB_RETENTION_DAYS = envint("KB_RETENTION_DAYS", "90")
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
DATA_UPLOAD_MAX_NUMBER_FILES = UPLOAD_MAX_FILES
# Every upload streams to a temporary file (in KB_UPLOAD_TEMP_DIR, else the
# system's temp dir) and is cut short past UPLOAD_MAX_BYTES / UPLOAD_MAX_FILES (413).
FILE_UPLOAD_HANDLERS = ["kb.uploads.BundleUploadHandler"]
FILE_UPLOAD_TEMP_DIR = envstr("KB_UPLOAD_TEMP_DIR", "") or None
# Where a team admin may name a bundle by URI instead of uploading it (kb.services.bundle_uris),
# comma-separated: directories (/data/logs or file:///data/logs) and hdfs:// or s3a:// prefixes
# (hdfs://nn:8020/logs/). Empty: the URI field is off. kb's own storage is refused whatever is listed.
KB_BUNDLE_URI_ROOTS = [r.strip() for r in envstr("KB_BUNDLE_URI_ROOTS", "").split(",") if r.strip()]

# Celery: the Analysis row is the source of truth; the broker only carries ids.
REDIS_URL = envstr("REDIS_URL", "redis://127.0.0.1:6379/0")
CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = envint("KB_TASK_SOFT_TIME_LIMIT", "1500")
CELERY_TASK_TIME_LIMIT = envint("KB_TASK_TIME_LIMIT", "1800")
KB_TASK_MAX_RETRIES = envint("KB_TASK_MAX_RETRIES", "3")   # retries of transient errors (DB locked, Redis down)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    # Longer than the hard time limit, so a running task is never redelivered early.
    "visibility_timeout": CELERY_TASK_TIME_LIMIT + 300,
    # Sweep for unacked messages of dead workers every 10 s, not every 100 s.
    "unacked_restore_throttle": 1,
}
# On a broker connection loss a running analysis goes on: its lease in the
# database (not the broker) keeps a redelivered copy from running it twice.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
# .delay() must not block a web request for ~20 s when Redis is down: the
# reconciler re-enqueues queued analyses, so failing fast loses nothing.
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A worker keeps reconnecting through a long Redis outage (the default gives up after 100 tries).
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_TASK_PUBLISH_RETRY = False
CELERY_WORKER_SEND_TASK_EVENTS = False

# Analysis leases and the reconciler (kb.services.analyses).
KB_LEASE_SECONDS = envint("KB_LEASE_SECONDS", "60")                # renewed every third of it while running
KB_STARTUP_LEASE_SECONDS = envint("KB_STARTUP_LEASE_SECONDS", "600")  # while a SparkSession starts
KB_MAX_ATTEMPTS = envint("KB_MAX_ATTEMPTS", "3")                   # claims before "worker crashed N times"
KB_RECONCILE_INTERVAL = envint("KB_RECONCILE_INTERVAL", "30")      # seconds; 0: no reconciler thread in workers
KB_REQUEUE_AFTER = envint("KB_REQUEUE_AFTER", "10")                # queued and never sent (broker was down)
KB_REQUEUE_STALE_AFTER = envint("KB_REQUEUE_STALE_AFTER", "300")   # queued although sent (message lost)
KB_WAITING_AFTER = envint("KB_WAITING_AFTER", "10")                # UI: "waiting for a worker"

SPARK_MASTER = envstr("SPARK_MASTER", "local[*]")
KB_ENGINE = envstr("KB_ENGINE", "spark")  # engine the worker uses: spark | local
# A Spark worker's pool child starts its SparkSession (and warms it with the catalog's
# signatures) in a background thread right after the fork, not on its first task.
KB_SPARK_WARM_START = envbool("KB_SPARK_WARM_START", "true")

# Notifications are mailed only when EMAIL_HOST is set (kb.services.notifications); then over SMTP
# unless EMAIL_BACKEND says otherwise.
EMAIL_HOST = envstr("EMAIL_HOST", "")
EMAIL_BACKEND = envstr("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend" if EMAIL_HOST
                       else "django.core.mail.backends.console.EmailBackend")
EMAIL_PORT = envint("EMAIL_PORT", "25")
EMAIL_HOST_USER = envstr("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = envstr("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = envbool("EMAIL_USE_TLS", "false")
EMAIL_TIMEOUT = envint("EMAIL_TIMEOUT", "10")
DEFAULT_FROM_EMAIL = envstr("DEFAULT_FROM_EMAIL", "kb@localhost")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "INFO")},
    # django-axes' start-up banner on every process would be a second stderr line for
    # `manage.py analyze` (one line on error, docs/contract.md); its lockout warnings stay.
    "loggers": {"axes.apps": {"level": "WARNING"}},
}

# Positive fixtures of runbooks drafted from a lead (kb/services/drafts.py): <dir>/<slug>/positive/...
DRAFT_FIXTURES_DIR = Path(envstr("KB_DRAFT_FIXTURES_DIR", str(VAR_DIR / "draft-fixtures")))
