"""The token API without a worker: authentication, team isolation, the
document, the shapes of docs/contract.md §3. Publishing goes to a closed port
(no_broker), so every analysis here stays queued."""

from __future__ import annotations

import io
import time

import pytest

from tests.celery_harness import no_broker  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice_token(alice) -> str:
    from kb.services.tokens import token_create

    return token_create(user=alice, name="ci")[1]


@pytest.fixture
def mallory_token(mallory) -> str:
    from kb.services.tokens import token_create

    return token_create(user=mallory)[1]


@pytest.fixture
def analysis(alice, tmp_path, settings):
    from kb.models import Analysis, Bundle, Incident

    incident = Incident.objects.create(team=alice.memberships.get().team, title="Disk", created_by=alice)
    bundle = Bundle.objects.create(team=incident.team, incident=incident, original_name="x.log",
                                   stored_path=str(tmp_path / "x"))
    return Analysis.objects.create(team=incident.team, bundle=bundle)


def _bearer(token: str) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def _file(name: str = "app.log", data: bytes = b"java.io.IOException: No space left on device\n"):
    f = io.BytesIO(data)
    f.name = name
    return f


def test_it_returns_the_analysis_as_the_contract_says(client, alice_token, analysis):
    response = client.get(f"/api/v1/analyses/{analysis.id}", **_bearer(alice_token))

    assert response.status_code == 200
    assert response.json() == {"id": analysis.id, "status": "queued", "progress": 0, "error": None, "result": None}


def test_it_shows_the_result_only_when_done(client, alice_token, analysis):
    analysis.status, analysis.progress, analysis.result = "done", 100, {"findings": [], "stats": {}}
    analysis.save()

    body = client.get(f"/api/v1/analyses/{analysis.id}", **_bearer(alice_token)).json()

    assert body["status"] == "done" and body["result"] == {"findings": [], "stats": {}}


@pytest.mark.parametrize("headers, query", [
    ({}, ""),                                                    # no Authorization header
    ({"HTTP_AUTHORIZATION": "Bearer kb_not-a-real-token"}, ""),  # invalid token
    ({"HTTP_AUTHORIZATION": "Bearer "}, ""),
    ({"HTTP_AUTHORIZATION": "Token {token}"}, ""),               # wrong scheme
    ({}, "?token={token}"),                                      # token in the query string
    ({}, "?access_token={token}"),
])
def test_it_refuses_requests_without_a_valid_bearer_token(client, alice_token, analysis, headers, query):
    headers = {k: v.format(token=alice_token) for k, v in headers.items()}
    query = query.format(token=alice_token)

    get = client.get(f"/api/v1/analyses/{analysis.id}{query}", **headers)
    post = client.post(f"/api/v1/analyses{query}", {"file": _file()}, **headers)

    assert get.status_code == 401 and post.status_code == 401
    assert get.json() == {"detail": "Unauthorized"}
    assert "queued" not in get.content.decode()


def test_it_refuses_a_revoked_token(client, alice_token, analysis):
    from kb.models import ApiToken
    from kb.services.tokens import token_revoke

    assert client.get(f"/api/v1/analyses/{analysis.id}", **_bearer(alice_token)).status_code == 200
    token_revoke(token=ApiToken.objects.get())

    assert client.get(f"/api/v1/analyses/{analysis.id}", **_bearer(alice_token)).status_code == 401


def test_it_refuses_the_token_of_a_deactivated_user(client, alice, alice_token, analysis):
    alice.is_active = False
    alice.save()

    assert client.get(f"/api/v1/analyses/{analysis.id}", **_bearer(alice_token)).status_code == 401


def test_it_stores_only_a_hash_of_the_token(alice_token):
    from kb.models import ApiToken

    token = ApiToken.objects.get()
    assert alice_token not in (token.digest, token.prefix, token.name)
    assert len(token.digest) == 64 and alice_token.startswith(token.prefix)


def test_another_teams_analysis_is_404(client, mallory_token, analysis):
    response = client.get(f"/api/v1/analyses/{analysis.id}", **_bearer(mallory_token))

    assert response.status_code == 404
    assert client.get("/api/v1/analyses/999999", **_bearer(mallory_token)).status_code == 404


def test_another_teams_incident_is_404_on_upload(client, mallory_token, analysis):
    from kb.models import Bundle

    response = client.post("/api/v1/analyses", {"file": _file(), "incident": analysis.bundle.incident_id},
                           **_bearer(mallory_token))

    assert response.status_code == 404
    assert Bundle.objects.count() == 1


def test_an_upload_opens_an_incident_named_after_the_file(client, alice, alice_token, settings, tmp_path,
                                                          no_broker, django_capture_on_commit_callbacks):
    from kb.models import Analysis

    settings.BUNDLES_DIR = tmp_path
    started = time.monotonic()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/v1/analyses", {"file": _file("dn1/datanode.log")}, **_bearer(alice_token))
    seconds = time.monotonic() - started

    assert response.status_code == 202, response.content
    analysis = Analysis.objects.select_related("bundle__incident").get(id=response.json()["id"])
    assert response.json() == {"id": analysis.id, "url": f"/api/v1/analyses/{analysis.id}"}
    # The broker is unreachable: the request did not wait for it, the analysis waits for the reconciler.
    assert seconds < 1   # a refused connection fails at once: no retry loop
    assert analysis.status == "queued" and analysis.enqueued is None
    assert analysis.bundle.incident.title == "datanode.log"
    assert analysis.bundle.incident.team == alice.memberships.get().team
    assert analysis.bundle.original_name == "datanode.log"
    assert analysis.bundle.stored_path == str(tmp_path / str(analysis.bundle.code) / "upload")


def test_an_upload_into_a_given_incident(client, alice_token, analysis, settings, tmp_path):
    settings.BUNDLES_DIR = tmp_path
    incident = analysis.bundle.incident

    response = client.post("/api/v1/analyses", {"file": _file(), "incident": incident.id}, **_bearer(alice_token))

    assert response.status_code == 202
    assert incident.bundles.count() == 2


def test_an_upload_without_a_file_is_400(client, alice_token):
    response = client.post("/api/v1/analyses", {"bundle": _file()}, **_bearer(alice_token))

    assert response.status_code == 400
    assert "file" in response.json()["detail"]


def test_a_user_without_a_team_cannot_upload(client, carol, settings, tmp_path):
    from kb.services.tokens import token_create

    settings.BUNDLES_DIR = tmp_path
    response = client.post("/api/v1/analyses", {"file": _file()}, **_bearer(token_create(user=carol)[1]))

    assert response.status_code == 403


def test_the_openapi_document_lists_the_endpoints(client):
    response = client.get("/api/v1/openapi.json")

    assert response.status_code == 200
    doc = response.json()
    assert doc["openapi"].startswith("3.")
    assert set(doc["paths"]) == {"/api/v1/analyses", "/api/v1/analyses/uri", "/api/v1/analyses/{analysis_id}"}
    assert "post" in doc["paths"]["/api/v1/analyses"] and "post" in doc["paths"]["/api/v1/analyses/uri"]
    assert "get" in doc["paths"]["/api/v1/analyses/{analysis_id}"]
    body = doc["paths"]["/api/v1/analyses"]["post"]["requestBody"]["content"]["multipart/form-data"]
    assert set(body["schema"]["properties"]) == {"file", "incident", "team"} and body["schema"]["required"] == ["file"]
    assert doc["components"]["securitySchemes"]["BearerToken"]["scheme"] == "bearer"
    status = doc["components"]["schemas"]["AnalysisOut"]["properties"]["status"]
    assert set(status["enum"]) == {"queued", "running", "done", "failed"}


def test_the_openapi_document_describes_the_result_from_its_typed_classes(client):
    schemas = client.get("/api/v1/openapi.json").json()["components"]["schemas"]

    result = schemas["AnalysisOut"]["properties"]["result"]
    assert {"$ref": "#/components/schemas/Result"} in result["anyOf"]
    assert set(schemas["Result"]["properties"]) == {"findings", "symptoms", "unmatched", "timeline", "versions",
                                                    "config", "files", "skipped", "notes", "stats",
                                                    "ruled_out", "candidates", "leads", "baseline"}
    # Keys added after results were stored are optional (docs/contract.md: extend, never break).
    assert not {"ruled_out", "candidates", "leads", "baseline"} & set(schemas["Result"]["required"])
    assert schemas["Candidate"]["properties"]["where"]["anyOf"] == [{"type": "string"}, {"type": "null"}]
    assert schemas["Result"]["properties"]["leads"]["items"] == {"$ref": "#/components/schemas/Lead"}
    finding = schemas["Finding"]["properties"]
    assert finding["evidence"]["items"] == {"$ref": "#/components/schemas/Evidence"}
    assert finding["confidence"]["type"] == "number"
    assert "command" not in schemas["FixStep"]["required"]


def test_the_api_root_wants_a_token_too(client, alice_token):
    assert client.get("/api/v1/").status_code == 401
    assert client.get("/api/v1/", **_bearer(alice_token)).json() == {
        "analyses": "/api/v1/analyses", "openapi": "/api/v1/openapi.json"}


def test_createtoken_prints_a_token_that_works(alice, analysis, client):
    from django.core.management import call_command

    out = io.StringIO()
    call_command("createtoken", "alice", "--name", "laptop", stdout=out)
    token = out.getvalue().strip()

    assert token.startswith("kb_") and len(token) > 40
    assert client.get(f"/api/v1/analyses/{analysis.id}", **_bearer(token)).status_code == 200
    assert alice.api_tokens.get().name == "laptop"


def test_createtoken_refuses_an_unknown_user(db):
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="no user 'nobody'"):
        call_command("createtoken", "nobody")
