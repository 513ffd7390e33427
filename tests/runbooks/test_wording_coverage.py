"""Wordings of required symptoms shown by real fixture lines (issue 13; scripts/wording_coverage.py).

The floor is the count measured when the measure was built: it may only rise (raise it
when real positives are added; never lower it to pass). A wordings.yaml entry records
the searches for a wording no real log was found for; a stale entry (the wording is now
shown, or no longer a pattern of the runbook) fails, so the list stays true."""

from __future__ import annotations

import pytest

from scripts.wording_coverage import searched, totals, wordings
from tests.helpers import CASES

# Measured 2026-11-24 (python -m scripts.wording_coverage): 315 of 447 wordings in the
# runbook's own real positives.
MIN_OWN = 315

WORDINGS = wordings()
LISTED = sorted(p.parent.name for p in CASES.glob("*/wordings.yaml"))


def test_the_own_real_positives_show_at_least_the_measured_wordings():
    t = totals(WORDINGS)
    assert t["own"] >= MIN_OWN, t


def test_a_real_positive_line_counts_for_its_own_runbook():
    # zookeeper-slow-fsync/positive quotes a real leader and follower log with the fsync warning.
    fsync = [w for w in WORDINGS if w.runbook == "zookeeper-slow-fsync"]
    assert fsync and any(w.state == "own" and "zookeeper-slow-fsync/positive" in w.where for w in fsync)


@pytest.mark.parametrize("slug", LISTED)
def test_every_listed_search_names_an_unseen_wording_of_the_runbook(slug):
    mine = {(w.symptom, w.pattern): w for w in WORDINGS if w.runbook == slug}
    for entry in searched(slug):
        key = (entry["symptom"], entry["pattern"])
        assert key in mine, f"{slug}/wordings.yaml: {key} is not a required wording of {slug}"
        # A wording another runbook's real case shows may be listed too, with why none of those
        # lines (nor any found) can be this runbook's positive.
        assert mine[key].state == "unseen" or (mine[key].state == "seen" and entry.get("why_not_positive")), (
            f"{slug}/wordings.yaml: {key} is now shown by {mine[key].where}")
        searches = entry.get("searches") or []
        assert searches and all(s.get("corpus") and s.get("query") and s.get("found") for s in searches), key


def test_every_wording_without_an_own_real_positive_lists_the_searches_for_one():
    # Issue 13: a wording is kept without a real positive only where no real log exists, and
    # the fixtures say which searches found none (a new pattern needs a real line or searches).
    bare = [(w.runbook, w.symptom, w.pattern) for w in WORDINGS if w.state != "own" and not w.searched]
    assert bare == [], bare[:5]
