"""Bad input through the real upload path (checks U1-U13, U15): every bundle is
uploaded through the API or the web form, analyzed by a real Celery worker
(prefork -c 2, local engine, the production ratio limit of 200:1 and an
unpacked budget of 64 MiB), and then:

- the user gets a clear message: failed with the one-line reason, or done with
  the skipped members listed, on the API, the progress partial and the
  analysis page, HTML in names escaped;
- nothing is written outside BUNDLES_DIR/<code>/ of that bundle (the rig's
  directories are walked before and after; names carrying MARKER are searched
  in /tmp after each bundle and on the whole file system at the end);
- the worker keeps working: it is alive after each bundle, and a good bundle is
  analyzed at the end.
"""

from __future__ import annotations

import html
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest
from django.test import Client

from tests.celery_harness import shared_db, wait_for_status  # noqa: F401  (shared_db: a fixture)
from tests.reliability.conftest import cast, pipeline  # noqa: F401  (fixtures: the worker rig of RIG, the cast)
from tests.reliability.util import api_get, api_upload_id, pool_children
from tests.security import bad_bundles as b
from tests.security.html_checks import dangerous_markup

pytestmark = [pytest.mark.celery, pytest.mark.timeout(600)]

BUDGET = 64 * 1024 * 1024


@dataclass
class Case:
    check: str
    name: str
    build: Callable[[], bytes]
    status: str
    error: str = ""                                    # failed: the error contains this
    findings: list[str] = field(default_factory=list)  # done: these runbooks are found
    skipped: set[str] = field(default_factory=set)     # done: these skip reasons are listed
    notes: str = ""                                    # done: a note contains this
    encoding: str = ""                                 # done: the file was read as this
    shown: str = ""                                    # the analysis page shows this text
    context: tuple[str, ...] = ()                      # the lines around the first evidence show these
    absent: str = ""                                   # no result and no page holds this text
    web: bool = False                                  # uploaded through the web form
    max_seconds: float = 60


CASES = [
    Case("U1", "traversal.zip", b.zip_traversal, "done", findings=[b.GOOD_SLUG],
         skipped={"path traversal", "absolute path"}, web=True),
    Case("U1", "traversal.tgz", b.tar_traversal, "done", findings=[b.GOOD_SLUG],
         skipped={"path traversal", "absolute path"}),
    Case("U2", "links.tgz", b.tar_links, "done", findings=[b.GOOD_SLUG],
         skipped={"symlink", "hardlink", "device", "fifo"}, absent=b.PASSWD_LINE),
    Case("U2", "zip-symlink.zip", b.zip_symlink, "done", findings=[b.GOOD_SLUG], skipped={"symlink"},
         absent=b.PASSWD_LINE),
    Case("U3", "bomb.zip", b.zip_bomb, "failed", error="bomb.zip: member datanode.log expands more than 200:1 "
                                                       "(possible zip bomb)"),
    Case("U3", "nested-bomb.zip", b.nested_zip_bomb, "failed", error="expands more than 200:1 (possible zip bomb)"),
    Case("U3", "overlap.zip", b.overlapping_zip_bomb, "failed",
         error="overlap.zip: overlapping zip entries (possible zip bomb)"),
    Case("U3", "datanode.log.gz", b.gz_bomb, "failed", error="expands more than 200:1 (possible zip bomb)"),
    Case("U3", "zeros.log.gz", lambda: b.gz_bomb(b"\0"), "failed",
         error="zeros.log.gz: no log files found (skipped zeros.log: binary)"),
    Case("U3", "renamed-bz2.tgz", b.bz2_named_tgz, "failed", error="expands more than 200:1 (possible zip bomb)"),
    Case("U3", "huge.tgz", lambda: b.over_budget_tgz(BUDGET), "failed",
         error=f"huge.tgz: expands beyond {BUDGET} bytes (at member big/worker.log)"),
    Case("U4", "garbage.zip", b.garbage_named_zip, "failed", error="garbage.zip: not a zip archive (starts with "),
    Case("U4", "notes.tgz", b.text_named_tgz, "failed",
         error="notes.tgz: not a gzip-compressed tar archive (it looks like text)", web=True),
    Case("U4", "cut-in-half.tgz", b.truncated_tgz, "done", findings=[b.GOOD_SLUG], skipped={"archive corrupt"},
         notes="cut-in-half.tgz: archive corrupt at member "),
    Case("U4", "bad-crc.zip", b.crc_corrupt_zip, "done", findings=[b.GOOD_SLUG], skipped={"archive corrupt"},
         notes="bad-crc.zip: archive corrupt at member dn2/broken.log (Bad CRC-32"),
    Case("U5", "empty.zip", b.empty_zip, "failed", error="empty.zip: no log files found"),
    Case("U5", "empty.tar", b.empty_tar, "failed", error="empty.tar: no log files found"),
    Case("U5", "zero.log", lambda: b"", "failed", error="zero.log: no log files found (skipped zero.log: empty)"),
    Case("U5", "only-dirs.tgz", b.dirs_only_tgz, "failed", error="only-dirs.tgz: no log files found"),
    Case("U6", "deep.zip", b.nested_deep, "done", findings=[b.GOOD_SLUG], skipped={"nested too deep"}),
    Case("U7", "many.tgz", b.many_files_tgz, "failed", error="many.tgz: more than 20000 files"),
    Case("U7", "many.zip", b.many_files_zip, "failed", error="many.zip: more than 20000 files"),
    Case("U8", b.XSS_NAME, b.hostile_names_zip, "done",
         findings=[b.GOOD_SLUG], skipped={"name too long", "control character in name"}, web=True),
    Case("U8", f"api-{b.XSS_NAME}", b.hostile_names_zip, "done", findings=[b.GOOD_SLUG],
         skipped={"control character in name"}),
    Case("U9", "gbk-taskmanager.log", b.gbk_log, "done", findings=["jvm-heap-oom"], encoding="gb18030",
         shown=b.GBK_TEXT),
    Case("U10", "mixed-bytes.log", b.invalid_utf8_log, "done", findings=[b.GOOD_SLUG], encoding="utf-8-replace",
         context=("\ufffd", "数据节点 utf-8 text", "\ufffd gbk text")),   # one encoding per file: GBK bytes in a UTF-8 file are replaced
    Case("U11", "windows-utf16.log", b.utf16_log, "done", findings=[b.GOOD_SLUG], encoding="utf-16-le"),
    Case("U12", "one-long-line.log", b.long_line_log, "done", findings=[b.GOOD_SLUG]),
    Case("U13", "binaries.tgz", b.binaries_tgz, "done", findings=[b.GOOD_SLUG], skipped={"binary"}),
    Case("U15", "elf-binary.log", lambda: b.ELF, "failed",
         error="elf-binary.log: no log files found (skipped elf-binary.log: binary)"),
    Case("U15", "page.log", lambda: b.HTML_LOG, "done", findings=[b.GOOD_SLUG]),
]


# The worker this module runs against (tests/celery_harness.py: pipeline).
RIG = {"engine": "local", "concurrency": 2,
       "env": {"KB_BUNDLE_MAX_RATIO": "200", "KB_BUNDLE_MAX_UNPACKED_BYTES": str(BUDGET),
               "KB_BUNDLE_MAX_FILES": "20000"}}
CAST_PREFIX = "bad"   # cast: make_cast(CAST_PREFIX)


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for top, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(top, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            out[path] = (st.st_size, st.st_mtime_ns)
    return out


def _escaped_markers() -> list[str]:
    return [str(p) for base in ("/tmp", "/", "/etc", "/work", "/root") for p in Path(base).glob(f"*{b.MARKER}*")]


def _upload(case: Case, cast, data: bytes) -> int:
    if not case.web:
        return api_upload_id(Client(), cast.alice_token, case.name, data, incident=str(cast.incident.id))
    import io

    web = Client()
    web.force_login(cast.alice)
    f = io.BytesIO(data)
    f.name = case.name
    response = web.post(f"/incidents/{cast.incident.id}/upload/", {"file": f})
    assert response.status_code == 302, response.content[:300]
    return int(response["Location"].rsplit("=", 1)[1])


@pytest.mark.parametrize("case", CASES, ids=[f"{c.check}-{c.name}" for c in CASES])
def test_a_bad_bundle_gets_a_clear_message_and_writes_nowhere_else(pipeline, cast, case, observe):
    from kb.models import Analysis
    from kb.services.bundles import bundle_dir

    data = case.build()
    rig = pipeline.bundles_dir.parent
    logs = {str(pipeline.worker.log), str(rig / "redis.log")}
    before = _snapshot(rig)
    t0 = time.monotonic()
    analysis_id = _upload(case, cast, data)
    a = wait_for_status(analysis_id, ("done", "failed"), case.max_seconds + 30, pipeline.worker)
    seconds = time.monotonic() - t0
    a = Analysis.objects.select_related("bundle").get(id=analysis_id)

    # What the user is told.
    api = api_get(Client(), cast.alice_token, analysis_id).json()
    web = Client()
    web.force_login(cast.alice)
    page = web.get(f"/analyses/{analysis_id}/").content.decode()
    partial = web.get(f"/analyses/{analysis_id}/progress/").content.decode()
    summary = a.error if a.status == "failed" else (
        f"findings {[f['runbook'] for f in a.result['findings']]}, skipped "
        f"{sorted({s['reason'] for s in a.result['skipped']})}, notes {[n[:80] for n in a.result['notes']]}")
    observe(f"{case.check} {case.name!r} ({len(data)} bytes, via {'web' if case.web else 'API'}): "
            f"{a.status} in {seconds:.1f} s: {summary}")
    assert a.status == case.status, (a.status, a.error)
    assert seconds < case.max_seconds
    assert dangerous_markup(page) == [] and dangerous_markup(partial) == []
    assert "Traceback" not in page and "Traceback" not in (a.error or "")
    if case.status == "failed":
        assert case.error in a.error, a.error
        assert "\n" not in a.error and len(a.error) < 1000
        assert api["status"] == "failed" and api["error"] == a.error and api["result"] is None
        assert html.escape(a.error) in page and html.escape(a.error) in partial
        assert not (bundle_dir(a.bundle) / "staged" / str(analysis_id)).exists(), "staged files left behind"
    else:
        result = a.result
        found = [f["runbook"] for f in result["findings"]]
        assert all(slug in found for slug in case.findings), found
        reasons = {s["reason"] for s in result["skipped"]}
        assert case.skipped <= reasons, reasons
        for s in result["skipped"]:
            assert html.escape(s["path"]) in page, s   # every skipped member is listed, escaped
        if case.notes:
            assert any(case.notes in n for n in result["notes"]), result["notes"]
            assert any(html.escape(n) in page for n in result["notes"] if case.notes in n)
        if case.encoding:
            assert [f["encoding"] for f in result["files"]] == [case.encoding]
        if case.shown:
            assert case.shown in page, f"{case.shown!r} not on the analysis page"
        if case.context:
            from urllib.parse import urlencode

            ev = result["findings"][0]["evidence"][0]
            around = web.get(f"/analyses/{analysis_id}/context/?" + urlencode({"path": ev["path"], "line": ev["line"]}))
            assert around.status_code == 200
            text = around.content.decode()
            assert dangerous_markup(text) == []
            for piece in case.context:
                assert piece in text, f"{piece!r} not in the lines around {ev['path']}:{ev['line']}"
        assert api["status"] == "done" and api["result"]["findings"] == result["findings"]
    if case.absent:
        assert case.absent not in str(a.result) and case.absent not in page
    assert a.bundle.original_name in html.unescape(page)

    # Nothing written outside BUNDLES_DIR/<code>/.
    own = str(bundle_dir(a.bundle)) + os.sep
    after = _snapshot(rig)
    outside = [p for p, st in after.items() if before.get(p) != st and not p.startswith(own) and p not in logs]
    assert outside == [], outside
    assert _escaped_markers() == []
    assert os.path.getsize(a.bundle.stored_path) == len(data)      # the upload itself is kept
    # The worker goes on.
    assert pipeline.worker.proc.poll() is None and pool_children(pipeline.worker.proc.pid)


def test_the_worker_still_analyses_a_good_bundle_and_nothing_escaped(pipeline, cast, observe):
    from tests.reliability.util import SEED, SEED_FINDING, tgz_of

    analysis_id = api_upload_id(Client(), cast.alice_token, "good.tgz", tgz_of(SEED))
    a = wait_for_status(analysis_id, ("done", "failed"), 60, pipeline.worker)
    assert a.status == "done" and a.result["findings"][0]["runbook"] == SEED_FINDING
    import subprocess

    found = subprocess.run(["find", "/", "-xdev", "(", "-path", "/proc", "-o", "-path", "/sys", ")", "-prune",
                            "-o", "-name", f"*{b.MARKER}*", "-print"], capture_output=True, text=True, timeout=300)
    observe(f"after {len(CASES)} bad bundles a good one was analyzed; files named *{b.MARKER}* on the whole "
            f"file system: {found.stdout.split() or 'none'}")
    assert found.stdout.split() == []
