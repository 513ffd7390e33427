"""Formatting only (no queries, no services)."""

from __future__ import annotations

from urllib.parse import urlsplit

from django import template

register = template.Library()

SAFE_SCHEMES = ("http", "https", "mailto")


@register.filter
def safe_url(value: str) -> str:
    """The URL if its scheme is http, https or mailto, else "" (front matter
    URLs go into href attributes, where autoescaping does not stop javascript:)."""
    value = (value or "").strip()
    try:
        scheme = urlsplit(value).scheme.lower()
    except ValueError:
        return ""
    return value if scheme in SAFE_SCHEMES else ""


@register.filter
def percent(value: float) -> str:
    try:
        return f"{round(float(value) * 100)}%"
    except (TypeError, ValueError):
        return ""
