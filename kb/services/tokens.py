"""API tokens: "kb_" + 43 random URL-safe characters. Only their SHA-256 is
stored (ApiToken.digest); the token itself is shown once, by createtoken.
A plain hash is enough for 256 random bits (no password stretching needed)."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.utils import timezone

from kb.models import ApiToken

PREFIX = "kb_"
LAST_USED_EVERY = timedelta(minutes=1)   # write last_used at most this often


def token_digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def token_create(*, user, name: str = "") -> tuple[ApiToken, str]:
    """A new token for `user`: the row and the secret (shown once, never stored)."""
    secret = PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(user=user, name=name[:100], prefix=secret[:10], digest=token_digest(secret))
    return token, secret


def token_authenticate(*, secret: str):
    """The active user a valid, unrevoked token belongs to, or None."""
    if not secret or len(secret) > 200:
        return None
    token = (ApiToken.objects.select_related("user")
             .filter(digest=token_digest(secret), revoked=False, user__is_active=True).first())
    if token is None:
        return None
    now = timezone.now()
    if token.last_used is None or token.last_used < now - LAST_USED_EVERY:
        ApiToken.objects.filter(pk=token.pk).update(last_used=now)
    return token.user


def token_revoke(*, token: ApiToken) -> None:
    ApiToken.objects.filter(pk=token.pk).update(revoked=True)
