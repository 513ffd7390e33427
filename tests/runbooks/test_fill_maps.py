"""The runbooks' `fill:` maps (analyzers/fill.py, runbooks/README.md "fill"):
each source is evidence the runbook itself looks at, no fix step keeps a
placeholder that one of the runbook's own symptoms captures under the same
name, and on real positive fixture cases the first fix step is written with
the value the fixture's evidence holds."""

from __future__ import annotations

import re

import pytest

from analyzers.engine import analyze_paths
from analyzers.fill import _generic, capture_names, fill_fixes
from tests.helpers import CASES, bundle_copy, bundle_file, catalog, runbook_metas

# Spellings of one placeholder name (a step's <appId> is a capture's app_id).
SAME_NAME = {"appid": "app_id", "application_id": "app_id", "applicationid": "app_id",
             "containerid": "container", "container_id": "container", "jobid": "job", "job_id": "job",
             "datadir": "data_dir", "hdfs_path": "path", "file": "path"}

# Placeholders a capture of the same name cannot fill, and why.
NOT_THE_SAME_VALUE = {
    ("container-oom-killed", "<pid>"): "the step needs the pid of a live JVM; the captured pid is the killed process",
    ("hdfs-datanode-clusterid-mismatch", "<dir>"): "the step quotes the NameNode's format message (its name dir); "
                                                   "the capture is the DataNode's storage dir",
    ("hdfs-permission-denied", "<group>"): "the step wants the job user's group; the capture is the inode's group",
}


def _canonical(name: str) -> str:
    name = re.sub(r"[-.]", "_", name.strip("<>").lower())
    return SAME_NAME.get(name, name)


def _uses(meta: dict) -> set[str]:
    return {s["id"] for s in meta.get("symptoms") or [] if s.get("role") != "excluding"}


def _sources(meta: dict):
    for key, sources in (meta.get("fill") or {}).items():
        for src in sources if isinstance(sources, list) else [sources]:
            yield key, src


def test_every_fill_source_is_evidence_the_runbook_or_a_runbook_it_leads_to_looks_at():
    """A source naming another runbook's symptom only fills when that runbook's
    evidence happens to be in the same analysis; a runbook it leads to is
    expected there (kernel soft lockup -> the open file it left behind)."""
    runbooks = catalog().runbooks
    wrong = []
    for slug, rb in runbooks.items():
        seen = _uses(rb.meta) | {sid for lead in rb.meta.get("leads_to") or []
                                 for sid in _uses(runbooks[lead["slug"]].meta)}
        wrong += [f"{slug}: fill[{key!r}] <- {src['symptom']}" for key, src in _sources(rb.meta)
                  if src["symptom"] not in seen]
    assert not wrong, wrong


def test_every_fill_capture_is_one_its_symptom_has():
    library = catalog().symptoms
    wrong = [f"{slug}: fill[{key!r}] <- {src['symptom']}.{src['capture']}"
             for slug, rb in catalog().runbooks.items() for key, src in _sources(rb.meta)
             if "capture" in src and src["capture"] not in capture_names(library[src["symptom"]])]
    assert not wrong, wrong


def test_no_fix_step_keeps_a_placeholder_its_own_symptoms_capture_by_that_name():
    library = catalog().symptoms
    unmapped = []
    for slug, rb in catalog().runbooks.items():
        fill = rb.meta.get("fill") or {}
        captures: dict[str, str] = {}
        for sid in _uses(rb.meta):
            definition = library[sid]
            for name in capture_names(definition):
                captures.setdefault(_canonical(name), f"{sid}.{name}")
            for name, typ in (definition.get("captures") or {}).items():
                if typ == "path":                      # a step's <path> is any path capture
                    captures.setdefault("path", f"{sid}.{name}")
        for fix in rb.meta.get("fixes") or []:
            for step in fix.get("steps") or []:
                for text in (step.get("text") or "", step.get("command") or ""):
                    for start, end in _generic(text):
                        placeholder = text[start:end]
                        if any(placeholder in key for key in fill if key in text):
                            continue                   # mapped, alone or inside a longer placeholder
                        source = captures.get(_canonical(placeholder))
                        if source and (slug, placeholder) not in NOT_THE_SAME_VALUE:
                            unmapped.append(f"{slug}: {placeholder} could come from {source}")
    assert not unmapped, sorted(set(unmapped))


def test_the_exemptions_still_name_real_placeholders():
    """An exemption for a placeholder a runbook no longer writes hides nothing; drop it."""
    runbooks = catalog().runbooks
    for slug, placeholder in NOT_THE_SAME_VALUE:
        steps = " ".join(f"{st.get('text', '')} {st.get('command', '')}"
                         for fix in runbooks[slug].meta["fixes"] for st in fix["steps"])
        assert placeholder in steps, (slug, placeholder)


# One real positive case per component: (runbook, case, placeholder in the first fix step, the value
# its evidence holds). The value is checked against the fixture's own line (or, for a log file
# placeholder, the fixture file's name) below, so a value the analysis made up cannot pass.
FIRST_STEP = {
    "hdfs": ("hdfs-block-missing", "positive-pyspark-iceberg-ec", "<path>", "/hdfspath_redacted/core_page_view/eventdate=20210421/000005_0"),
    "yarn": ("yarn-local-dirs-bad", "positive-rm-only-disk-full", "<nodeId>", "jh02-003:8041"),
    "hive": ("hive-lock-acquisition-failed", "positive", "<table>", "insert_into1_neg"),
    "zookeeper": ("zookeeper-acl-noauth", "positive", "<path>", "/config/topics/test"),
    "hbase": ("hbase-region-in-transition-stuck", "positive", "hbase-*-master-*.log", "hbase-hbase-master-hm-1.log"),
    "kafka": ("kafka-advertised-listeners-unreachable", "positive", "<client-log>", "logstash-plain.log"),
    "flink": ("flink-checkpoint-expired", "positive", "<jobId>", "9ee5f488e87f39d44f7cd9e6da6ff1cd"),
    "spark": ("spark-shuffle-block-too-large-frame", "positive", "<executor-logs>", "spark-executor.log"),
    "kerberos": ("kerberos-keytab-unreadable", "positive", "<keytab>", "/etc/security/hdfs.keytab"),
}


@pytest.mark.parametrize("component", sorted(FIRST_STEP))
def test_a_real_positive_case_gets_its_first_fix_step_with_the_evidences_value(component, tmp_path):
    slug, case_name, placeholder, value = FIRST_STEP[component]
    case = CASES / slug / case_name
    result = analyze_paths([str(bundle_copy(case, tmp_path))], runbook_metas())
    finding = next(f for f in result["findings"] if f["runbook"] == slug)
    records = finding["evidence"] + [e for f in result["findings"] for e in f["evidence"]]   # as the page does
    fixes = fill_fixes(finding["fix_steps"], catalog().runbooks[slug].meta.get("fill"), records, catalog().symptoms)
    first = fixes[0]["steps"][0]
    filled = [p for p in first["filled"] if p["placeholder"] == placeholder]
    assert filled and {p["text"] for p in filled} == {value}, first
    assert placeholder not in first["command"] and value in first["command"]
    path, line = filled[0]["source"].rsplit(":", 1)
    file, _ = bundle_file(case, path)
    fixture_line = file.read_text(encoding="utf-8", errors="replace").splitlines()[int(line) - 1]
    assert value in fixture_line or value == file.name, (fixture_line, file.name)
