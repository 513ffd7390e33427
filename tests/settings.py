"""Settings of the test suite (pytest.ini): kb.settings with a development SECRET_KEY set
explicitly, since kb refuses to start without one when DEBUG is off. The key goes into
os.environ so that every process a test starts (Celery worker, gunicorn, manage.py) has it."""

import os
import secrets

os.environ.setdefault("SECRET_KEY", "kb-tests-" + secrets.token_urlsafe(40))

from kb.settings import *  # noqa: E402,F401,F403
