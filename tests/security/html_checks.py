"""What rendered HTML may not contain (checks X1-X4): a real parser, so
escaped text (&lt;script&gt;) is fine and only real tags and attributes count."""

from __future__ import annotations

import re
from html.parser import HTMLParser

URL_ATTRS = {"href", "src", "action", "formaction", "xlink:href", "data", "poster", "background", "srcset"}
BAD_SCHEME = re.compile(r"^(javascript|vbscript|data|livescript|mocha):", re.I)
ALLOWED_LINK_SCHEMES = ("http:", "https:", "mailto:")
FORBIDDEN_TAGS = {"iframe", "object", "embed", "frame", "frameset", "applet", "base", "meta", "link", "style",
                  "math", "img", "video", "audio", "source", "form"}
# Tags the site's own templates legitimately use, anywhere on a page.
SITE_TAGS = {"link", "meta", "form", "style"}


def _clean_url(value: str) -> str:
    """What a browser parses of a URL attribute (WHATWG URL): leading and trailing C0
    controls and spaces are stripped, and tabs and newlines removed everywhere, so
    "java\tscript:" is javascript:, while "java    script:" is a relative path."""
    return re.sub(r"[\t\n\r]", "", (value or "").strip("".join(map(chr, range(0x21)))))


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.script_text: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))
        self._in_script = tag == "script"

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, attrs))

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if self._in_script and data.strip():
            self.script_text.append(data)


def parse(html: str) -> _Collector:
    c = _Collector()
    c.feed(html)
    c.close()
    return c


def dangerous_markup(html: str, *, fragment: bool = False) -> list[str]:
    """Everything in `html` a stored payload could have produced: inline or foreign scripts,
    event handler attributes, script-capable URL schemes, and (in a user-content
    `fragment`) tags user content never needs."""
    problems = []
    c = parse(html)
    for tag, attrs in c.tags:
        if tag == "script":
            src = dict(attrs).get("src") or ""
            if not src.startswith("/static/"):
                problems.append(f"<script> not from /static/: {attrs}")
        if fragment and tag in FORBIDDEN_TAGS:
            problems.append(f"tag <{tag}> in user content")
        elif not fragment and tag in FORBIDDEN_TAGS - SITE_TAGS:
            problems.append(f"tag <{tag}>")
        for name, value in attrs:
            if name.startswith("on"):
                problems.append(f"event handler {name}= on <{tag}>")
            if fragment and name.startswith(("hx-", "data-hx-")):
                problems.append(f"htmx attribute {name}= in user content")
            if name.startswith(("hx-on", "data-hx-on")) or (name in ("hx-vals", "hx-vars", "data-hx-vals")
                                                           and "js:" in (value or "")):
                problems.append(f"htmx script attribute {name}= on <{tag}>")
            if name in URL_ATTRS and BAD_SCHEME.match(_clean_url(value or "")):
                problems.append(f"{name}={value!r} on <{tag}>")
            if name == "style" and value and re.search(r"expression\(|url\(\s*['\"]?\s*javascript:", value, re.I):
                problems.append(f"style={value!r} on <{tag}>")
    if c.script_text:
        problems.append(f"inline script: {c.script_text[0][:80]!r}")
    return problems


def links(html: str) -> list[dict[str, str | None]]:
    return [dict(attrs) for tag, attrs in parse(html).tags if tag == "a"]


def external_link_problems(html: str) -> list[str]:
    """X4: every link that leaves the site is http/https/mailto with rel noopener noreferrer."""
    problems = []
    for a in links(html):
        href = _clean_url(a.get("href") or "")
        if not href or href.startswith(("/", "#", "?")):
            continue
        if not href.lower().startswith(ALLOWED_LINK_SCHEMES):
            if re.match(r"^[a-z][a-z0-9+.-]*:", href, re.I):
                problems.append(f"scheme not allowed: {href!r}")
            continue   # a relative link ("x", "java%20script:..."): stays on the site
        if href.lower().startswith("mailto:"):
            continue
        rel = set((a.get("rel") or "").split())
        if not {"noopener", "noreferrer"} <= rel:
            problems.append(f"external link without rel=noopener noreferrer: {a}")
    return problems
