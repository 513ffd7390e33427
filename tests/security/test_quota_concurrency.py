"""Team quotas hold under simultaneous requests (issue 17's leftovers): N uploads of one team
start at once (threads released by a barrier, each its own database connection, the API's
real request path through the test client); at most the quota is admitted, the rest get
429 / 413, and the rows match the answers. On SQLite (default) a file shared like web and
worker share it; on PostgreSQL (DATABASE_URL=postgres://... pytest ...) pytest-django's
test database, committed (transactional_db), which every thread's connection sees.

Before kb.services.storage.quota_admit the checks ran before the transaction that stores the
upload, so every request read the same "room left" and all of them passed.
"""

from __future__ import annotations

import io
import threading

import pytest
from django.conf import settings
from django.test import Client

from tests.celery_harness import make_cast, no_broker, shared_db  # noqa: F401

ON_SQLITE = settings.DATABASES["default"]["ENGINE"].endswith("sqlite3")
# PostgreSQL: the test database with real commits (the marker; the fixture alone does not set it up).
pytestmark = [pytest.mark.timeout(300), *([] if ON_SQLITE else [pytest.mark.django_db(transaction=True)])]

N = 16


@pytest.fixture
def race_db(request):
    return request.getfixturevalue("shared_db") if ON_SQLITE else None


def _race(token: str, size: int) -> list[int]:
    """N uploads of `size` bytes sent at once; their status codes."""
    from django.db import connections

    barrier = threading.Barrier(N)
    statuses: list[int] = []

    def upload(i: int) -> None:
        f = io.BytesIO(bytes([65 + i]) * size)
        f.name = f"host{i}.log"
        try:
            barrier.wait(30)
            statuses.append(Client().post("/api/v1/analyses", {"file": f},
                                          HTTP_AUTHORIZATION=f"Bearer {token}").status_code)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=upload, args=(i,)) for i in range(N)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(statuses) == N, statuses
    return sorted(statuses)


def test_simultaneous_uploads_never_exceed_the_analyses_per_hour(race_db, no_broker, settings,  # noqa: F811
                                                                  tmp_path, observe):
    from kb.models import Analysis, Bundle

    cast = make_cast("qr")
    settings.BUNDLES_DIR = tmp_path / "bundles"
    settings.KB_TEAM_ANALYSES_PER_HOUR = 3
    settings.KB_TEAM_STORAGE_BYTES = 0   # off: only the hourly limit is tested

    statuses = _race(cast.alice_token, 256 * 1024)

    assert statuses == [202] * 3 + [429] * (N - 3), statuses
    team = cast.incident.team_id
    assert Analysis.objects.filter(team_id=team).count() == 3 and Bundle.objects.filter(team_id=team).count() == 3
    observe(f"{N} simultaneous uploads, KB_TEAM_ANALYSES_PER_HOUR=3: {statuses.count(202)} admitted, "
            f"{statuses.count(429)} refused with 429, 3 analyses stored")


def test_simultaneous_uploads_never_exceed_the_storage_quota(race_db, no_broker, settings,  # noqa: F811
                                                             tmp_path, observe):
    from django.db.models import Sum

    from kb.models import Bundle

    cast = make_cast("qs")
    size = 1024 * 1024
    settings.BUNDLES_DIR = tmp_path / "bundles"
    settings.KB_TEAM_ANALYSES_PER_HOUR = 0   # off: only the storage quota is tested
    settings.KB_TEAM_STORAGE_BYTES = 3 * size + size // 2

    statuses = _race(cast.alice_token, size)

    assert statuses == [202] * 3 + [413] * (N - 3), statuses
    stored = Bundle.objects.filter(team_id=cast.incident.team_id).aggregate(n=Sum("size"))["n"]
    assert stored == 3 * size <= settings.KB_TEAM_STORAGE_BYTES
    observe(f"{N} simultaneous 1 MiB uploads, KB_TEAM_STORAGE_BYTES=3.5 MiB: {statuses.count(202)} admitted, "
            f"{statuses.count(413)} refused with 413, {stored >> 20} MiB stored")
