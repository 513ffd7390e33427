import logging
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kb.settings")
application = get_wsgi_application()


def _warm_paste_matcher() -> None:
    """Compile the pasted-snippet matcher at web start, so the first snippet is as fast
    as the next. Here (imported by gunicorn and runserver only), not in AppConfig.ready:
    `manage.py` commands never pay for it. Synchronous, before any request and any
    fork: gunicorn preloads this module in its master (preload_app), so its workers
    inherit the compiled databases; the master's database connection is closed so no
    worker inherits it. A failure (no tables yet) only means the first snippet compiles."""
    from django.db import connections

    from kb.services.search import paste_matcher_warm

    try:
        paste_matcher_warm()
    except Exception as exc:   # noqa: BLE001 - start serving anyway
        logging.getLogger(__name__).warning("kb: pasted-snippet matcher not compiled at start: %s", exc)
    finally:
        connections.close_all()


if os.environ.get("KB_WARM_PASTE_MATCHER", "true").lower() not in ("0", "false", "no"):
    _warm_paste_matcher()
