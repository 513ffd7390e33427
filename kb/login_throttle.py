"""Login throttling helpers for django-axes (settings: AXES_*, KB_LOGIN_*, KB_PROXY_COUNT)."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def client_ip(request: HttpRequest) -> str | None:
    """The client's address as the lockout counts it. Without a proxy, REMOTE_ADDR.
    With KB_PROXY_COUNT=N trusted proxies, the N-th X-Forwarded-For entry from the end:
    entries further left are written by the client and could be forged to dodge the lockout."""
    remote = request.META.get("REMOTE_ADDR")
    count = settings.KB_PROXY_COUNT
    if count <= 0:
        return remote
    chain = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
    return chain[-count] if len(chain) >= count else remote
