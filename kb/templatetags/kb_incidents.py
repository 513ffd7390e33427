"""Formatting for the incident and analysis pages (no queries, no services)."""

from __future__ import annotations

from typing import Any

from django import template

from kb.lib.timeline import evidence_anchor, parse_ts

register = template.Library()


@register.filter
def ev_anchor(item: dict[str, Any]) -> str:
    """The anchor id of an evidence dict ({"path": .., "line": ..})."""
    try:
        return evidence_anchor(item.get("path"), item.get("line"))
    except AttributeError:
        return ""


@register.filter
def ts_short(value: Any) -> str:
    """"2019-04-23T17:39:19.323" -> "2019-04-23 17:39:19.323" (blank for none)."""
    ts = parse_ts(value)
    if ts is None:
        return str(value or "")
    text = ts.strftime("%Y-%m-%d %H:%M:%S")
    if ts.microsecond:
        text += f".{ts.microsecond // 1000:03d}"
    return text


@register.filter
def human_bytes(value: Any) -> str:
    try:
        n = float(value)
    except (TypeError, ValueError):
        return ""
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return ""

