import logging
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kb.settings")
application = get_wsgi_application()


def _warm_web_process() -> None:
    """Do at web start what the first pasted snippet would otherwise pay for (measured:
    0.6-1.2 s compiling the signature databases, 0.23 s importing the URLconf's views,
    kb.api and django-ninja among them, 0.1 s compiling the page's templates), so the
    first snippet is as fast as the next. Here (imported by gunicorn and runserver
    only), not in AppConfig.ready: `manage.py` commands never pay for it. Synchronous,
    before any request and any fork: gunicorn preloads this module in its master
    (preload_app), so its workers inherit all of it; the master's database connection
    is closed so no worker inherits that. A failure (no tables yet) only means the
    first snippet compiles."""
    from django.db import connections
    from django.template.loader import get_template
    from django.urls import get_resolver, reverse

    from kb.services.search import paste_matcher_warm

    get_resolver().url_patterns
    reverse("search")   # fills the resolver's reverse table, which every {% url %} uses
    for name in ("kb/search.html", "base.html"):
        try:
            get_template(name)   # kept compiled by the cached template loader
        except Exception:   # noqa: BLE001 - a renamed template only costs its compile later
            pass
    try:
        paste_matcher_warm()
    except Exception as exc:   # noqa: BLE001 - start serving anyway
        logging.getLogger(__name__).warning("kb: pasted-snippet matcher not compiled at start: %s", exc)
    finally:
        connections.close_all()


if os.environ.get("KB_WARM_WEB_PROCESS", "true").lower() not in ("0", "false", "no"):
    _warm_web_process()
