from __future__ import annotations

import uuid

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

pytestmark = pytest.mark.django_db

SAMPLE = {"slug": "disk-full", "int": 1, "uuid": uuid.UUID(int=1), "str": "x", "path": "x"}
# Views that answer without a session: the login page, and the API schema and
# docs pages (django-ninja's names for them).
PUBLIC = {"login", "openapi-json", "openapi-view"}


def _all_urls() -> list[str]:
    """Every URL of the URLconf, with sample values for its parameters."""
    urls = []

    def walk(patterns, namespace: str = "") -> None:
        for p in patterns:
            if isinstance(p, URLResolver):
                walk(p.url_patterns, f"{namespace}{p.namespace}:" if p.namespace else namespace)
            elif isinstance(p, URLPattern) and p.name and p.name not in PUBLIC:
                converters = p.pattern.converters
                kwargs = {
                    k: SAMPLE.get(type(c).__name__.replace("Converter", "").lower(), "x")
                    for k, c in converters.items()
                }
                try:
                    urls.append(reverse(f"{namespace}{p.name}", kwargs=kwargs))
                except Exception:  # admin patterns with regex groups: skip the odd ones
                    continue

    walk(get_resolver().url_patterns)
    return sorted(set(urls))


def test_it_knows_the_kb_urls():
    urls = _all_urls()
    for name, kwargs in [("home", {}), ("runbook_list", {}), ("search", {}),
                         ("runbook_detail", {"slug": "disk-full"}), ("runbook_edit", {"slug": "disk-full"}),
                         ("runbook_history", {"slug": "disk-full"}), ("runbook_raw", {"slug": "disk-full"})]:
        assert reverse(name, kwargs=kwargs) in urls


@pytest.mark.parametrize("method", ["get", "post"])
def test_it_requires_login_for_every_url(client, synced, method):
    for url in _all_urls():
        response = getattr(client, method)(url)
        if url.startswith("/api/"):
            assert response.status_code == 401, url  # token API: 401, never a redirect
            continue
        assert response.status_code == 302, f"{method.upper()} {url} -> {response.status_code}"
        location = response["Location"]
        assert location.startswith(("/accounts/login/", "/admin/login/")), (url, location)
        assert b"disk-full" not in response.content


def test_it_shows_the_login_page(client):
    response = client.get(reverse("login"))

    assert response.status_code == 200
    assert b"<title>Log in" in response.content


def test_it_logs_in_and_out(client, alice):
    response = client.post(reverse("login"), {"username": "alice", "password": "pw-alice"})
    assert response.status_code == 302 and response["Location"] == reverse("home")

    response = client.post(reverse("logout"))
    assert response.status_code == 302
    assert client.get(reverse("home")).status_code == 302


def _csrf_client(user) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def test_it_enforces_csrf_on_the_log_search_form(alice, synced):
    client = _csrf_client(alice)

    response = client.post(reverse("search"), {"log": "java.io.IOException: No space left on device"})
    assert response.status_code == 403

    client.get(reverse("search"))
    token = client.cookies["csrftoken"].value
    response = client.post(reverse("search"), {"log": "No space left on device", "csrfmiddlewaretoken": token})
    assert response.status_code == 200


def test_it_enforces_csrf_on_the_edit_form(carol, synced, runbook_texts):
    from kb.models import RunbookRevision

    client = _csrf_client(carol)
    url = reverse("runbook_edit", args=["disk-full"])
    text = runbook_texts["disk-full"].replace("severity: high", "severity: low")

    response = client.post(url, {"text": text})

    assert response.status_code == 403
    assert RunbookRevision.objects.filter(runbook__slug="disk-full").count() == 1


def test_it_enforces_csrf_on_logout(alice):
    client = _csrf_client(alice)

    assert client.post(reverse("logout")).status_code == 403
    assert client.get(reverse("home")).status_code == 200  # still logged in


def test_it_leaves_the_token_api_prefix_to_its_own_auth(rf):
    from django.contrib.auth.models import AnonymousUser

    from kb.middleware import LoginRequiredMiddleware

    middleware = LoginRequiredMiddleware(lambda request: None)

    def view(request):
        return None

    for path, redirected in [("/api/v1/analyses/1", False), ("/runbooks/", True), ("/apiary/", True)]:
        request = rf.get(path)
        request.user = AnonymousUser()
        response = middleware.process_view(request, view, (), {})
        assert (response is not None and response.status_code == 302) == redirected, path


def test_it_explains_a_refused_edit(client_alice, synced):
    response = client_alice.get(reverse("runbook_edit", args=["disk-full"]))

    assert response.status_code == 403
    assert b"<title>Not allowed" in response.content
    assert b"team admins" in response.content


def test_it_sends_a_content_security_policy(client_alice, synced):
    response = client_alice.get(reverse("runbook_detail", args=["disk-full"]))

    csp = response["Content-Security-Policy"]
    assert "script-src 'self';" in csp and "object-src 'none'" in csp
