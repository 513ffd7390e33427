"""The analysis report on the incident and analysis pages, fed the real result
of seed 000 (soft lockup on the JobManager host -> interrupted HDFS close on a
TaskManager) with its staged files on disk, as the pipeline leaves them."""

from __future__ import annotations

import copy
import json
import re
import shutil
import tarfile
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import timezone

from analyzers.engine import analyze_staged
from analyzers.model import BundleFile
from analyzers.staging import stage_logs
from kb.lib.timeline import evidence_anchor
from kb.models import Analysis, Bundle, Incident
from kb.services.staged import staged_manifest_write
from tests.helpers import SEED_BUNDLES, runbook_metas

pytestmark = pytest.mark.django_db

SEED = SEED_BUNDLES / "000-flink-hdfs-openforwrite-after-soft-lockup"
CODE = uuid.UUID("00000000-0000-4000-8000-000000000000")
TM_LOG = "hadoop-081-159/flink-taskmanager.log"
OPENFORWRITE = "hdfs-openforwrite-after-interrupted-close"
SOFT_LOCKUP = "kernel-soft-lockup-stalls-jvm"


@dataclass
class Staged:
    """A bundle staged and analyzed as the pipeline does, before any Analysis row exists."""
    upload: Path
    result: dict
    files: list[BundleFile]

    def attach(self, analysis: Analysis) -> Analysis:
        """The pipeline's manifest for this analysis, so its pages find the staged lines."""
        staged_manifest_write(bundle=analysis.bundle, analysis_id=analysis.id, files=self.files)
        return analysis


def _stage(bundles: Path, code: uuid.UUID, members: dict[str, Path] | None = None,
           upload: Path | None = None) -> Staged:
    """Store a tar.gz upload under BUNDLES_DIR/<code>/ (or take `upload` as stored)
    and stage and analyze it with the real runbooks under BUNDLES_DIR/<code>/staged."""
    directory = bundles / str(code)
    (directory / "staged").mkdir(parents=True, exist_ok=True)
    if upload is None:
        upload = directory / "upload"
        with tarfile.open(upload, "w:gz") as tar:
            for arcname, path in (members or {}).items():
                tar.add(path, arcname=arcname)
    workdir = directory / "staged" / "seed"
    workdir.mkdir()
    staged = stage_logs([str(upload)], str(workdir))
    return Staged(upload, analyze_staged(staged, runbook_metas()), staged.files)


@pytest.fixture(scope="session")
def seed_staged(tmp_path_factory) -> tuple[Path, Staged]:
    bundles = tmp_path_factory.mktemp("bundles")
    return bundles, _stage(bundles, CODE, {h: SEED / h for h in ("hadoop-080-037", "hadoop-081-159")})


def make_analysis(*, team, user, result: dict, code: uuid.UUID | None = None, stored_path: str = "",
                  title: str = "Hive table misses rows", status: str = "done", **extra) -> Analysis:
    incident = Incident.objects.create(team=team, title=title, severity="high", created_by=user)
    bundle = Bundle.objects.create(code=code or uuid.uuid4(), team=team, incident=incident, uploaded_by=user,
                                   original_name="seed-000.tar.gz", stored_path=stored_path)
    return Analysis.objects.create(team=team, bundle=bundle, status=status, progress=100 if status == "done" else 40,
                                   engine="local", result=copy.deepcopy(result) if status == "done" else None,
                                   finished=timezone.now() if status == "done" else None, **extra)


@pytest.fixture
def seed_analysis(settings, seed_staged, team, alice) -> Analysis:
    bundles, staged = seed_staged
    settings.BUNDLES_DIR = bundles
    return staged.attach(make_analysis(team=team, user=alice, result=staged.result, code=CODE,
                                       stored_path=str(staged.upload)))


def _section(html: str, start: str, end: str) -> str:
    return html[html.index(start):html.index(end, html.index(start))]


def _context_url(analysis: Analysis, path: str, line) -> str:
    return reverse("analysis_context", args=[analysis.pk]) + f"?path={path}&line={line}"


@pytest.fixture
def real_catalog(db):
    """The shipped runbooks in the database (their fill maps, differentials, titles)."""
    from tests.celery_harness import sync_real_runbooks

    sync_real_runbooks()


def test_it_lists_both_findings_in_order_with_their_evidence(client_alice, seed_analysis, real_catalog):
    response = client_alice.get(reverse("incident_detail", args=[seed_analysis.bundle.incident.pk]))

    assert response.status_code == 200
    html = response.content.decode()
    findings = _section(html, 'id="findings"', 'id="timeline"')
    first = findings.index(f'href="/runbooks/{OPENFORWRITE}/"')
    second = findings.index(f'href="/runbooks/{SOFT_LOCKUP}/"')
    assert first < second
    assert "90%" in findings[:second] and "70%" in findings[second:]
    # The interrupted close: TaskManager host, line 48, its timestamp, a permalink anchor.
    assert f'id="{evidence_anchor(TM_LOG, 48)}"' in findings
    # the path once, relative to its host (the full bundle path in its title)
    assert "flink-taskmanager.log:<strong>48</strong>" in findings[first:second]
    assert f'title="{TM_LOG} line 48: permalink"' in findings[first:second]
    assert "2019-04-23 17:38:05.591" in findings[first:second]
    assert "hadoop-081-159" in findings[first:second]
    # The soft lockup: JobManager host, kern.log line 1.
    assert "kern.log:<strong>1</strong>" in findings[second:]
    assert "2019-04-23 17:39:19" in findings[second:]
    assert "hadoop-080-037" in findings[second:]
    # Explanations, knobs, fixes by kind with copyable commands.
    assert "+0.60" in findings and "hdfs-close-interrupted-waiting-for-acks (1x, required)" in findings
    assert "dfs.client.write.recover.lease.on.close.exception" in findings
    # the fix names the part file the TaskManager's jstack shows still open, not the runbook's placeholder
    assert ("hdfs debug recoverLease -path <span class=\"filled\"" in findings
            and "/2019/04/23/tmp-part-0-6.in-progress</span> -retries 5" in findings)
    assert 'data-copy-target="cmd-a' in findings


def test_it_shows_the_chain_from_the_soft_lockup_to_the_interrupted_close(client_alice, seed_analysis):
    response = client_alice.get(reverse("analysis_detail", args=[seed_analysis.pk]))

    chain = _section(response.content.decode(), 'id="chain"', 'id="timeline"')
    steps = ["Kernel soft lockup", "ZooKeeper client heard nothing", "Flink lost the heartbeat of a TaskManager",
             "TaskManager lost the JobManager leader", "HDFS close() interrupted while waiting for pipeline acks"]
    positions = [chain.index(s) for s in steps]
    assert positions == sorted(positions)
    assert "Flink JobManager" in chain   # the host's role, not just its name
    # The TaskManager logged its side 74 s "before" the lockup: the page says why.
    assert "earlier clock" in chain


def test_it_draws_a_lane_per_host_and_colours_marks_per_finding(client_alice, seed_analysis):
    response = client_alice.get(reverse("analysis_detail", args=[seed_analysis.pk]))

    svg = _section(response.content.decode(), "<svg", "</svg>")
    assert 'data-host="hadoop-080-037"' in svg and 'data-host="hadoop-081-159"' in svg
    fills = {}
    for runbook, fill in re.findall(r'data-runbook="([^"]+)">\s*<circle [^>]*fill="(#[0-9a-f]{6})"', svg):
        fills.setdefault(runbook, set()).add(fill)
    assert set(fills) == {OPENFORWRITE, SOFT_LOCKUP}
    assert all(len(f) == 1 for f in fills.values()) and fills[OPENFORWRITE] != fills[SOFT_LOCKUP]
    assert f'href="#{evidence_anchor(TM_LOG, 48)}"' in svg
    # Curator SUSPENDED is a symptom no finding uses: grey, and it still links to its line.
    assert 'fill="#9aa3b2"' in svg
    html = response.content.decode()
    assert f'id="{evidence_anchor("hadoop-080-037/flink-jobmanager.log", 37)}"' in html
    # The jstack thread has no timestamp: listed under the picture instead.
    assert "Without a timestamp" in html and "hadoop-081-159/jstack-taskmanager.txt:1" in html


def test_it_lists_symptoms_with_their_possible_causes(client_alice, seed_analysis):
    response = client_alice.get(reverse("analysis_detail", args=[seed_analysis.pk]))

    symptoms = _section(response.content.decode(), 'id="symptoms"', 'id="unmatched"')
    assert "Curator connection state SUSPENDED" in symptoms
    assert "Possible causes:" in symptoms
    assert 'href="/runbooks/flink-zk-suspended-lost-leadership/"' in symptoms


def test_it_shows_unmatched_templates_versions_and_stats(client_alice, seed_analysis):
    html = client_alice.get(reverse("analysis_detail", args=[seed_analysis.pk])).content.decode()

    unmatched = _section(html, 'id="unmatched"', 'id="bundle-facts"')
    assert "Error during disposal of stream operator." in unmatched
    assert f"{TM_LOG}:47" in unmatched
    facts = html[html.index('id="bundle-facts"'):]
    assert "4.11.1-1.el7.elrepo.x86_64" in facts
    assert "4 files" in facts


def test_it_returns_the_lines_around_an_evidence_line(client_alice, seed_analysis):
    response = client_alice.get(_context_url(seed_analysis, TM_LOG, 48), HTTP_HX_REQUEST="true")

    assert response.status_code == 200
    html = response.content.decode()
    numbers = [int(n) for n in re.findall(r'<span class="n">(\d+)</span>', html)]
    assert numbers == list(range(38, 59))
    target = re.search(r'<span class="target"><span class="n">48</span>([^\n]*)', html)
    assert "Interrupted while waiting for data to be acknowledged by pipeline" in target.group(1)
    assert "<html" not in html   # a partial for htmx

    page = client_alice.get(_context_url(seed_analysis, TM_LOG, 48))
    assert page.status_code == 200 and b"<html" in page.content


def test_it_returns_a_whole_record_through_its_last_matched_line(client_alice, seed_analysis):
    """The record of line 2 (the lost leadership) ends at its Caused by, line 21: all of it, 10 lines around."""
    html = client_alice.get(_context_url(seed_analysis, TM_LOG, 2) + "&end=21", HTTP_HX_REQUEST="true").content.decode()
    assert [int(n) for n in re.findall(r'<span class="n">(\d+)</span>', html)] == list(range(1, 32))
    # an end before the line, too far away or not a number: the usual ±10 lines
    for end in ("1", "100000", "x"):
        html = client_alice.get(_context_url(seed_analysis, TM_LOG, 48) + f"&end={end}").content.decode()
        assert [int(n) for n in re.findall(r'<span class="n">(\d+)</span>', html)] == list(range(38, 59))


def test_it_returns_a_whole_record_from_the_context_store(client_alice, seed_staged, team, alice, settings):
    """The pipeline removes the staged tree after an analysis and keeps a compressed,
    line-indexed copy (kb.services.context_store): a record's lines through its end
    come from there (this analysis has no staging manifest to fall back on)."""
    from kb.services.context_store import context_store_write

    bundles, staged = seed_staged
    settings.BUNDLES_DIR = bundles
    # A bundle directory of its own (ids repeat across tests; the seed's directory has staging manifests).
    analysis = make_analysis(team=team, user=alice, result=staged.result, stored_path=str(staged.upload))
    context_store_write(bundle=analysis.bundle, analysis_id=analysis.id, files=staged.files)

    html = client_alice.get(_context_url(analysis, TM_LOG, 2) + "&end=21", HTTP_HX_REQUEST="true").content.decode()
    assert [int(n) for n in re.findall(r'<span class="n">(\d+)</span>', html)] == list(range(1, 32))
    html = client_alice.get(_context_url(analysis, TM_LOG, 48) + "&end=100000").content.decode()
    assert [int(n) for n in re.findall(r'<span class="n">(\d+)</span>', html)] == list(range(38, 59))


@pytest.mark.parametrize("path", [
    "hadoop-081-159/other.log",
    "../" + str(CODE) + "/upload",
    "hadoop-081-159/../hadoop-081-159/flink-taskmanager.log",
    "/etc/passwd",
    "",
])
def test_it_404s_the_context_of_a_file_not_in_the_analysis(client_alice, seed_analysis, path):
    assert client_alice.get(_context_url(seed_analysis, path, 1)).status_code == 404


def test_it_404s_the_context_of_a_bad_line(client_alice, seed_analysis):
    assert client_alice.get(_context_url(seed_analysis, TM_LOG, "x")).status_code == 404
    assert client_alice.get(_context_url(seed_analysis, TM_LOG, 0)).status_code == 404


def test_it_refuses_a_files_entry_that_points_outside_the_bundle(client_alice, seed_analysis, tmp_path):
    # Even a tampered result cannot make the endpoint read outside BUNDLES_DIR/<code>/.
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret\n")
    result = seed_analysis.result
    result["files"].append({"path": "../../secret.txt", "host": None, "component": "unknown", "kind": "log",
                            "bytes": secret.stat().st_size, "disk_path": str(secret)})
    seed_analysis.save()

    response = client_alice.get(_context_url(seed_analysis, "../../secret.txt", 1))
    assert b"top secret" not in response.content
    assert b"not available" in response.content


def test_it_says_so_when_the_staged_file_is_gone(client_alice, seed_analysis, settings, tmp_path):
    settings.BUNDLES_DIR = tmp_path   # nothing staged here

    response = client_alice.get(_context_url(seed_analysis, TM_LOG, 48), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert b"not available" in response.content


def test_it_reads_files_the_engine_read_in_place(client_alice, settings, tmp_path, team, alice):
    # A directory upload of plain UTF-8 files is scanned where it is, with no staged copy.
    settings.BUNDLES_DIR = tmp_path
    code = uuid.uuid4()
    stored = tmp_path / str(code) / "upload"
    stored.mkdir(parents=True)
    log = stored / "hadoop-081-159" / "flink-taskmanager.log"
    log.parent.mkdir()
    log.write_bytes((SEED / TM_LOG).read_bytes())
    staged = _stage(tmp_path, code, upload=stored)
    analysis = staged.attach(make_analysis(team=team, user=alice, result=staged.result, code=code,
                                           stored_path=str(stored)))

    response = client_alice.get(_context_url(analysis, TM_LOG, 48), HTTP_HX_REQUEST="true")
    assert b'<span class="n">48</span>' in response.content


def test_it_escapes_html_in_log_lines(client_alice, settings, tmp_path, team, alice):
    settings.BUNDLES_DIR = tmp_path
    log = tmp_path / "src" / "worker7" / "yarn-nodemanager.log"
    log.parent.mkdir(parents=True)
    log.write_text(
        "2024-03-01 10:00:00,000 INFO starting\n"
        "2024-03-01 10:00:01,000 ERROR <script>alert(1)</script> java.lang.OutOfMemoryError: Java heap space\n"
        "2024-03-01 10:00:02,000 INFO <img src=x onerror=alert(2)> done\n"
    )
    code = uuid.uuid4()
    staged = _stage(tmp_path, code, {"worker7": log.parent})
    result = staged.result
    assert any("<script>" in e["text"] for f in result["findings"] for e in f["evidence"])
    analysis = staged.attach(make_analysis(team=team, user=alice, result=result, code=code))

    for url in (reverse("analysis_detail", args=[analysis.pk]),
                reverse("incident_detail", args=[analysis.bundle.incident.pk]),
                _context_url(analysis, "worker7/yarn-nodemanager.log", 2)):
        html = client_alice.get(url).content.decode()
        assert "<script>alert(1)</script>" not in html, url
        assert "<img src=x" not in html, url
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html, url


def test_it_hides_another_teams_analysis(client, seed_analysis, mallory):
    client.force_login(mallory)

    assert client.get(reverse("analysis_detail", args=[seed_analysis.pk])).status_code == 404
    assert client.get(reverse("incident_detail", args=[seed_analysis.bundle.incident.pk])).status_code == 404
    assert client.get(_context_url(seed_analysis, TM_LOG, 48)).status_code == 404
    assert client.get(_context_url(seed_analysis, TM_LOG, 48), HTTP_HX_REQUEST="true").status_code == 404


def test_it_shows_the_progress_of_a_running_analysis(client_alice, team, alice):
    analysis = make_analysis(team=team, user=alice, result={}, status="running", stage="scanning")

    for url in (reverse("analysis_detail", args=[analysis.pk]),
                reverse("incident_detail", args=[analysis.bundle.incident.pk])):
        response = client_alice.get(url)
        assert response.status_code == 200
        assert b"40%" in response.content and b"scanning" in response.content


def test_it_shows_a_queued_analysis(client_alice, team, alice):
    analysis = make_analysis(team=team, user=alice, result={}, status="queued")

    response = client_alice.get(reverse("analysis_detail", args=[analysis.pk]))
    assert response.status_code == 200
    assert b"Queued" in response.content
    assert b'id="findings"' not in response.content


def test_it_shows_the_error_of_a_failed_analysis(client_alice, team, alice):
    analysis = make_analysis(team=team, user=alice, result={}, status="failed",
                             error="upload: not a gzip file (<b>bold</b>)")

    response = client_alice.get(reverse("analysis_detail", args=[analysis.pk]))
    assert b"The analysis failed" in response.content
    assert b"not a gzip file (&lt;b&gt;bold&lt;/b&gt;)" in response.content


def test_it_reads_the_file_the_pipeline_manifest_names(client_alice, seed_analysis, settings):
    directory = settings.BUNDLES_DIR / str(CODE)
    copy_dir = directory / "staged" / str(seed_analysis.pk)
    copy_dir.mkdir(exist_ok=True)   # seed_analysis wrote its manifest there
    (copy_dir / "tm.log").write_text("".join(f"manifest line {n}\n" for n in range(1, 60)))
    (copy_dir / "manifest.json").write_text(json.dumps({TM_LOG: f"staged/{seed_analysis.pk}/tm.log"}))
    try:
        response = client_alice.get(_context_url(seed_analysis, TM_LOG, 48), HTTP_HX_REQUEST="true")
    finally:
        shutil.rmtree(copy_dir)
    assert b'<span class="n">48</span>manifest line 48' in response.content


def test_it_highlights_a_knob_found_different_from_the_recommendation(client_alice, settings, tmp_path, team, alice):
    settings.BUNDLES_DIR = tmp_path
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "hdfs-site.xml").write_text(
        "<configuration><property><name>dfs.client.write.recover.lease.on.close.exception</name>"
        "<value>false</value></property></configuration>\n")
    (extra / "core.bin").write_bytes(b"\x7fELF\x00\x00\x01\x02" * 64)
    code = uuid.uuid4()
    result = _stage(tmp_path, code, {"hadoop-080-037": SEED / "hadoop-080-037",
                                     "hadoop-081-159": SEED / "hadoop-081-159",
                                     "hadoop-081-159/hdfs-site.xml": extra / "hdfs-site.xml",
                                     "hadoop-081-159/core.bin": extra / "core.bin"}).result
    analysis = make_analysis(team=team, user=alice, result=result, code=code)

    html = client_alice.get(reverse("analysis_detail", args=[analysis.pk])).content.decode()
    row = re.search(r'<tr class="knob-mismatch">.*?</tr>', html, re.S)
    assert row and "dfs.client.write.recover.lease.on.close.exception" in row.group(0)
    assert "<code>false</code>" in row.group(0) and "≠ recommended" in row.group(0)
    assert "in <code>hadoop-081-159/hdfs-site.xml</code>" in row.group(0)     # the file it was read from
    # The lease hard limit is not in the file: not highlighted.
    assert "not in the bundle's config files" in html
    facts = html[html.index('id="bundle-facts"'):]
    assert "hadoop-081-159/core.bin" in facts and "binary" in facts
