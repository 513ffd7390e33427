"""`leads_to` validation: per file (keys and values) and across files (slugs, cycles); and a symptom's `look_in`."""

import pytest

from analyzers.runbook_links import link_problems
from analyzers.runbooks import RunbookError, parse_runbook
from tests.helpers import catalog
from tests.runbooks.test_validator import LIBRARY, _broken, _text

GOOD = {"slug": "jvm-long-gc-pause", "as": "cause", "why": "the pause fills the disk", "hosts": "same", "within": "10m"}


@pytest.mark.parametrize("change,problem", [
    ({}, None),
    ({"as": "reason"}, "as must be one of ('cause', 'trigger')"),
    ({"slug": "disk-full"}, "a runbook cannot lead to itself"),
    ({"hosts": "near"}, "hosts must be same, other or any"),
    ({"within": "soon"}, "bad duration 'soon'"),
    ({"why": ""}, "leads_to[0].why: must be a non-empty string"),
    ({"order": "after"}, "unknown key(s) ['order']"),
])
def test_a_link_problem_is_named(change, problem):
    meta = _broken("chain", ["nn-time-wait", "disk-full-write"])
    meta["leads_to"] = [{**GOOD, **change}]
    if problem is None:
        parse_runbook(_text(meta), "rb.md", library=LIBRARY)
        return
    with pytest.raises(RunbookError) as excinfo:
        parse_runbook(_text(meta), "rb.md", library=LIBRARY)
    assert problem in str(excinfo.value)


def _metas(**links):
    return {slug: {"leads_to": ls} for slug, ls in links.items()}


def test_a_link_to_a_runbook_that_does_not_exist_is_refused_with_its_file():
    problems = link_problems(_metas(a=[{"slug": "nope", "as": "cause"}]), {"a": "runbooks/a.md"})
    assert problems == ["runbooks/a.md: leads_to names unknown runbook 'nope'"]


@pytest.mark.parametrize("links,cycle", [
    ({"a": [{"slug": "b", "as": "cause"}], "b": [{"slug": "a", "as": "cause"}]}, "a > b > a"),
    # a causes b, b causes c, but a only triggers c's defect: c would rank above a and below it.
    ({"a": [{"slug": "b", "as": "cause"}, {"slug": "c", "as": "trigger"}], "b": [{"slug": "c", "as": "cause"}],
      "c": []}, "a > b > c > a"),
])
def test_links_that_rank_a_runbook_above_itself_are_refused(links, cycle):
    (problem,) = link_problems(_metas(**links), {})
    assert problem.endswith(f"leads_to ranks runbooks in a cycle: {cycle}")


def test_the_shipped_catalog_links_only_existing_runbooks_without_cycles():
    cat = catalog()
    metas = {slug: rb.meta for slug, rb in cat.runbooks.items()}
    assert link_problems(metas, {}) == []
    assert sum(len(m.get("leads_to") or []) for m in metas.values()) >= 8


@pytest.mark.parametrize("look_in,problem", [
    ("the DataNode log: grep 'No space left' hadoop-*-datanode-*.log", None),
    ("", "look_in: must be a non-empty string"),
    ("x" * 301, "look_in: longer than 300 characters"),
])
def test_a_symptom_says_where_to_look_in_one_line(look_in, problem):
    from analyzers.runbooks import dump_symptom, parse_symptom

    definition = {**LIBRARY["disk-full-write"], "look_in": look_in}
    if problem is None:
        assert parse_symptom(dump_symptom(definition), "s.yaml")["look_in"] == look_in  # kept on write-back
        return
    with pytest.raises(RunbookError, match=problem):
        parse_symptom(dump_symptom(definition), "s.yaml")
