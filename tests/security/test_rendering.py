"""Stored XSS through every place a user, a runbook author or a log file puts
text on a page (X1-X4), asserted on the rendered HTML with a real parser
(html_checks.py): no script, no event handler, no script-capable URL, links
out only to http/https/mailto with rel="noopener noreferrer".

X1 runbook Markdown and front matter (the OWASP filter-evasion list, htmx
   attribute vectors and Markdown vectors, payloads.py) on the runbook page,
   list, history, search, home, raw download;
X2 incident titles, annotations, field notes, feedback reasons, notifications;
X3 log lines, file names and error templates of a real analysis (run in
   process by the pipeline) on the analysis, incident, context and progress views;
X4 every link on every page above.
The same pages in Chromium with an alert() trap: browser/test_xss_in_chromium.py.
"""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client

from tests.celery_harness import no_broker  # noqa: F401  (fixture)
from tests.security.html_checks import _clean_url, dangerous_markup, external_link_problems, parse
from tests.security.lab import HTML_NAME, X2_TEXT, build_lab
from tests.security.payloads import ALL

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def lab(runbooks_dir, runbook_texts, alice, bob, team, settings, tmp_path, no_broker):  # noqa: F811
    return build_lab(runbooks_dir=runbooks_dir, runbook_texts=runbook_texts, alice=alice, team=team,
                     settings=settings, tmp_path=tmp_path)


def _pages(client: Client, lab) -> dict[str, str]:
    from urllib.parse import urlencode

    inc, an, ev = lab["incident"].pk, lab["analysis"].pk, lab["evidence"]
    context = f"/analyses/{an}/context/?" + urlencode({"path": ev["path"], "line": ev["line"]})
    slug = lab["analysis"].result["findings"][0]["runbook"]
    gets = {
        "home": ("/", {}), "runbook list": ("/runbooks/", {}), "runbook page": ("/runbooks/xss-lab/", {}),
        "runbook history": ("/runbooks/xss-lab/history/", {}), "runbook edit": ("/runbooks/xss-lab/edit/", {}),
        "word search": ("/search/?q=XSSLAB", {}), "incident list": ("/incidents/", {}),
        "incident page": (f"/incidents/{inc}/", {}), "analysis page": (f"/analyses/{an}/", {}),
        "context page": (context, {}), "context partial": (context, HX),
        "progress partial": (f"/analyses/{an}/progress/", {}),
        "incident notes partial": (f"/incidents/{inc}/annotations/", HX),
        "finding notes partial": (f"/analyses/{an}/annotations/?slug={slug}", HX),
        "line notes partial": (f"/analyses/{an}/annotations/?" + urlencode({"path": ev["path"], "line": ev["line"]}),
                               HX),
        "feedback partial": (f"/analyses/{an}/findings/{slug}/feedback/", HX),
        "activity partial": (f"/incidents/{inc}/activity/", HX),
        "field notes partial": ("/runbooks/xss-lab/notes/", HX),
        "notifications": ("/notifications/", {}),
        "annotation edit page": (f"/annotations/{lab['annotation'].pk}/edit/", {}),
    }
    out = {}
    for label, (url, headers) in gets.items():
        response = client.get(url, **headers)
        assert response.status_code == 200, (label, response.status_code)
        out[label] = response.content.decode()
    log = "\n".join(f"ERROR x: {p} No space left on device XSSLAB marker" for p in ALL[:20])
    response = client.post("/search/", {"log": log})
    assert response.status_code == 200
    out["log search"] = response.content.decode()
    return out


@pytest.fixture
def pages(lab, bob):
    client = Client()
    client.force_login(bob)      # bob: team admin (edit buttons and the edit page render too)
    return _pages(client, lab)


def test_the_checker_catches_what_it_should():
    bad = ['<img src=x onerror=alert(1)>', '<a href="&#x6A;avascript:alert(1)">x</a>', '<script>alert(1)</script>',
           '<a href=" java&#9;script:alert(1)">x</a>', '<div hx-on:click="alert(1)">x</div>',
           '<iframe src="https://x.example"></iframe>', '<a href="https://x.example">no rel</a>',
           '<a href="ssh://x.example" rel="noopener noreferrer">ssh</a>', '<form action="data:text/html,x"></form>']
    for sample in bad:
        assert dangerous_markup(sample, fragment=True) + external_link_problems(sample), sample
    assert dangerous_markup("&lt;script&gt;alert(1)&lt;/script&gt; <a href='java    script:x'>r</a>") == []


def test_x1_x4_no_page_carries_a_working_payload(pages):
    problems = {label: dangerous_markup(text) + external_link_problems(text) for label, text in pages.items()}
    assert {k: v for k, v in problems.items() if v} == {}


def test_x1_the_runbook_body_is_sanitised_and_keeps_its_safe_markdown(pages):
    page = pages["runbook page"]
    details = page.split('id="details"', 1)[1].split("</section>", 1)[0]
    assert dangerous_markup(details, fragment=True) == []
    assert '<a href="https://example.com/ok" rel="noopener noreferrer">safe</a>' in details
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in details          # the code span stays text
    hrefs = [dict(attrs).get("href") or "" for tag, attrs in parse(details).tags if tag == "a"]
    schemes = {m.group(1).lower() for h in hrefs if (m := re.match(r"^([a-z][a-z0-9+.-]*):", _clean_url(h), re.I))}
    assert hrefs and schemes <= {"http", "https", "mailto"}, hrefs    # "java    script:" is a relative path


def test_x1_front_matter_urls_keep_only_safe_schemes(pages):
    page = pages["runbook page"]
    assert '<a href="https://issues.apache.org/jira/browse/HDFS-4" rel="noopener noreferrer">' in page
    assert '<a href="mailto:ops@example.com" rel="noopener noreferrer">' in page
    for bad in ("alert('ticket')", "alert('ref')", "msgbox(1)"):
        for tag, attrs in parse(page).tags:
            assert not any(bad in (v or "") for k, v in attrs if k == "href"), (bad, tag, attrs)


def test_x1_the_raw_download_is_an_attachment_never_html(lab, bob):
    client = Client()
    client.force_login(bob)
    response = client.get("/runbooks/xss-lab/raw/")
    assert response["Content-Type"].startswith("text/markdown")
    assert response["Content-Disposition"].startswith("attachment;")
    assert response["X-Content-Type-Options"] == "nosniff"


def test_x2_user_text_is_shown_literally(pages):
    escaped = html.escape(X2_TEXT, quote=False)
    for label in ("incident page", "incident list", "incident notes partial", "field notes partial",
                  "feedback partial", "notifications"):
        text = pages[label]
        assert "<script>alert(1)</script>" not in text, label
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text.replace("&#x27;", "'"), label
    assert escaped in pages["incident page"]      # the title, as typed
    for label in ("incident notes partial", "field notes partial"):
        for body in re.findall(r'class="markdown[^"]*">(.*?)</div>', pages[label], re.S):
            assert dangerous_markup(body, fragment=True) == [], (label, body[:200])


def test_x3_log_lines_and_names_from_the_bundle_are_escaped(pages, lab):
    analysis = lab["analysis"]
    texts = [e["text"] for f in analysis.result["findings"] for e in f["evidence"]]
    assert any("<script>alert('ev1')</script>" in t for t in texts)      # the payload reached the result
    page = pages["analysis page"]
    assert "&lt;script&gt;alert(&#x27;ev1&#x27;)&lt;/script&gt;" in page
    assert html.escape(HTML_NAME) in page
    assert any(html.escape(u["template"])[:40] in page for u in analysis.result["unmatched"]) or \
        not analysis.result["unmatched"]
    for label in ("context page", "context partial", "incident page", "progress partial"):
        assert "<script>alert('ev1')</script>" not in pages[label], label
        assert "onerror=alert('name')>" not in pages[label], label
    assert "&lt;script&gt;alert(&#x27;ev1&#x27;)&lt;/script&gt;" in pages["context page"]


def test_x4_every_outbound_link_has_noopener_and_a_safe_scheme(pages):
    outbound = 0
    for label, text in pages.items():
        assert external_link_problems(text) == [], label
        outbound += sum(1 for tag, attrs in parse(text).tags if tag == "a"
                        and (dict(attrs).get("href") or "").startswith(("http:", "https:")))
    assert outbound >= 3
