"""Formatting for the team-work partials, and the nav's unread count."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.safestring import mark_safe

from kb.lib.markdown import markdown_render
from kb.services.notifications import notification_unread_count

register = template.Library()


@register.filter
def md(text: str) -> str:
    """Markdown -> sanitised HTML (kb.lib.markdown); the only thing marked safe here."""
    return mark_safe(markdown_render(text=text or ""))


@register.simple_tag(takes_context=True)
def unread_notifications(context: template.Context) -> int:
    """How many unread notifications the page's user has (0 when logged out)."""
    request = context.get("request")
    user = getattr(request, "user", None) or context.get("user")
    return notification_unread_count(user=user) if user is not None else 0


@register.filter
def verdict_word(verdict: Any) -> str:
    return {"confirm": "confirmed", "reject": "rejected", "withdrawn": "withdrew their verdict on"}.get(
        str(verdict), str(verdict))
