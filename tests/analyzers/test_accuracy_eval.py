"""The held-out accuracy measure (issue 13): real incident logs from public
threads, sampled as incidents arrive and labelled from each thread's
resolution, scored by scripts/accuracy_eval.py on the local engine. The floors
below are the figures measured when the corpus was collected: they may only
rise (raise them when the engine gets better; never lower them to pass)."""

from __future__ import annotations

import json
import re

import pytest

from scripts.accuracy_eval import CORPUS, CaseResult, cases, evaluate, summary, table, totals
from tests.helpers import FIXTURES, RUNBOOKS_DIR

CASES = cases(CORPUS)
README = (FIXTURES / "README.md").read_text(encoding="utf-8")
# The slugs a label may name: every runbook of the catalog (runbooks/<slug>.md).
SLUGS = {p.stem for p in RUNBOOKS_DIR.glob("*.md") if p.stem != "README"}

# Measured 2026-11-24 on 30 cases (python -m scripts.accuracy_eval): 9/17 top-1 and top-3; at the
# end of that day, 29 cases (one left for a runbook fixture) with five null cases relabelled to
# runbooks written from other threads that day: 15/22 top-1 and top-3; then 16/22 (branch procfact: a
# file's writing process from its content, hbase-master-zookeeper-refused-not-initialized found). Branch
# acc2 sampled 13 more (42 cases, coverage 26/42): 18/26 top-1 and top-3, false findings still 1/42.
# Branch rb-yarn-rm-addr relabelled one null case to its new runbook yarn-client-resourcemanager-address-unset: 42 cases, coverage 27/42, top-1 19/27, top-3 19/27, false findings 1/42.
# Branch rb-misc-new wrote kafka-log-dir-foreign-entry and spark-yarn-app-exits-am-jvm from other threads and relabelled two null cases: 42 cases, coverage 29/42, top-1 21/29, top-3 21/29, false findings 1/42.
MIN_CASES = 42
MIN_HIT1 = 21
MIN_HIT3 = 21
# The one false finding measured (MISSES.md): the election-port runbook names the consequence of
# a duplicate myid. The list may only shrink: any other case with a false finding fails the test.
KNOWN_FALSE = {"zookeeper-ensemble-all-myid-1-election-refused"}


def test_the_corpus_keeps_its_size():
    assert len(CASES) >= MIN_CASES, [c.name for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case_is_real_labelled_and_listed(case):
    source = (case / "SOURCE.md").read_text(encoding="utf-8")
    assert source.splitlines()[0] == "Provenance: real", case.name
    assert "https://" in source and "Root cause" in source, f"{case.name}/SOURCE.md names no thread or cause"
    assert f"accuracy/{case.name}/SOURCE.md" in README, f"tests/fixtures/README.md has no line for {case.name}"
    expected = json.loads((case / "expected.json").read_text(encoding="utf-8"))
    assert set(expected) == {"root_cause", "why"} and expected["why"].strip(), case.name
    # A label is a catalog slug or null: a typo would silently count as a miss forever.
    assert expected["root_cause"] is None or expected["root_cause"] in SLUGS, expected["root_cause"]
    assert [p for p in case.rglob("*") if p.is_file() and p.name not in ("SOURCE.md", "expected.json")], case.name


THREAD = re.compile(r"github\.com/[\w.-]+/[\w.-]+/(?:issues|pull)/\d+(?!\d)")


def test_no_case_comes_from_a_thread_the_other_fixtures_already_use():
    # Held out: a thread already quoted by a runbook case or the leads corpus is a log
    # the catalog (or its author) has seen, so it would not measure incidents as they arrive.
    others = "\n".join(p.read_text(encoding="utf-8") for p in FIXTURES.rglob("SOURCE.md") if CORPUS not in p.parents)
    others += re.sub(r"^## accuracy/<case>/\n.*?(?=^## |\Z)", "", README, flags=re.S | re.M)
    used = set(THREAD.findall(others))
    dups = {c.name: sorted(set(THREAD.findall((c / "SOURCE.md").read_text(encoding="utf-8"))) & used) for c in CASES}
    assert not {name: urls for name, urls in dups.items() if urls}


def test_scoring_of_hits_misses_and_false_findings():
    hit = CaseResult("a", "x", ["x", "y"])
    second = CaseResult("b", "x", ["y", "x"])
    silent_miss = CaseResult("c", "x", [])
    null_quiet = CaseResult("d", None, [])
    null_loud = CaseResult("e", None, ["y"])
    assert (hit.hit1, hit.hit3, hit.false_finding) == (True, True, False)
    assert (second.hit1, second.hit3, second.false_finding) == (False, True, True)
    assert (silent_miss.hit1, silent_miss.hit3, silent_miss.false_finding) == (False, False, False)
    assert (null_quiet.hit1, null_quiet.false_finding) == (False, False)
    assert null_loud.false_finding
    t = totals([hit, second, silent_miss, null_quiet, null_loud])
    assert (t.cases, t.covered, t.hit1, t.hit3, t.false_findings) == (5, 3, 1, 2, 2)
    assert "FALSE" in table([null_loud]) and "(none)" in table([silent_miss])


def test_accuracy_does_not_fall_below_the_measured_floor_and_no_new_finding_is_false():
    t, per_case = evaluate(CORPUS)
    report = table(per_case) + "\n" + summary(t)
    print("\n" + report)
    assert t.hit1 >= MIN_HIT1 and t.hit3 >= MIN_HIT3, report
    false = {c.case for c in per_case if c.false_finding}
    assert false <= KNOWN_FALSE, f"new false finding(s) {sorted(false - KNOWN_FALSE)}\n{report}"
