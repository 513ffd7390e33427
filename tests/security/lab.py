"""The XSS lab shared by test_rendering.py and browser/test_xss_in_chromium.py: the
xss-lab runbook (payloads in its body and every free-text front matter field),
an incident with payloads in everything its team can write, and a real analysis
(the pipeline, run in process) of a bundle whose log lines and names are payloads."""

from __future__ import annotations

import io
import tarfile

import yaml

from tests.security.payloads import ALL, MARKDOWN, OWASP

X2_TEXT = "<b>x</b><script>alert(1)</script>"
EVIDENCE_PAYLOADS = ["<script>alert('ev1')</script>", "\"><img src=x onerror=alert('ev2')>",
                     "<svg/onload=alert('ev3')>", "javascript:alert('ev4')"]
HTML_NAME = "<img src=x onerror=alert('name')>.log"


def _lab_runbook(base_text: str) -> str:
    """disk-full's file with a payload in every free-text field of the front matter and the body."""
    front, body = base_text.split("\n---\n", 1)
    meta = yaml.safe_load(front.removeprefix("---\n"))
    evil = OWASP[2] + " " + OWASP[27] + " " + MARKDOWN[0]
    meta.update(slug="xss-lab", title=f"XSSLAB {OWASP[0]}", summary=f"XSSLAB summary {evil}")
    meta["symptoms"] = [{"id": "xss-lab-marker", "role": "required", "weight": 0.7}]
    meta["knobs"][0].update(key="xss.lab.knob", why=f"because {evil}", recommended=f"{OWASP[1]}")
    for fix in meta["fixes"]:
        fix["title"] = f"{fix['title']} {OWASP[6]}"
        for step in fix["steps"]:
            step.update(text=f"{step['text']} {evil}", command=f"echo '{OWASP[0]}' && {OWASP[38]}")
    meta["tickets"] = [
        {"id": "HDFS-1", "title": f"js link {OWASP[3]}", "status": "fixed", "url": "javascript:alert('ticket')"},
        {"id": "HDFS-2", "title": "tab link", "status": "open", "url": "java\tscript:alert('ticket2')"},
        {"id": "HDFS-3", "title": "data link", "status": "open", "url": "data:text/html,<script>alert(1)</script>"},
        {"id": "HDFS-4", "title": "good link", "status": "open", "url": "https://issues.apache.org/jira/browse/HDFS-4"},
    ]
    meta["references"] = [
        {"title": f"ref {OWASP[4]}", "url": " JaVaScRiPt:alert('ref')"},
        {"title": "vbscript", "url": "vbscript:msgbox(1)"},
        {"title": "mail", "url": "mailto:ops@example.com"},
        {"title": "good", "url": "https://man7.org/linux/man-pages/man1/df.1.html"},
    ]
    meta["differential"] = [{"slug": "jvm-long-gc-pause", "how": f"how {OWASP[8]}"}]
    body = "## Summary\n\nXSSLAB body\n\n" + "\n\n".join(ALL) + "\n\n[safe](https://example.com/ok)\n"
    return "---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True) + "---\n" + body


def _lab_symptom() -> str:
    """The library file of the lab runbook's symptom, a payload in its title and example."""
    return yaml.safe_dump({"id": "xss-lab-marker", "title": f"XSSLAB symptom {OWASP[5]}",
                           "patterns": ["XSSLAB marker"], "examples": [f"XSSLAB marker {OWASP[9]}"]})


def build_lab(*, runbooks_dir, runbook_texts, alice, team, settings, tmp_path) -> dict:
    """The xss-lab runbook, an incident with payloads in everything its team can write, and
    a real analysis (the pipeline, in process) of a bundle whose lines and names are payloads."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from kb.models import Analysis, Incident, Notification
    from kb.services import collab
    from kb.services.analyses import analysis_run
    from kb.services.bundles import bundle_store
    from kb.services.sync import runbook_sync

    (runbooks_dir / "xss-lab.md").write_text(_lab_runbook(runbook_texts["disk-full"]), encoding="utf-8")
    (runbooks_dir / "symptoms" / "xss-lab-marker.yaml").write_text(_lab_symptom(), encoding="utf-8")
    runbook_sync(directory=runbooks_dir)
    settings.BUNDLES_DIR = tmp_path / "bundles"
    settings.KB_ENGINE = "local"

    incident = Incident.objects.create(team=team, title=f"{X2_TEXT} {OWASP[1]}", created_by=alice, owner=alice)
    lines = [f"2024-03-01 10:00:0{i},000 ERROR DataNode: {p} java.io.IOException: No space left on device"
             for i, p in enumerate(EVIDENCE_PAYLOADS)]
    lines += [f"2024-03-01 10:00:09,000 ERROR Weird: {OWASP[30]} unknown failure {i}" for i in range(3)]
    lines += ["2024-03-01 10:00:10,000 INFO XSSLAB marker <script>alert('marker')</script>"]
    gc = ("2024-03-01 09:59:00,000 WARN JvmPauseMonitor: Detected pause in JVM or host machine (eg GC): "
          "pause of approximately 12000ms <svg/onload=alert('gc')>")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in ((f"dn1/{HTML_NAME}", "\n".join(lines) + "\n"),
                           ("tm1/flink-taskmanager.log", gc + "\n")):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    bundle = bundle_store(incident=incident, user=alice,
                          uploaded_file=SimpleUploadedFile(f"{OWASP[1][:60]}.tgz", buf.getvalue()))
    analysis = Analysis.objects.create(team=team, bundle=bundle)
    analysis_run(analysis_id=analysis.id, owner="test:1:lab")
    analysis.refresh_from_db()
    assert analysis.status == "done", analysis.error

    annotation = collab.annotation_create(incident=incident, author=alice, body=X2_TEXT + "\n\n" + "\n\n".join(ALL))
    ev = analysis.result["findings"][0]["evidence"][0]
    collab.annotation_create(incident=incident, author=alice, body=f"@bob line {OWASP[9]}", analysis=analysis,
                             evidence_path=ev["path"], evidence_line=ev["line"])
    collab.annotation_create(incident=incident, author=alice, body=f"finding {OWASP[38]}", analysis=analysis,
                             finding_slug=analysis.result["findings"][0]["runbook"])
    from kb.models import Runbook

    collab.runbook_note_create(runbook=Runbook.objects.get(slug="xss-lab"), team=team, author=alice,
                               body=f"field note {X2_TEXT} " + " ".join(OWASP[:10]))
    collab.feedback_set(analysis=analysis, slug=analysis.result["findings"][0]["runbook"], user=alice,
                        verdict="reject", reason=f"reason {X2_TEXT} {OWASP[3]}")
    Notification.objects.create(user=alice, incident=incident, verb="mention", text=f"note {X2_TEXT}",
                                url=f"/incidents/{incident.pk}/")
    return {"incident": incident, "analysis": analysis, "annotation": annotation, "evidence": ev}
