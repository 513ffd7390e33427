"""Storage that cannot fill (issue 17, weakness 2 "any member fills the disk",
and 7 "the context view reads the file from its start"): the unpacked tree is
removed after each analysis and the ±10 lines come from a compressed,
line-indexed copy read in bounded bytes; per-team quotas on stored bytes
(413) and analyses per hour (429) on the API, the upload page and
re-analysis; `manage.py prune`; the incident page says what is stored.

Log content: real lines of seed bundle 000 (tests/fixtures/seed-bundles, see
its SOURCE); the 3-million-line file cycles its short kernel lines.
"""

from __future__ import annotations

import io
import itertools
import os
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from kb.lib.line_store import line_store_read, line_store_write
from kb.models import Analysis, Bundle, Incident
from kb.services.analyses import analysis_run, analysis_upload
from kb.services.tokens import token_create
from tests.celery_harness import no_broker  # noqa: F401  (fixture)
from tests.helpers import SEED_BUNDLES

pytestmark = pytest.mark.django_db

KERN_LOG = SEED_BUNDLES / "000-flink-hdfs-openforwrite-after-soft-lockup" / "hadoop-080-037" / "kern.log"
THREE_MILLION = 3_000_000


class CountingOpener:
    """open() that counts the bytes read through the files it opened."""

    def __init__(self):
        self.bytes_read = 0

    def __call__(self, path, mode="rb"):
        fh, counter = open(path, mode), self

        class Counted:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                fh.close()

            def read(self, n=-1):
                data = fh.read(n)
                counter.bytes_read += len(data)
                return data

            def seek(self, *args):
                return fh.seek(*args)

        return Counted()


def test_context_lines_of_a_3_million_line_file_read_a_bounded_part(tmp_path):
    lines = [line for line in KERN_LOG.read_bytes().splitlines(keepends=True) if len(line) < 70]
    source = tmp_path / "kern.log"
    with open(source, "wb") as out:
        block = b"".join(itertools.islice(itertools.cycle(lines), 3000))   # 3000 is a multiple of len(lines)
        for _ in range(THREE_MILLION // 3000):
            out.write(block)
    count, stored = line_store_write(source, tmp_path / "store")
    assert count == THREE_MILLION

    for target in (1, 1_234_567, 2_999_995, THREE_MILLION):
        opener = CountingOpener()
        got = line_store_read(tmp_path / "store", target - 10, target + 10, max_line_bytes=16000, opener=opener)
        want = range(max(1, target - 10), min(THREE_MILLION, target + 10) + 1)
        assert [line.number for line in got] == list(want)
        assert [line.raw + b"\n" for line in got] == [lines[(n - 1) % len(lines)] for n in want]
        # A binary search over the index and one or two compressed blocks: bounded, whatever the length.
        assert opener.bytes_read < 64 * 1024, (target, opener.bytes_read)
        print(f"lines {target}±10 of {source.stat().st_size} bytes: read {opener.bytes_read} bytes "
              f"(store {stored} bytes)")
    assert line_store_read(tmp_path / "store", THREE_MILLION + 1, THREE_MILLION + 5, max_line_bytes=100) == []


@pytest.fixture
def bundles(settings, tmp_path, no_broker):
    settings.BUNDLES_DIR = tmp_path / "bundles"
    settings.KB_ENGINE = "local"
    return settings.BUNDLES_DIR


def _upload(client, token: str, name: str = "kern.log", data: bytes | None = None, **extra):
    f = io.BytesIO(KERN_LOG.read_bytes() if data is None else data)
    f.name = name
    return client.post("/api/v1/analyses", {"file": f, **extra}, HTTP_AUTHORIZATION=f"Bearer {token}")


def _files_under(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file()) \
        if directory.exists() else []


def test_an_upload_past_the_teams_storage_quota_is_a_json_413_and_stores_nothing(
        client, alice, mallory, bundles, settings):
    size = KERN_LOG.stat().st_size
    settings.KB_TEAM_STORAGE_BYTES = size + size // 2
    token = token_create(user=alice)[1]
    assert _upload(client, token).status_code == 202
    before = (Bundle.objects.count(), _files_under(bundles))

    response = _upload(client, token)

    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    assert "storage quota is full" in response.json()["detail"]
    assert (Bundle.objects.count(), _files_under(bundles)) == before
    # Another team's quota is its own.
    assert _upload(client, token_create(user=mallory)[1]).status_code == 202


def test_analyses_past_the_hourly_limit_get_429_with_retry_after(client, alice, mallory, bundles, settings):
    settings.KB_TEAM_ANALYSES_PER_HOUR = 2
    token = token_create(user=alice)[1]
    first = _upload(client, token)
    assert [first.status_code, _upload(client, token).status_code] == [202, 202]

    response = _upload(client, token)

    assert response.status_code == 429
    assert "2 analyses in the last hour" in response.json()["detail"]
    assert 0 < int(response["Retry-After"]) <= 3601
    assert Bundle.objects.filter(team=alice.memberships.get().team).count() == 2
    assert _upload(client, token_create(user=mallory)[1]).status_code == 202
    # Re-analysis counts too, and says so on the incident page.
    client.force_login(alice)
    page = client.post(reverse("analysis_reanalyze", args=[first.json()["id"]]), follow=True)
    assert "2 analyses in the last hour" in page.content.decode()
    assert Analysis.objects.filter(team=alice.memberships.get().team).count() == 2
    # An hour later the team may again.
    Analysis.objects.update(created=timezone.now() - timedelta(hours=1, seconds=1))
    assert _upload(client, token).status_code == 202


def test_the_upload_page_says_why_the_quota_refused(client, alice, bundles, settings):
    settings.KB_TEAM_STORAGE_BYTES = 10
    incident = Incident.objects.create(team=alice.memberships.get().team, title="disk", created_by=alice)
    client.force_login(alice)
    f = io.BytesIO(KERN_LOG.read_bytes())
    f.name = "kern.log"

    response = client.post(reverse("incident_upload", args=[incident.pk]), {"file": f})

    assert response.status_code == 413
    assert "storage quota is full" in response.content.decode()
    assert Bundle.objects.count() == 0


def _analysed(alice, name="kern.log") -> Analysis:
    incident = Incident.objects.create(team=alice.memberships.get().team, title="lockup", created_by=alice)
    analysis = analysis_upload(user=alice, incident=incident,
                               uploaded_file=SimpleUploadedFile(name, KERN_LOG.read_bytes()))
    assert analysis_run(analysis_id=analysis.id, owner="test")
    analysis.refresh_from_db()
    assert analysis.status == "done", analysis.error
    return analysis


def test_the_incident_page_shows_what_is_stored_and_the_context_view_works(client, alice, bundles, synced):
    analysis = _analysed(alice)
    directory = bundles / str(analysis.bundle.code)
    assert not (directory / "staged").exists() or not any((directory / "staged").iterdir())
    client.force_login(alice)

    page = client.get(reverse("incident_detail", args=[analysis.bundle.incident_id])).content.decode()

    assert 'id="storage"' in page and "Stored:" in page
    total = analysis.bundle.size + analysis.stored_bytes
    from kb.services.storage import team_storage_used
    assert team_storage_used(team_id=analysis.team_id) == total   # what the quota counts
    from django.template.defaultfilters import filesizeformat
    assert f"<strong>{filesizeformat(total)}</strong>" in page
    context = client.get(reverse("analysis_context", args=[analysis.pk]), {"path": "kern.log", "line": 12})
    assert context.status_code == 200
    assert KERN_LOG.read_text().splitlines()[11].split("kernel: ")[1] in context.content.decode()


def test_prune_removes_old_bundles_files_and_keeps_their_results(client, alice, bundles, synced):
    old, recent = _analysed(alice), _analysed(alice)
    Bundle.objects.filter(pk=old.bundle_id).update(created=timezone.now() - timedelta(days=40))
    out = io.StringIO()

    call_command("prune", "--older-than", "30", stdout=out)

    assert out.getvalue().startswith("1 bundle(s) older than 30 days pruned: freed ")
    assert not (bundles / str(old.bundle.code)).exists()
    assert (bundles / str(recent.bundle.code) / "upload").is_file()
    old.refresh_from_db()
    assert old.bundle.pruned is not None and old.result["files"]   # the result stays
    client.force_login(alice)
    context = client.get(reverse("analysis_context", args=[old.pk]), {"path": "kern.log", "line": 3})
    assert context.status_code == 200 and KERN_LOG.read_text().splitlines()[2] not in context.content.decode()
    page = client.post(reverse("analysis_reanalyze", args=[old.pk]), follow=True).content.decode()
    assert "its files were pruned" in page
    assert Analysis.objects.filter(bundle=old.bundle).count() == 1


def test_a_10000_character_file_name_gets_a_json_400_and_loses_nothing(client, alice, bundles):
    token = token_create(user=alice)[1]

    response = _upload(client, token, name="a" * 10_000 + ".log")

    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert "could not be read" in response.json()["detail"] and "nothing was stored" in response.json()["detail"]
    assert Bundle.objects.count() == 0 and _files_under(bundles) == []
    # The next upload goes through as usual.
    assert _upload(client, token).status_code == 202
