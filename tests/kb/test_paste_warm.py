"""The web process compiles the pasted-snippet matcher at start (kb/wsgi.py calls
paste_matcher_warm), so the first pasted snippet does not compile it."""

from __future__ import annotations

import pytest

from analyzers import signatures as sigmod
from kb.services.search import paste_matcher_warm, runbook_search_log
from tests.helpers import ROOT, SEED_BUNDLES

pytestmark = pytest.mark.django_db


def test_after_the_warm_up_a_pasted_log_needs_no_compile(db, monkeypatch):
    from kb.services.sync import runbook_sync

    runbook_sync(directory=ROOT / "runbooks")   # the real catalog, as the web serves it
    sigmod._CACHE.clear()
    assert paste_matcher_warm()

    def no_compiling(self, ids):
        raise AssertionError("the pasted snippet compiled a database the warm-up should have compiled")

    monkeypatch.setattr(sigmod.Matcher, "_compile", no_compiling)
    log = SEED_BUNDLES / "001-flink-checkpoint-hdfs-not-enough-replicas" / "flink-taskmanager" / "taskmanager.log"
    result = runbook_search_log(text=log.read_text(), team=None)
    assert "hdfs-close-not-enough-replicas" in [f["runbook"] for f in result["findings"]]


def test_without_runbooks_there_is_nothing_to_warm():
    assert paste_matcher_warm() is None
