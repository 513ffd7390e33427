"""The validator, table-driven: each row breaks one thing in a valid runbook
or symptom file and names the problem the author must be told."""

from __future__ import annotations

import pytest
import yaml

from analyzers.runbooks import RunbookError, dump_symptom, parse_runbook, parse_symptom

LIBRARY = {
    "disk-full-write": {"id": "disk-full-write", "title": "Write failed, disk full",
                        "patterns": [r"No space left on device(?: \((?P<path>\S+)\))?"],
                        "captures": {"path": "path"}, "examples": ["java.io.IOException: No space left on device"]},
    "nn-time-wait": {"id": "nn-time-wait", "title": "TIME_WAIT surge", "fact": "netstat.time_wait",
                     "captures": {"value": "count"}},
}

RUNBOOK = {
    "slug": "disk-full", "title": "A disk filled up", "summary": "Writes fail.", "components": ["os"],
    "severity": "high",
    "symptoms": [{"id": "disk-full-write", "role": "required", "weight": 0.7},
                 {"id": "nn-time-wait", "role": "supporting", "weight": 0.1,
                  "where": [{"capture": "value", "op": ">=", "value": 10000}]}],
    "relations": [{"first": "nn-time-wait", "then": "disk-full-write", "within": "10m"}],
    "chain": ["nn-time-wait", "disk-full-write"],
    "knobs": [{"key": "dfs.datanode.du.reserved", "default": "0", "recommended": "10g", "why": "room"}],
    "fixes": [{"title": "Free space", "kind": "mitigation", "steps": [{"text": "Delete logs", "command": "rm x"}]}],
    "tickets": [{"id": "HDFS-1", "title": "t", "status": "fixed", "fixed_in": ["2.8.0"]}],
}


def _text(meta: dict) -> str:
    return "---\n" + yaml.safe_dump(meta, sort_keys=False) + "---\n## Summary\n"


def _broken(path: str, value) -> dict:
    """RUNBOOK with the item at `path` (dotted, list indexes as numbers) replaced or, for None, removed."""
    meta = yaml.safe_load(yaml.safe_dump(RUNBOOK))
    *parents, last = path.split(".")
    node = meta
    for part in parents:
        node = node[int(part)] if part.isdigit() else node[part]
    key = int(last) if last.isdigit() else last
    if value is None:
        del node[key]
    else:
        node[key] = value
    return meta


def test_the_base_runbook_is_valid_and_resolved_against_the_library():
    rb = parse_runbook(_text(RUNBOOK), "rb.md", library=LIBRARY)
    used = rb.meta["symptoms"][0]
    assert used["patterns"] == LIBRARY["disk-full-write"]["patterns"] and used["role"] == "required"
    assert rb.warnings == []


RUNBOOK_CASES = [
    ("severity", "huge", "severity: must be one of"),
    ("components", ["hdfs", "mainframe"], "unknown component 'mainframe'"),
    ("title", "x" * 101, "title: longer than 100 characters"),
    ("summary", None, "missing key(s) ['summary']"),
    ("slug", "Disk_Full", "is not a kebab-case slug"),
    ("symptoms", [], "symptoms: must be a list with at least 1 item(s)"),
    ("symptoms.0.role", "primary", "role must be one of"),
    ("symptoms.0.role", "supporting", "at least one symptom must have role 'required'"),
    ("symptoms.0.weight", 7, "weight must be a number in [0, 1]"),
    ("symptoms.0.id", "no-such-symptom", "unknown symptom: no runbooks/symptoms/no-such-symptom.yaml"),
    ("symptoms.0.patterns", ["No space"], "belong in runbooks/symptoms/disk-full-write.yaml"),
    ("symptoms.0.group", "g", None),  # valid: a group on a required symptom
    ("symptoms.1.group", "g", "group (alternatives among required symptoms) needs role 'required'"),
    ("symptoms.1.where.0.capture", "lines", "capture 'lines' is not declared"),
    ("symptoms.1.where.0.op", "~", "op must be one of"),
    # `component`: the file's component, a pseudo-capture every symptom has; a name, so no order
    ("symptoms.0.where", [{"capture": "component", "op": "matches", "value": "^hbase-"}], None),
    ("symptoms.1.where", [{"capture": "component", "op": "==", "value": "hdfs-namenode"}], None),
    ("symptoms.0.where", [{"capture": "component", "op": ">=", "value": 1}], "component (the file's"),
    ("symptoms.1.colour", "red", "unknown key(s) ['colour']"),
    ("symptoms.0.burst", {"count": 10, "within": "30s"}, None),   # valid: a burst
    ("symptoms.0.burst", {"count": 10, "within": "1m", "hosts": "same"}, None),
    ("symptoms.0.burst", [10, "30s"], "symptom 'disk-full-write'.burst: must be a mapping"),
    ("symptoms.0.burst", {"count": 10}, "missing key(s) ['within']"),
    ("symptoms.0.burst", {"count": 10, "within": "30s", "every": "1m"}, "unknown key(s) ['every']"),
    ("symptoms.0.burst", {"count": 1, "within": "30s"}, "count must be an integer >= 2"),
    ("symptoms.0.burst", {"count": "10", "within": "30s"}, "count must be an integer >= 2"),
    ("symptoms.0.burst", {"count": True, "within": "30s"}, "count must be an integer >= 2"),
    ("symptoms.0.burst", {"count": 10, "within": "soon"}, "bad duration 'soon'"),
    ("symptoms.0.burst", {"count": 10, "within": "500ms"}, "within must be a whole number of seconds"),
    ("symptoms.0.burst", {"count": 10, "within": "1.5s"}, "within must be a whole number of seconds"),
    ("symptoms.0.burst", {"count": 10, "within": "30s", "hosts": "other"}, "hosts must be same or any"),
    ("relations.0.then", "nope", "then names unknown symptom 'nope'"),
    ("relations.0.within", "ten minutes", "bad duration"),
    ("relations.0.hosts", "some", "hosts must be same, other or any"),
    ("chain.1", "nope", "chain[1]: unknown symptom id 'nope'"),
    ("knobs.0.default", 0, "must be a string (quote numbers and booleans)"),
    ("fixes", [], "fixes: must be a list with at least 1 item(s)"),
    ("fixes.0.kind", "hope", "kind must be one of"),
    ("fixes.0.steps.0.text", None, "missing key(s) ['text']"),
    ("tickets.0.status", "done", "status must be one of"),
    ("tickets.0.fixed_in", "2.8.0", "fixed_in must be a list"),
    ("affected_versions", [{"component": "hadoop", "range": "2.x"}], "affected_versions[0]"),
]


@pytest.mark.parametrize("path,value,problem", RUNBOOK_CASES, ids=[f"{c[0]}={c[1]!r}"[:60] for c in RUNBOOK_CASES])
def test_a_runbook_problem_is_named(path, value, problem):
    text = _text(_broken(path, value))
    if problem is None:
        parse_runbook(text, "rb.md", library=LIBRARY)
        return
    with pytest.raises(RunbookError) as excinfo:
        parse_runbook(text, "rb.md", library=LIBRARY)
    assert problem in str(excinfo.value)
    assert all(p.startswith("rb.md: ") for p in excinfo.value.problems)


def test_every_problem_of_a_file_is_reported_at_once():
    meta = _broken("severity", "huge")
    meta["fixes"][0]["kind"] = "hope"
    meta["symptoms"][0]["weight"] = 2
    with pytest.raises(RunbookError) as excinfo:
        parse_runbook(_text(meta), "rb.md", library=LIBRARY)
    assert len(excinfo.value.problems) == 3
    assert str(excinfo.value).count("\n") == 2


@pytest.mark.parametrize("use,warned", [
    ({"id": "nn-time-wait", "role": "excluding", "weight": 0.3}, "weight 0.3 is never used"),
    ({"id": "nn-time-wait", "role": "excluding", "weight": 0.3, "veto": False}, None),
    ({"id": "nn-time-wait", "role": "excluding"}, None),
    ({"id": "nn-time-wait", "role": "supporting", "veto": False}, "veto only applies to excluding symptoms"),
])
def test_weights_a_veto_makes_meaningless_are_warned_about(use, warned):
    meta = _broken("symptoms.1", use)
    meta.pop("relations"), meta.pop("chain")
    rb = parse_runbook(_text(meta), "rb.md", library=LIBRARY)
    if warned:
        assert len(rb.warnings) == 1 and warned in rb.warnings[0]
    else:
        assert rb.warnings == []


SYMPTOM_CASES = [
    ("id", "Disk", "is not kebab-case"),
    ("id", "other-id", "does not match the file name 'disk-full-write'"),
    ("title", None, "missing key(s) ['title']"),
    ("patterns", ["(unclosed"], "invalid regex"),
    ("patterns", [r"(a)\1"], "back-references and look-around are not supported"),
    ("patterns", [r"x(?=y)"], "back-references and look-around are not supported"),
    ("patterns", [r"a*"], "matches the empty string"),
    ("patterns", [r"(?P<size>\d+) bytes"], "named group 'size' has no type in captures"),
    ("captures", {"path": "filename"}, "unknown type 'filename'"),
    ("captures", {"path": "path", "component": "str"}, "'component' is reserved"),
    ("examples", ["a healthy line"], "examples[0]: is not matched by any of the patterns"),
    ("examples", None, "a pattern symptom needs at least one example line"),
    ("fact", "netstat.close_wait", "needs exactly one of 'patterns' or 'fact'"),
    ("role", "required", "unknown key(s) ['role']"),
]


@pytest.mark.parametrize("key,value,problem", SYMPTOM_CASES, ids=[f"{c[0]}={c[1]!r}"[:60] for c in SYMPTOM_CASES])
def test_a_symptom_file_problem_is_named(key, value, problem):
    definition = dict(LIBRARY["disk-full-write"])
    if value is None:
        del definition[key]
    else:
        definition[key] = value
    with pytest.raises(RunbookError) as excinfo:
        parse_symptom(yaml.safe_dump(definition), "symptoms/disk-full-write.yaml", expected_id="disk-full-write")
    assert problem in str(excinfo.value)


def test_an_unknown_fact_is_named():
    definition = {k: v for k, v in LIBRARY["nn-time-wait"].items()}
    definition["fact"] = "netstat.close_wait"
    with pytest.raises(RunbookError, match="unknown fact 'netstat.close_wait'"):
        parse_symptom(yaml.safe_dump(definition), "s.yaml")


def test_a_symptom_file_round_trips():
    text = dump_symptom(LIBRARY["disk-full-write"])
    assert parse_symptom(text, "s.yaml", expected_id="disk-full-write") == LIBRARY["disk-full-write"]
