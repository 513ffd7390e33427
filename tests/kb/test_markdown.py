from __future__ import annotations

import re

import pytest
from django.urls import reverse

from kb.models import Runbook
from kb.lib.markdown import markdown_render

PAYLOADS = [
    "<script>alert(1)</script>",
    "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    "[x](&#106;avascript:alert(1))",
    "<javascript:alert(1)>",
    "<img src=x onerror=alert(1)>",
    "![x](x\"onerror=\"alert(1))",
    "<svg><script>alert(1)</script></svg>",
    "<svg onload=alert(1)>",
    "[d](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[v](vbscript:msgbox(1))",
    "<iframe src=https://evil.example></iframe>",
    "<details open ontoggle=alert(1)>",
    "<a href=\"javascript:alert(1)\">raw link</a>",
    "[ref][1]\n\n[1]: javascript:alert(1)",
    "<style>body{display:none}</style>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
]


FORBIDDEN_TAGS = {"script", "iframe", "svg", "img", "style", "math", "details", "form", "object", "embed"}


def _has_dangerous_markup(html: str) -> list[str]:
    """Problems in the real tags of html (escaped text like &lt;script&gt; is harmless)."""
    problems = []
    for m in re.finditer(r"<([a-zA-Z][\w-]*)([^>]*)>", html):
        tag, attrs = m.group(1).lower(), m.group(2)
        if tag in FORBIDDEN_TAGS:
            problems.append(f"tag <{tag}>")
        if re.search(r"(^|\s)on\w+\s*=", attrs, re.I):
            problems.append(f"event handler in <{tag}>")
        if re.search(r"(href|src)\s*=\s*[\"']?\s*(javascript|data|vbscript):", attrs, re.I):
            problems.append(f"unsafe URL in <{tag}>")
    return problems


def test_it_detects_what_it_should():
    assert _has_dangerous_markup('<a href="javascript:x">') == ["unsafe URL in <a>"]
    assert _has_dangerous_markup("<p onclick=x>") == ["event handler in <p>"]
    assert _has_dangerous_markup("&lt;script&gt;") == []


@pytest.mark.parametrize("payload", PAYLOADS)
def test_it_neutralises_xss_payloads(payload):
    html = markdown_render(text=f"Before\n\n{payload}\n\nAfter")

    assert _has_dangerous_markup(html) == [], html


def test_it_renders_raw_html_as_text():
    html = markdown_render(text="a <b>bold</b> claim")

    assert "<b>" not in html and "&lt;b&gt;bold&lt;/b&gt;" in html


def test_it_keeps_safe_links_with_noopener():
    html = markdown_render(
        text="[docs](https://hadoop.apache.org/) [mail](mailto:ops@example.com) <https://flink.apache.org>"
    )

    assert '<a href="https://hadoop.apache.org/" rel="noopener noreferrer">docs</a>' in html
    assert '<a href="mailto:ops@example.com" rel="noopener noreferrer">mail</a>' in html
    assert '<a href="https://flink.apache.org" rel="noopener noreferrer">' in html


def test_it_keeps_code_blocks_escaped():
    html = markdown_render(text="```bash\necho '<script>alert(1)</script>'\n```\n\nand `<img onerror=x>`")

    assert "&lt;script&gt;" in html and "<script>" not in html
    assert "<code>&lt;img onerror=x&gt;</code>" in html


def test_it_renders_tables_and_headings():
    html = markdown_render(text="## How to confirm\n\n| key | value |\n|---|---|\n| a | b |\n")

    assert "<h2>How to confirm</h2>" in html and "<table>" in html and "<td>a</td>" in html


def test_it_pins_the_tab_in_scheme_case():
    # docs/reliability.md D: "java\tscript:" must not come out as a javascript: link.
    html = markdown_render(text="[x](java\tscript:alert(1))")

    assert not re.search(r'href="\s*javascript:', html, re.I)


@pytest.mark.django_db
def test_it_sanitises_the_body_on_the_detail_page(client_alice, synced):
    body = "\n\n".join(PAYLOADS) + "\n\n[safe](https://example.com)\n"
    Runbook.objects.filter(slug="disk-full").update(body=body)

    response = client_alice.get(reverse("runbook_detail", args=["disk-full"]))

    details = response.content.decode().split('id="details"', 1)[1].split("</section>", 1)[0]
    assert _has_dangerous_markup(details) == [], details
    assert '<a href="https://example.com" rel="noopener noreferrer">safe</a>' in details
