"""X1-X3 in Chromium: the pages holding the XSS lab's payloads (runbook body and
front matter, incident title, notes, field notes, feedback, notifications, log
lines and file names of a real analysis, the lines around evidence, a pasted log)
are opened and their htmx partials loaded, with a dialog listener: any alert(),
confirm() or prompt() fails the test. The Content-Security-Policy header is
switched off for this test, so that escaping and sanitising alone are tried
(the header is a second layer, checked in test_deploy.py)."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from tests.celery_harness import no_broker  # noqa: F401  (fixture)
from tests.security.lab import build_lab
from tests.security.payloads import ALL

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(300)]


def test_no_payload_runs_in_chromium(live_server, page, runbooks_dir, runbook_texts, alice, bob, team, settings,
                                     tmp_path, no_broker, observe):  # noqa: F811
    settings.CONTENT_SECURITY_POLICY = ""
    lab = build_lab(runbooks_dir=runbooks_dir, runbook_texts=runbook_texts, alice=alice, team=team,
                    settings=settings, tmp_path=tmp_path)
    dialogs: list[str] = []

    def on_dialog(dialog):
        dialogs.append(f"{dialog.type}: {dialog.message} on {page.url}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    base = live_server.url
    page.goto(base + "/accounts/login/")
    page.fill("input[name=username]", "bob")
    page.fill("input[name=password]", "pw-bob")
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)

    inc, an, ev = lab["incident"].pk, lab["analysis"].pk, lab["evidence"]
    urls = [
        "/runbooks/xss-lab/", "/runbooks/", "/runbooks/xss-lab/history/", "/search/?q=XSSLAB", "/",
        "/incidents/", f"/incidents/{inc}/", f"/analyses/{an}/",
        f"/analyses/{an}/context/?" + urlencode({"path": ev["path"], "line": ev["line"]}),
        "/notifications/", f"/annotations/{lab['annotation'].pk}/edit/",
    ]
    for url in urls:
        page.goto(base + url)
        page.wait_for_load_state("networkidle")
        page.mouse.move(200, 300)            # onmouseover payloads get their chance
        page.mouse.move(600, 500)
    # A pasted log with payloads, through the search form.
    page.goto(base + "/search/")
    page.fill("textarea[name=log]", "\n".join(f"ERROR x: {p} No space left on device" for p in ALL[:25]))
    page.click("form:has(textarea[name=log]) button[type=submit]")
    page.wait_for_load_state("networkidle")
    observe(f"Chromium opened {len(urls) + 1} pages holding {len(ALL)} payloads: dialogs {dialogs or 'none'}")
    assert dialogs == []
    assert not [e for e in errors if "alert" in e], errors
    # The trap works: a payload that does run is caught.
    page.set_content("<img src=x onerror=\"alert('canary')\">")
    page.wait_for_timeout(500)
    assert [d.split(" on ")[0] for d in dialogs] == ["alert: canary"]
