"""End to end in Chromium with the real pipeline: log in, open an incident,
upload seed bundle 001 as a .tar.gz, watch the progress bar reach done, see
hdfs-close-not-enough-replicas, annotate an evidence line, confirm the
finding, and see the confirmation and a field note on the runbook page.

The web side is pytest-django's LiveServer (the class behind `live_server`)
started on the harness's shared SQLite file, so the Celery worker subprocess
(real Redis, KB_ENGINE=local) and the page see the same rows. pytest-django's
own `live_server` fixture cannot be used here: it brings `transactional_db`,
which would point the connection back at the in-memory test database.
"""

from __future__ import annotations

import re
import tarfile

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import login
from tests.celery_harness import pipeline, shared_db, sync_real_runbooks  # noqa: F401  (fixtures)
from tests.helpers import SEED_BUNDLES

pytestmark = [pytest.mark.browser, pytest.mark.celery, pytest.mark.timeout(300)]

SEED = SEED_BUNDLES / "001-flink-checkpoint-hdfs-not-enough-replicas"
EXPECTED = "hdfs-close-not-enough-replicas"
PASSWORD = "pw-e2e-alice"


# The worker rig (tests/celery_harness.py: pipeline).
RIG = {"engine": "local", "concurrency": 1}


@pytest.fixture(scope="module")
def shared_live_server(shared_db):  # noqa: F811
    from pytest_django.live_server_helper import LiveServer

    server = LiveServer("localhost")   # a file database: the server thread opens its own connections
    server._live_server_modified_settings.enable()
    yield server
    server._live_server_modified_settings.disable()
    server.stop()


@pytest.fixture(scope="module")
def e2e_user(shared_db):  # noqa: F811
    from django.contrib.auth import get_user_model

    from kb.models import Membership, Team

    sync_real_runbooks()
    team = Team.objects.create(name="E2E Ops", slug="e2e-ops")
    user = get_user_model().objects.create_user("e2e-alice", password=PASSWORD, email="")
    Membership.objects.create(user=user, team=team, role=Membership.Role.MEMBER)
    return user


@pytest.fixture(scope="module")
def seed_tgz(tmp_path_factory):
    path = tmp_path_factory.mktemp("seed") / "001-flink-checkpoint.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        tar.add(SEED, arcname=SEED.name, filter=lambda ti: None if ti.name.endswith("expected.json") else ti)
    return path


def test_upload_analyse_annotate_confirm(pipeline, shared_live_server, e2e_user, seed_tgz, page, screenshot,
                                          dialogs):
    base = shared_live_server.url
    login(page, base, "e2e-alice", PASSWORD)

    # A new incident.
    page.goto(base + "/incidents/new/")
    page.fill("input[name=title]", "Flink checkpoints fail: HDFS close")
    page.select_option("select[name=severity]", "high")
    page.click("button:has-text('Open incident')")
    page.wait_for_url(re.compile(r"/incidents/\d+/$"))
    incident_url = page.url

    # Upload the seed bundle and watch the analysis.
    page.click("a:has-text('Upload a bundle')")
    page.set_input_files("input[type=file]", str(seed_tgz))
    page.click("button:has-text('Upload and analyze')")
    page.wait_for_url(re.compile(r"/upload/\?analysis=\d+"))
    progress = page.locator("section.analysis-progress")
    expect(progress).to_have_attribute("data-status", "done", timeout=120_000)
    expect(progress.locator("progress")).to_have_attribute("value", "100")
    screenshot("upload-progress-done")

    # The analysis page shows the expected finding.
    progress.locator("a:has-text('Open the analysis')").click()
    page.wait_for_url(re.compile(r"/analyses/\d+/$"))
    analysis_id = int(re.search(r"/analyses/(\d+)/", page.url).group(1))
    finding = page.locator("article.finding", has=page.locator(f"code:text-is('{EXPECTED}')")).first
    expect(finding).to_be_visible()

    # Annotate its first evidence line.
    row = finding.locator(".evidence-line").first
    row.locator("a.note-open").click()
    panel = finding.locator("section.annotations[id*='-ev-']").first
    expect(panel).to_be_visible()
    panel.locator("textarea[name=body]").fill("The **first** failed close; see the NameNode's GC log.")
    panel.locator("button:has-text('Add note')").click()
    expect(finding.locator(".annotation-body strong:text-is('first')").first).to_be_visible()

    # Confirm the finding with a reason.
    feedback = page.locator(f"#feedback-a{analysis_id}-{EXPECTED}")
    feedback.locator("input[name=reason]").fill("NameNode GC pause matched the close failures")
    feedback.locator("button[value=confirm]").click()
    expect(feedback.locator(".feedback-counts")).to_contain_text("1 confirmed")
    expect(feedback.locator(".feedback-counts")).to_contain_text("you confirmed it")
    # The line note is listed with its finding, linking to the line and its context.
    notes = page.locator(f"#notes-a{analysis_id}-{EXPECTED}")
    page.reload()
    expect(notes.locator("a.permalink")).to_have_attribute("href", re.compile(rf"/analyses/{analysis_id}/#ev-"))
    expect(notes.locator("a:has-text('context')")).to_have_attribute("href", re.compile(r"/context/\?path="))
    screenshot("analysis-page")
    screenshot("analysis-finding", finding)

    # The runbook page counts the confirmation; a field note is shown there.
    page.goto(f"{base}/runbooks/{EXPECTED}/")
    stats = page.locator("#field-notes .feedback-stats")
    expect(stats).to_contain_text("confirmed 1 time")
    page.fill("#note-body", "On our clusters check **dfs.client.block.write.locateFollowingBlock.retries** first.")
    page.click("#field-notes button:has-text('Add note')")
    expect(page.locator("#field-notes .markdown strong")).to_have_text(
        "dfs.client.block.write.locateFollowingBlock.retries")
    expect(page.locator("#field-notes")).to_contain_text("NameNode GC pause matched the close failures")
    screenshot("runbook-detail")
    screenshot("runbook-field-notes", page.locator("#field-notes"))

    # The incident page: timeline, notes, activity (upload, analysis done, note, feedback).
    page.goto(incident_url)
    activity = page.locator("section.activity")
    expect(activity).to_contain_text("uploaded")
    expect(activity).to_contain_text("finished")
    expect(activity).to_contain_text(f"confirmed {EXPECTED}")
    expect(page.locator("#timeline")).to_be_visible()
    screenshot("incident-page")
    page.locator("#team-work > summary").click()      # activity and notes are one fold away (issue 15)
    screenshot("incident-notes-activity", page.locator(".incident-collab"))

    # The incident list, filtered by the confirmed root cause.
    page.goto(f"{base}/incidents/?runbook={EXPECTED}&confirmed=on")
    expect(page.locator("table.incidents")).to_contain_text("Flink checkpoints fail")
    screenshot("incident-list")

    # Owner notification for the finished analysis.
    page.goto(base + "/notifications/")
    expect(page.locator("ul.notifications")).to_contain_text("finished: top finding")

    assert dialogs == []


def _open_upload_form(page, base: str, title: str) -> None:
    """A new incident's upload form, once kb-upload.js has set up the drop zone."""
    page.goto(base + "/incidents/new/")
    page.fill("input[name=title]", title)
    page.click("button:has-text('Open incident')")
    page.wait_for_url(re.compile(r"/incidents/\d+/$"))
    page.click("a:has-text('Upload a bundle')")
    expect(page.locator("#upload-drop")).to_be_visible()


def _analyze_and_see_both_seed_hosts(page) -> None:
    """Submit, wait for the real pipeline, open the analysis: seed 000's two hosts are on it."""
    page.click("button:has-text('Upload and analyze')")
    page.wait_for_url(re.compile(r"/upload/\?analysis=\d+"))
    progress = page.locator("section.analysis-progress")
    expect(progress).to_have_attribute("data-status", "done", timeout=120_000)
    progress.locator("a:has-text('Open the analysis')").click()
    page.wait_for_url(re.compile(r"/analyses/\d+/$"))
    for host in ("hadoop-080-037", "hadoop-081-159"):
        expect(page.locator(f'[data-host="{host}"]').first).to_be_attached()


def test_two_host_archives_dropped_on_the_form_make_one_analysis_of_both_hosts(
        pipeline, shared_live_server, e2e_user, page, tmp_path):
    """Issue 14: several files dropped at once become one bundle with a lane per host."""
    import base64
    import io

    seed = SEED_BUNDLES / "000-flink-hdfs-openforwrite-after-soft-lockup"
    archives = {}
    for host in ("hadoop-080-037", "hadoop-081-159"):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tf:
            tf.add(seed / host, arcname=host)
        archives[f"{host}.tgz"] = base64.b64encode(buf.getvalue()).decode()
    base = shared_live_server.url
    login(page, base, "e2e-alice", PASSWORD)
    _open_upload_form(page, base, "Soft lockup, two hosts")     # kb-upload.js has run: it handles drops
    page.evaluate("""(archives) => {
        const dt = new DataTransfer();
        for (const [name, b64] of Object.entries(archives)) {
            const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
            dt.items.add(new File([bytes], name, {type: "application/gzip"}));
        }
        document.getElementById("upload-form").dispatchEvent(new DragEvent("drop", {dataTransfer: dt, bubbles: true}));
    }""", archives)
    expect(page.locator("#upload-status")).to_contain_text("2 file(s) dropped")
    _analyze_and_see_both_seed_hosts(page)


def test_a_folder_chosen_in_the_form_keeps_its_hosts_and_loses_its_wrapper(
        pipeline, shared_live_server, e2e_user, page, tmp_path):
    """Issue 14: `prod2-logs/` picked as a folder: two hosts, paths without prod2-logs/."""
    import shutil

    seed = SEED_BUNDLES / "000-flink-hdfs-openforwrite-after-soft-lockup"
    folder = tmp_path / "prod2-logs"
    for host in ("hadoop-080-037", "hadoop-081-159"):
        shutil.copytree(seed / host, folder / host)
    base = shared_live_server.url
    login(page, base, "e2e-alice", PASSWORD)
    _open_upload_form(page, base, "Soft lockup, a folder")      # kb-upload.js has run: it sends the paths
    page.set_input_files("#upload-folder", str(folder))
    _analyze_and_see_both_seed_hosts(page)
    expect(page.locator("body")).to_contain_text("hadoop-080-037/kern.log")
    expect(page.locator("body")).not_to_contain_text("prod2-logs/hadoop")
