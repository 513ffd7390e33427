"""U14: five 30 MiB uploads at once (threads, a SQLite file shared like the
web and worker processes share it): all accepted, each stored whole, and the
temporary upload files all released. The broker is a closed port: the
analyses stay queued (nothing here needs them to run)."""

from __future__ import annotations

import io
import os
import threading

import pytest
from django.test import Client

from tests.celery_harness import make_cast, no_broker, shared_db  # noqa: F401

pytestmark = pytest.mark.timeout(300)


def test_concurrent_large_uploads_all_land_and_release_their_temporary_files(shared_db, no_broker,  # noqa: F811
                                                                             settings, tmp_path, observe):
    from kb.models import Bundle

    cast = make_cast("uc")
    settings.BUNDLES_DIR = tmp_path / "bundles"
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "upload-tmp")
    settings.UPLOAD_MAX_BYTES = 40 * 1024 * 1024
    size, n = 30 * 1024 * 1024, 5
    statuses: list[int] = []

    def upload(i):
        f = io.BytesIO(bytes([65 + i]) * size)
        f.name = f"host{i}.log"
        try:
            statuses.append(Client().post("/api/v1/analyses", {"file": f},
                                          HTTP_AUTHORIZATION=f"Bearer {cast.alice_token}").status_code)
        finally:
            from django.db import connections

            connections.close_all()

    threads = [threading.Thread(target=upload, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)

    assert statuses == [202] * n, statuses
    bundles = list(Bundle.objects.filter(uploaded_by=cast.alice))
    assert sorted(b.size for b in bundles) == [size] * n
    assert sorted(open(b.stored_path, "rb").read(1) for b in bundles) == [bytes([65 + i]) for i in range(n)]
    leftovers = [f for _t, _d, files in os.walk(settings.FILE_UPLOAD_TEMP_DIR) for f in files]
    assert leftovers == []
    observe(f"{n} concurrent uploads of {size >> 20} MiB: all 202, each stored whole, no temporary file left")
