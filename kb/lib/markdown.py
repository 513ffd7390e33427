"""Runbook Markdown -> safe HTML.

Two layers (docs/reliability.md D): Python-Markdown with raw HTML switched off,
so `<b>` or `<script>` in a runbook shows as text; then nh3 with an allow-list
(no images, no style, http/https/mailto links only, rel="noopener noreferrer").
Only the output of markdown_render may be marked safe in a template.
"""

from __future__ import annotations

import markdown
import nh3

ALLOWED_TAGS = {
    "a", "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "b", "i",
    "code", "pre", "blockquote", "ul", "ol", "li", "dl", "dt", "dd",
    "table", "thead", "tbody", "tr", "th", "td", "del", "sup", "sub",
}
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "th": {"align"},
    "td": {"align"},
    "ol": {"start"},
    "code": {"class"},  # fenced code keeps its language-xyz class
}
URL_SCHEMES = {"http", "https", "mailto"}


def _converter() -> markdown.Markdown:
    md = markdown.Markdown(extensions=["fenced_code", "tables", "sane_lists"], output_format="html")
    # Raw HTML is not part of the runbook format: render it as text.
    md.preprocessors.deregister("html_block")
    md.inlinePatterns.deregister("html")
    return md


def markdown_render(*, text: str) -> str:
    html = _converter().convert(text or "")
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer",
        strip_comments=True,
    )
