"""Upload limits beyond tests/kb/test_pipeline.py (U14): the size cap holds
whatever Content-Length claims, a refused body is not read to its end, and the
file count cap holds on the API too. Concurrent uploads:
test_upload_concurrency.py."""

from __future__ import annotations

import io
import os

import pytest
from django.test import Client
from django.test.client import ClientHandler, encode_multipart

pytestmark = pytest.mark.django_db(transaction=True)

BOUNDARY = "kbBoundary7f3a"


@pytest.fixture
def dirs(settings, tmp_path):
    settings.BUNDLES_DIR = tmp_path / "bundles"
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "upload-tmp")
    os.makedirs(settings.FILE_UPLOAD_TEMP_DIR)
    return tmp_path


@pytest.fixture
def token(alice):
    from kb.services.tokens import token_create

    return token_create(user=alice)[1]


@pytest.fixture(autouse=True)
def _no_broker(settings):
    """Uploads queue their analysis; the broker is a closed port (publishing fails at once)."""
    from tests.celery_harness import free_port, point_celery_at
    from kb.celery import app

    saved = app.conf.broker_url
    point_celery_at(f"redis://127.0.0.1:{free_port()}/0")
    yield
    point_celery_at(saved)


def _leftovers(root) -> list[str]:
    return [os.path.join(top, f) for top, _d, files in os.walk(root) for f in files]


class CountingInput(io.RawIOBase):
    """A request body that counts what the server read of it."""

    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def readable(self):
        return True

    def readinto(self, buf):
        n = min(len(buf), len(self.data) - self.pos)
        buf[:n] = self.data[self.pos:self.pos + n]
        self.pos += n
        return n


def _raw_post(path: str, body: bytes, content_length: int, token: str):
    stream = CountingInput(body)
    environ = {
        "REQUEST_METHOD": "POST", "PATH_INFO": path, "SCRIPT_NAME": "", "QUERY_STRING": "",
        "SERVER_NAME": "testserver", "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1",
        "wsgi.url_scheme": "http", "wsgi.input": io.BufferedReader(stream, 64 * 1024),
        "wsgi.errors": io.StringIO(), "wsgi.multithread": False, "wsgi.multiprocess": False,
        "wsgi.run_once": False, "wsgi.version": (1, 0),
        "CONTENT_TYPE": f"multipart/form-data; boundary={BOUNDARY}", "CONTENT_LENGTH": str(content_length),
        "HTTP_AUTHORIZATION": f"Bearer {token}",
    }
    response = ClientHandler()(environ)
    return response, stream.pos


def _body(size: int) -> bytes:
    f = io.BytesIO(b"x" * size)
    f.name = "big.log"
    return encode_multipart(BOUNDARY, {"file": f})


def test_a_body_far_over_the_limit_is_refused_before_it_is_read(dirs, settings, token):
    from kb.models import Bundle

    settings.UPLOAD_MAX_BYTES = 1024 * 1024
    body = _body(20 * 1024 * 1024)

    response, read = _raw_post("/api/v1/analyses", body, len(body), token)

    assert response.status_code == 413
    assert read < 2 * 1024 * 1024, f"read {read} of {len(body)} bytes"
    assert Bundle.objects.count() == 0 and _leftovers(dirs) == []


def test_a_content_length_that_understates_the_body_does_not_lift_the_limit(dirs, settings, token):
    """The server reads Content-Length bytes and no more: the rest of a larger body is never
    read, so the file is cut short (and refused as incomplete), never stored past the cap."""
    from kb.models import Bundle

    settings.UPLOAD_MAX_BYTES = 1024 * 1024
    body = _body(5 * 1024 * 1024)

    response, read = _raw_post("/api/v1/analyses", body, 1000, token)

    assert response.status_code == 400, response.content
    assert read <= 1000 + 64 * 1024
    assert Bundle.objects.count() == 0 and _leftovers(dirs) == []


def test_a_content_length_that_overstates_the_body_is_refused_without_waiting(dirs, settings, token):
    from kb.models import Bundle

    settings.UPLOAD_MAX_BYTES = 1024 * 1024
    body = _body(10)

    response, _read = _raw_post("/api/v1/analyses", body, 50 * 1024 * 1024, token)

    assert response.status_code == 413
    assert Bundle.objects.count() == 0 and _leftovers(dirs) == []


def test_the_api_caps_the_number_of_files_per_request(dirs, settings, token):
    from kb.models import Bundle

    settings.UPLOAD_MAX_FILES = 2
    files = []
    for i in range(3):
        f = io.BytesIO(b"x")
        f.name = f"{i}.log"
        files.append(f)

    response = Client().post("/api/v1/analyses", {"file": files}, HTTP_AUTHORIZATION=f"Bearer {token}")

    assert response.status_code == 413 and "At most 2 files" in response.json()["detail"]
    assert Bundle.objects.count() == 0 and _leftovers(settings.FILE_UPLOAD_TEMP_DIR) == []
