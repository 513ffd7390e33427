"""Runbooks typed at load (analyzers/runbook_spec.py), checked on the real catalog."""

import pytest

from analyzers.runbook_spec import Fix, Step, as_specs, runbook_spec
from tests.helpers import catalog

RUNBOOKS = sorted(catalog().runbooks.values(), key=lambda rb: rb.slug)


@pytest.mark.parametrize("runbook", RUNBOOKS, ids=[rb.slug for rb in RUNBOOKS])
def test_the_loader_types_each_runbook_as_the_engine_would_from_its_meta(runbook):
    assert runbook.spec == runbook_spec(runbook.meta)
    assert [s.id for s in runbook.spec.symptoms] == [s["id"] for s in runbook.meta["symptoms"]]


@pytest.mark.parametrize("runbook", RUNBOOKS, ids=[rb.slug for rb in RUNBOOKS])
def test_fix_steps_give_back_the_runbooks_fixes_unchanged(runbook):
    # The result's fix_steps keep the file's shape (docs/contract.md §2).
    assert [f.as_json() for f in runbook.spec.fixes] == runbook.meta["fixes"]


def test_within_is_parsed_once_at_load_into_seconds():
    relations = [r for rb in RUNBOOKS for r in rb.spec.relations]
    timed = {r.within_s for r in relations if r.within_s is not None}
    assert timed and all(isinstance(s, float) and s > 0 for s in timed)
    spec = runbook_spec({"slug": "x", "title": "x", "symptoms": [{"id": "a", "role": "required"}],
                         "relations": [{"first": "a", "then": "a", "within": "5m"}, {"first": "a", "then": "a"}]})
    assert [r.within_s for r in spec.relations] == [300.0, None]


def test_a_fix_line_names_its_kind_title_and_commands():
    fix = Fix("Raise the limit", "mitigation", (Step("Edit the file"), Step("Restart", "systemctl restart x"),
                                                Step("Check", "x --version")))
    assert fix.line() == "mitigation: Raise the limit — systemctl restart x; x --version"
    assert Fix("Read the log", "diagnosis", (Step("Look"),)).line() == "diagnosis: Read the log"


def test_metas_and_specs_are_both_accepted_by_the_engine_entry():
    rb = RUNBOOKS[0]
    assert as_specs([rb.meta, rb.spec]) == [rb.spec, rb.spec]


def test_a_burst_is_typed_with_its_window_in_seconds():
    from analyzers.runbook_spec import Burst

    spec = runbook_spec({"slug": "x", "title": "x", "symptoms": [
        {"id": "a", "role": "required", "burst": {"count": 10, "within": "1m", "hosts": "same"}},
        {"id": "b", "role": "supporting", "burst": {"count": 2, "within": "30s"}}, {"id": "c", "role": "supporting"}]})
    assert [s.burst for s in spec.symptoms] == [Burst(10, 60.0, "1m", "same"), Burst(2, 30.0, "30s", "any"), None]
