"""Access control, driven by the URLconf so that a new URL cannot slip through:

S1 every page, partial and API endpoint refuses anonymous requests, whatever the
   method: a redirect to the login page, 401 on /api/ (public: the login page,
   the OpenAPI document, static files); no data in the refusal.
S2 every URL that takes an id answers another team's id with 404 and changes no
   row (the id table must name every such URL); lists and searches show nothing
   of another team; runbook edits by non-editors are 403.
S3 the token API: another team's token 404, revoked 401, token in the query
   string 401, other schemes 401, no header 401; tokens stored hashed.
S4 CSRF on every POST of the site (the API is token-only, so cookies cannot
   drive it), and every POST form in the templates carries the token.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from tests.celery_harness import no_broker  # noqa: F401  (fixture)
from tests.helpers import ROOT
from tests.cast import SECRET, build_world, db_state

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}
METHODS = ["get", "post", "put", "patch", "delete", "head", "options"]
# Answer without a session or token: the login pages (site and admin) and the API's OpenAPI document.
PUBLIC = {"login", "admin:login", "api-v1:openapi-json"}


@pytest.fixture
def world(synced, alice, bob, mallory, team, other_team, settings, tmp_path, no_broker):  # noqa: F811
    settings.BUNDLES_DIR = tmp_path / "bundles"
    return build_world(alice=alice, bob=bob, mallory=mallory, team=team, other_team=other_team)


def _patterns():
    """(qualified name, URLPattern) of every named URL, admin included."""
    out = []

    def walk(patterns, ns=""):
        for p in patterns:
            if isinstance(p, URLResolver):
                walk(p.url_patterns, f"{ns}{p.namespace}:" if p.namespace else ns)
            elif isinstance(p, URLPattern) and p.name:
                out.append((f"{ns}{p.name}", p))

    walk(get_resolver().url_patterns)
    return out


def _params(pattern: URLPattern) -> dict[str, str]:
    """Parameter name -> converter kind ("int", "slug", "str", "path", "regex")."""
    converters = getattr(pattern.pattern, "converters", {}) or {}
    out = {k: type(c).__name__.replace("Converter", "").lower() for k, c in converters.items()}
    for name in getattr(pattern.pattern, "regex").groupindex:
        out.setdefault(name, "regex")
    return out


def _sample_url(name: str, pattern: URLPattern, ids: dict[str, int]) -> str | None:
    kwargs = {}
    for param, kind in _params(pattern).items():
        if kind == "slug" or param == "slug":
            kwargs[param] = "disk-full"
        elif kind == "int" or param.endswith("id") or param == "pk":
            kwargs[param] = ids.get(param, 1)
        elif param == "app_label":
            kwargs[param] = "kb"
        else:
            kwargs[param] = "1"
    try:
        return reverse(name, kwargs=kwargs)
    except Exception:   # admin patterns such as <app_label> limited by a regex: tried with their own values
        return None


# ---------------------------------------------------------------- S1


def test_s1_only_the_login_page_opts_out_of_the_login_requirement():
    opted_out = {name for name, p in _patterns() if getattr(p.callback, "login_required", True) is False}
    assert opted_out <= PUBLIC, opted_out


@pytest.mark.parametrize("method", METHODS)
def test_s1_anonymous_requests_to_every_url_are_refused(world, method):
    ids = {"pk": world.incident.pk, "incident_id": world.incident.pk, "analysis_id": world.analysis.pk}
    client = Client()
    checked = 0
    for name, pattern in _patterns():
        url = _sample_url(name, pattern, ids)
        if url is None or name in PUBLIC:
            continue
        response = getattr(client, method)(url)
        checked += 1
        body = response.content
        assert SECRET.encode() not in body, (method, url)
        if url.startswith("/api/"):
            assert response.status_code == 401, (method, url, response.status_code)
        else:
            assert response.status_code == 302, (method, url, response.status_code)
            assert response["Location"].startswith(("/accounts/login/", "/admin/login/")), (url, response["Location"])
    assert checked > 60   # the site's own URLs and the admin's


def test_s1_the_public_urls_hold_no_data(world):
    client = Client()
    assert client.get(reverse("login")).status_code == 200
    schema = client.get("/api/v1/openapi.json")
    assert schema.status_code == 200 and schema.json()["paths"]
    assert SECRET.encode() not in schema.content
    static = client.get("/static/kb.css")
    assert static.status_code in (200, 404)   # static files are public by nature (no data in them)


# ---------------------------------------------------------------- S2


MISSING = 987654


def _id_urls(world, missing: bool = False) -> dict[str, tuple[str, dict]]:
    """Every URL that takes an object id, filled with an Ops object (or an id nobody
    has), and data for its POST."""
    inc, an, ann, note = world.incident.pk, world.analysis.pk, world.annotation.pk, world.note.pk
    notification, proposal, member = world.notification.pk, world.proposal.pk, world.alice.pk
    symptom_proposal = world.symptom_proposal.pk
    if missing:
        inc = an = ann = note = notification = proposal = member = symptom_proposal = MISSING
    ev = world.analysis.result["findings"][0]["evidence"][0]
    return {
        "incident_detail": (f"/incidents/{inc}/", {}),
        "incident_update": (f"/incidents/{inc}/update/", {"status": "resolved", "severity": "low", "owner": ""}),
        "incident_quick_status": (f"/incidents/{inc}/status/", {"status": "resolved"}),
        "incident_upload": (f"/incidents/{inc}/upload/", {}),   # the file is added below
        "incident_upload_uri": (f"/incidents/{inc}/upload/uri/", {"uri": "file:///etc/hostname"}),
        "incident_annotations": (f"/incidents/{inc}/annotations/", {"body": "mallory was here"}),
        "incident_activity": (f"/incidents/{inc}/activity/", {}),
        "incident_follow": (f"/incidents/{inc}/follow/", {"follow": "1"}),
        "incident_similar": (f"/incidents/{inc}/similar/", {}),
        "analysis_detail": (f"/analyses/{an}/", {}),
        "analysis_context": (f"/analyses/{an}/context/?path={ev['path']}&line={ev['line']}", {}),
        "analysis_progress": (f"/analyses/{an}/progress/", {}),
        "analysis_reanalyze": (f"/analyses/{an}/reanalyze/", {}),
        "analysis_healthy": (f"/analyses/{an}/healthy/", {"healthy": "1"}),
        "analysis_reanalyze_baseline": (f"/analyses/{an}/reanalyze-baseline/", {"baseline": str(an)}),
        "lead_draft": (f"/analyses/{an}/leads/1/draft/", {"symptom": "id: x", "text": "---"}),
        "analysis_annotations": (f"/analyses/{an}/annotations/?slug=disk-full", {"body": "mallory was here"}),
        "finding_feedback": (f"/analyses/{an}/findings/disk-full/feedback/", {"verdict": "reject", "reason": "x"}),
        "annotation_permalink": (f"/annotations/{ann}/", {}),
        "annotation_edit": (f"/annotations/{ann}/edit/", {"body": "rewritten by mallory"}),
        "annotation_delete": (f"/annotations/{ann}/delete/", {}),
        "runbook_note_edit": (f"/runbook-notes/{note}/edit/", {"body": "rewritten by mallory"}),
        "runbook_note_delete": (f"/runbook-notes/{note}/delete/", {}),
        "notification_go": (f"/notifications/{notification}/", {}),
        "proposal_detail": (f"/proposals/{proposal}/", {"decision": "accept"}),
        "symptom_proposal_detail": (f"/proposals/symptoms/{symptom_proposal}/", {"decision": "accept"}),
        "team_member_role": (f"/teams/{world.ops.slug}/members/{member}/role/", {"role": "admin"}),
        "team_member_remove": (f"/teams/{world.ops.slug}/members/{member}/remove/", {}),
        "api-v1:analysis_get": (f"/api/v1/analyses/{an}", {}),
    }


def test_s2_the_id_table_names_every_url_that_takes_an_id(world):
    takes_id = {name for name, p in _patterns()
                if not name.startswith("admin:")
                and any(kind == "int" or param.endswith("_id") or param == "pk" for param, kind in _params(p).items())}
    assert takes_id == set(_id_urls(world)), takes_id ^ set(_id_urls(world))


@pytest.mark.parametrize("htmx", [False, True], ids=["plain", "htmx"])
def test_s2_another_teams_ids_are_404_like_missing_ids_and_change_nothing(world, settings, htmx):
    """For every id URL and method, another team's id gets exactly what an id nobody has
    gets: 404 for the methods the view serves, 405 for the others (decided before any
    lookup). No existence leak, and no row changed."""
    from kb.services.tokens import token_create

    client = Client()
    client.force_login(world.mallory)
    token = token_create(user=world.mallory)[1]
    before = db_state()
    headers = HX if htmx else {}
    urls, missing = _id_urls(world), _id_urls(world, missing=True)

    def call(name, method, url, data):
        if name.startswith("api-"):
            return getattr(client, method)(url, HTTP_AUTHORIZATION=f"Bearer {token}")
        payload = dict(data)
        if name == "incident_upload" and method == "post":
            f = io.BytesIO(b"2024-03-01 ERROR No space left on device\n")
            f.name = "mallory.log"
            payload["file"] = f
        return getattr(client, method)(url, payload, **headers)

    for name, (url, data) in urls.items():
        statuses = {}
        for method in ("get", "post", "put", "delete"):
            ours = call(name, method, url, data)
            nobodys = call(name, method, missing[name][0], data)
            assert ours.status_code == nobodys.status_code, (method, url, ours.status_code, nobodys.status_code)
            assert ours.status_code in (404, 405), (method, url, ours.status_code)
            assert SECRET.encode() not in ours.content, (method, url)
            statuses[method] = ours.status_code
        assert 404 in statuses.values(), (url, statuses)
    after = db_state()
    after.pop("ApiToken"), before.pop("ApiToken")     # mallory's new token
    assert after == before
    bundles = Path(settings.BUNDLES_DIR)
    assert not bundles.exists() or not list(bundles.rglob("*"))


def test_s2_the_api_refuses_an_upload_into_another_teams_incident(world, settings):
    from kb.models import Bundle
    from kb.services.tokens import token_create

    token = token_create(user=world.mallory)[1]
    f = io.BytesIO(b"x\n")
    f.name = "x.log"
    response = Client().post("/api/v1/analyses", {"file": f, "incident": str(world.incident.pk)},
                             HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 404
    assert Bundle.objects.filter(uploaded_by=world.mallory).count() == 0


def test_s2_the_api_refuses_a_uri_into_another_teams_incident(world, settings, tmp_path):
    """mallory is an admin, of her own team: another team's incident is 404 before the URI is looked at."""
    from kb.models import Bundle
    from kb.services.tokens import token_create

    settings.KB_BUNDLE_URI_ROOTS = [str(tmp_path)]
    (tmp_path / "x.log").write_text("x\n")
    token = token_create(user=world.mallory)[1]
    response = Client().post("/api/v1/analyses/uri", {"uri": (tmp_path / "x.log").as_uri(),
                                                      "incident": str(world.incident.pk)},
                             HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 404
    assert Bundle.objects.filter(uploaded_by=world.mallory).count() == 0


def test_s2_lists_and_searches_show_nothing_of_another_team(world):
    client = Client()
    client.force_login(world.mallory)
    q = SECRET.rsplit("-", 1)[0]      # finds the rows, and the page's echo of it is not SECRET
    pages = [
        "/", "/incidents/", f"/incidents/?q={q}", f"/incidents/?team={world.ops.pk}",
        f"/incidents/?q={q}&runbook=disk-full", "/incidents/?runbook=disk-full&confirmed=on",
        f"/search/?q={q}", "/notifications/", "/runbooks/", "/runbooks/disk-full/", "/teams/",
        f"/incidents/{world.other_incident.pk}/",
    ]
    for url in pages:
        response = client.get(url)
        assert response.status_code in (200, 400), (url, response.status_code)
        assert SECRET not in response.content.decode(), url
    for url in ["/runbooks/disk-full/notes/", f"/incidents/{world.other_incident.pk}/similar/",
                f"/incidents/{world.other_incident.pk}/activity/"]:
        response = client.get(url, **HX)
        assert response.status_code == 200, url
        assert SECRET not in response.content.decode(), url
    # ...while alice sees her team's rows (the SECRET is there to be found).
    alice = Client()
    alice.force_login(world.alice)
    assert SECRET in alice.get("/incidents/").content.decode()
    assert SECRET in alice.get(f"/incidents/?q={q}").content.decode()
    assert SECRET in alice.get("/runbooks/disk-full/notes/", **HX).content.decode()


@pytest.mark.parametrize("who, slug", [("alice", "disk-full"), ("mallory", "jvm-long-gc-pause")],
                         ids=["member-on-unowned", "other-team-admin-on-ops-owned"])
def test_s2_runbook_edits_by_non_editors_are_refused(world, runbook_texts, who, slug):
    from kb.models import Runbook, RunbookRevision

    client = Client()
    client.force_login(getattr(world, who))
    before = (list(RunbookRevision.objects.values_list("pk", flat=True)),
              Runbook.objects.get(slug=slug).body)
    text = runbook_texts[slug].replace("## Summary", "## Rewritten")
    # Another team's own (unpublished) runbook is not even seen: 404, like a missing one.
    refused = 404 if who == "mallory" else 403
    assert client.get(f"/runbooks/{slug}/edit/").status_code == refused
    assert client.post(f"/runbooks/{slug}/edit/", {"text": text, "message": "x"}).status_code == refused
    assert (list(RunbookRevision.objects.values_list("pk", flat=True)), Runbook.objects.get(slug=slug).body) == before


# ---------------------------------------------------------------- S3


API_GETS = ["/api/v1/", "/api/v1/analyses/{an}"]


def test_s3_the_token_api_refuses_every_bad_credential(world):
    from kb.models import ApiToken
    from kb.services.tokens import token_create, token_revoke

    good_row, good = token_create(user=world.alice)
    revoked_row, revoked = token_create(user=world.alice)
    token_revoke(token=revoked_row)
    other = token_create(user=world.mallory)[1]
    an = world.analysis.pk
    client = Client()
    session = Client()
    session.force_login(world.alice)
    cases = {
        "no header": ({}, "", 401),
        "revoked": ({"HTTP_AUTHORIZATION": f"Bearer {revoked}"}, "", 401),
        "in the query string": ({}, f"?token={good}&access_token={good}&api_key={good}", 401),
        "Token scheme": ({"HTTP_AUTHORIZATION": f"Token {good}"}, "", 401),
        "Basic scheme": ({"HTTP_AUTHORIZATION": f"Basic {good}"}, "", 401),
        "bare token": ({"HTTP_AUTHORIZATION": good}, "", 401),
        "X-Api-Key": ({"HTTP_X_API_KEY": good}, "", 401),
        "mangled": ({"HTTP_AUTHORIZATION": f"Bearer {good[:-1]}x"}, "", 401),
        "huge": ({"HTTP_AUTHORIZATION": "Bearer " + "a" * 100_000}, "", 401),
        "other team": ({"HTTP_AUTHORIZATION": f"Bearer {other}"}, "", 404),
        "good": ({"HTTP_AUTHORIZATION": f"Bearer {good}"}, "", 200),
    }
    for label, (headers, query, expected) in cases.items():
        response = client.get(f"/api/v1/analyses/{an}{query}", **headers)
        assert response.status_code == expected, (label, response.status_code)
        if expected != 200:
            assert SECRET.encode() not in response.content
        if expected == 401:
            assert client.get(f"/api/v1/{query}", **headers).status_code == 401, label
            assert client.post(f"/api/v1/analyses{query}", **headers).status_code == 401, label
    # A logged-in browser session is no API credential (so no cookie-driven CSRF on the API).
    assert session.get(f"/api/v1/analyses/{an}").status_code == 401
    assert session.post("/api/v1/analyses", {"file": io.BytesIO(b"x")}).status_code == 401
    # Stored hashed: the secret appears nowhere in the database.
    from django.db import connection

    dump = "\n".join(connection.connection.iterdump()) if connection.vendor == "sqlite" else ""
    for secret in (good, revoked, other):
        assert secret not in dump
        assert not ApiToken.objects.filter(digest=secret).exists()
    import hashlib

    assert ApiToken.objects.get(pk=good_row.pk).digest == hashlib.sha256(good.encode()).hexdigest()


# ---------------------------------------------------------------- S4


def test_s4_every_post_without_a_csrf_token_is_refused(world, carol):
    ids = {"pk": world.incident.pk, "incident_id": world.incident.pk, "analysis_id": world.analysis.pk}
    refused = []
    for user in (world.alice, carol):          # carol is staff: the admin's forms too
        client = Client(enforce_csrf_checks=True)
        client.force_login(user)
        before = db_state()
        for name, pattern in _patterns():
            url = _sample_url(name, pattern, ids)
            if url is None or url.startswith("/api/"):
                continue
            if name.startswith("admin:") and user is not carol:
                continue
            response = client.post(url, {"body": "x", "title": "x", "text": "x"})
            assert response.status_code == 403 and b"CSRF" in response.content, (url, response.status_code)
            refused.append(url)
        after = db_state()
        assert after == before
    assert len(refused) > 60


FORM_RE = re.compile(r"<form\b[^>]*>", re.I | re.S)


def test_s4_every_post_form_in_the_templates_carries_the_csrf_token():
    missing = []
    templates = sorted((ROOT / "templates").rglob("*.html"))
    for path in templates:
        text = path.read_text()
        for m in FORM_RE.finditer(text):
            tag = m.group(0)
            if not re.search(r"""method=["']?post""", tag, re.I) and "hx-post" not in tag:
                continue
            end = text.find("</form>", m.end())
            if "{% csrf_token %}" not in text[m.end():end if end != -1 else None]:
                missing.append(f"{path.relative_to(ROOT)}: {tag[:80]}")
    assert templates and missing == [], missing


def test_s4_htmx_requests_send_the_csrf_token():
    """Forms carry it; bare hx-post buttons rely on the page sending X-CSRFToken with every
    htmx request (hx-headers on <body>, or static JS)."""
    base = (ROOT / "templates" / "base.html").read_text()
    static = "\n".join(p.read_text(errors="replace") for p in (ROOT / "static").rglob("*.js"))
    assert "X-CSRFToken" in base or "X-CSRFToken" in static
