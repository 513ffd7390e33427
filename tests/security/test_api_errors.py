"""Issue 17 (5.): every error under /api/ is JSON, the status unchanged, and the OpenAPI
document lists them. The locked-database 503 is shown on a real server in
test_production_server.py."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from kb.services.tokens import token_create


@pytest.fixture
def auth(alice):
    return {"HTTP_AUTHORIZATION": f"Bearer {token_create(user=alice)[1]}"}


def _assert_json_error(response, status):
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/json"), response.content[:300]
    assert isinstance(response.json()["detail"], str) and response.json()["detail"]


def test_unknown_path_and_wrong_method_answer_json(client, auth):
    _assert_json_error(client.get("/api/v1/nothing-here", **auth), 404)
    _assert_json_error(client.get("/api/nothing-here", **auth), 404)
    _assert_json_error(client.delete("/api/v1/analyses", **auth), 405)
    _assert_json_error(client.get("/api/v1/analyses/999999", **auth), 404)
    _assert_json_error(client.get("/api/v1/analyses/1"), 401)


def test_too_many_file_parts_and_an_oversized_field_answer_json_400(client, auth, settings, tmp_path):
    settings.BUNDLES_DIR = tmp_path
    files = [SimpleUploadedFile(f"f{i}.log", b"x\n") for i in range(settings.DATA_UPLOAD_MAX_NUMBER_FILES + 5)]
    _assert_json_error(client.post("/api/v1/analyses", {"file": files}, **auth), 400)
    _assert_json_error(client.post("/api/v1/analyses", {"note": "x" * (5 * 1024 * 1024)}, **auth), 400)


def test_a_server_error_answers_json_500(client, auth, monkeypatch):
    """A real exception inside the view (a broken incident lookup), not a stubbed response."""
    from kb import api

    def broken(*args, **kwargs):
        raise RuntimeError("broken on purpose")

    monkeypatch.setattr(api, "get_visible_or_404", broken)
    client.raise_request_exception = False
    _assert_json_error(client.get("/api/v1/analyses/1", **auth), 500)


def test_the_openapi_document_lists_the_json_errors(client):
    schema = client.get("/api/v1/openapi.json").json()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            for code in ("400", "401", "404", "405", "413", "429", "500", "503"):
                assert code in operation["responses"], (path, method, code)
                assert "application/json" in operation["responses"][code]["content"], (path, method, code)
