"""Search over the shipped catalog (runbooks/): words ranked by relevance with the
matching part shown, and a pasted excerpt whose symptoms are all shared ranked
into candidates by the engine's own ranker (analyzers.considered).

The excerpt is the RegionServer log of seed bundle 003
(tests/fixtures/seed-bundles/003-hbase-rs-abort-pipeline-recovery/c1-hd-dn18/,
lines quoted verbatim from the public write-up; tests/fixtures/README.md)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from kb.services.search import runbook_search_log, runbook_search_words, word_search
from tests.helpers import RUNBOOKS_DIR, SEED_BUNDLES

pytestmark = pytest.mark.django_db

RS_EXCERPT = SEED_BUNDLES / "003-hbase-rs-abort-pipeline-recovery" / "c1-hd-dn18" / "hbase-regionserver.log"
PIPELINE = "hdfs-pipeline-recovery-no-good-datanode"


@pytest.fixture(scope="module")
def _catalog_once(django_db_setup, django_db_blocker):
    """The shipped catalog synced once for the module (a sync takes seconds), in
    a transaction rolled back at the end; each test's own transaction nests in it."""
    from django.db import transaction

    from kb.services.sync import runbook_sync

    with django_db_blocker.unblock():
        outer = transaction.atomic()
        outer.__enter__()
        runbook_sync(directory=RUNBOOKS_DIR)
        yield
        transaction.set_rollback(True)
        outer.__exit__(None, None, None)


@pytest.fixture
def catalog(_catalog_once, db):
    return None


def _slugs(hits) -> list[str]:
    return [h.runbook.slug for h in hits]


def test_the_pasted_regionserver_excerpt_of_seed_003_finds_the_pipeline_runbook_first(client_alice, catalog):
    response = client_alice.post(reverse("search"), {"log": RS_EXCERPT.read_text(encoding="utf-8")})

    result = response.context["log_result"]
    # All five symptoms are shared with other causes: no finding on their own ...
    assert result["findings"] == []
    assert len(result["symptoms"]) == 5
    # ... but every one of them is a symptom of the pipeline runbook, and no other
    # runbook shares more than one.
    first, *rest = result["candidates"]
    assert first["runbook"] == PIPELINE
    assert len(first["found"]) == 5
    assert [m["symptom"] for m in first["missing"]] == ["hdfs-pipeline-datanode-replacement-failed"]
    assert rest and all(len(c["found"]) == 1 and c["score"] < first["score"] for c in rest)
    content = response.content.decode()
    assert "Candidates, ranked by shared evidence" in content
    assert "No runbook is supported" not in content
    candidates = content[content.index('id="candidates"'):]
    link = reverse("runbook_detail", args=[PIPELINE])
    assert candidates.index(link) < min(
        candidates.index(reverse("runbook_detail", args=[c["runbook"]])) for c in rest)
    assert ("Would be confirmed by: Pipeline recovery could not add a working replacement DataNode "
            "<code>hdfs-pipeline-datanode-replacement-failed</code>") in content


def test_a_candidate_is_ruled_out_by_an_excluding_symptom_seen(catalog):
    # The pipeline runbook's near-miss: slow DataNode disk writes and a recovery,
    # no replacement failure (tests/fixtures/cases/.../near-miss, SOURCE.md). The
    # slow-disk runbook is the finding; the pipeline runbook stays a candidate.
    case = RUNBOOKS_DIR.parent / "tests/fixtures/cases" / PIPELINE / "near-miss"
    text = "".join(p.read_text(encoding="utf-8") for p in sorted(case.glob("*/*.log")))

    result = runbook_search_log(text=text, team=None)

    assert [f["runbook"] for f in result["findings"]][:1] == ["hdfs-slow-datanode-io"]
    # With a finding the engine ranks no candidates; the rest of what the excerpt
    # touched is its ruled_out, listed as the other candidates.
    assert result["candidates"] == []
    slugs = [c["runbook"] for c in result["others"]]
    assert "hdfs-slow-datanode-io" not in slugs  # a finding is not also a candidate
    assert PIPELINE in slugs
    assert next(c for c in result["others"] if c["runbook"] == PIPELINE)["kind"] == "missing-required"


def test_words_rank_the_runbook_about_them_first_and_mark_them(client_alice, catalog):
    response = client_alice.get(reverse("search"), {"q": "pipeline datanode"})

    hits = response.context["hits"]
    assert _slugs(hits)[0] == PIPELINE
    assert hits[0].matched_words == 2 and "title" in hits[0].fields
    content = response.content.decode()
    assert "<mark>DataNode</mark>" in content and "<mark>pipeline</mark>" in content


def test_a_title_match_ranks_above_body_mentions(catalog):
    hits = runbook_search_words(q="lockup", team=None)

    assert _slugs(hits)[0] == "kernel-soft-lockup-stalls-jvm"
    body_only = [h for h in hits if h.fields == ["body"]]
    assert body_only and all(h.score < hits[0].score for h in body_only)


def test_a_word_is_stemmed(catalog):
    assert _slugs(runbook_search_words(q="lockups", team=None))[0] == "kernel-soft-lockup-stalls-jvm"


def test_a_common_word_does_not_pull_in_the_whole_catalog(catalog):
    from kb.models import Runbook

    found = word_search(q="the FailedLogCloseException", team=None)

    assert found.ignored_words == ["the"]
    assert _slugs(found.hits) == [PIPELINE]
    assert Runbook.objects.count() > 100


def test_the_snippet_shows_the_matching_part_escaped(catalog):
    (hit,) = runbook_search_words(q="FailedLogCloseException", team=None)

    assert hit.snippet_field == "body"
    assert "<mark>FailedLogCloseException</mark>: &lt;wal&gt;, unflushedEntries=61" in hit.snippet_html


def test_query_syntax_in_the_words_is_searched_as_text(client_alice, catalog):
    response = client_alice.get(reverse("search"), {"q": 'NEAR( title:"x * AND OR -'})

    assert response.status_code == 200


def test_a_candidate_with_an_excluding_symptom_seen_is_ruled_out_and_ranked_last(client_alice, catalog):
    # A real Kafka broker log (tests/fixtures/cases/disk-full/positive-kafka-native-compose,
    # SOURCE.md): the log dir failed because the disk is full, which kafka-log-dir-failure
    # lists as excluding (another cause).
    log = (RUNBOOKS_DIR.parent / "tests/fixtures/cases/disk-full/positive-kafka-native-compose"
           / "docker-compose.log").read_text(encoding="utf-8")

    response = client_alice.post(reverse("search"), {"log": log})

    result = response.context["log_result"]
    assert [f["runbook"] for f in result["findings"]] == ["disk-full"]
    others = result["others"]
    ruled_out = next(c for c in others if c["runbook"] == "kafka-log-dir-failure")
    assert ruled_out["kind"] == "excluded" and ruled_out["reason"].startswith("excluded by disk-space-exhausted (")
    assert others.index(ruled_out) >= sum(c["kind"] != "excluded" for c in others)
    content = response.content.decode()
    assert "Other candidates" in content
    assert "Ruled out: excluded by disk-space-exhausted (" in content


def test_only_common_words_are_searched_but_folded_with_a_hint(client_alice, catalog):
    response = client_alice.get(reverse("search"), {"q": "the"})

    assert response.context["too_common_words"] == ["the"]
    assert response.context["hits"] and not response.context["strong_hits"]
    assert "in most runbooks, so the matches below are hardly ranked" in response.content.decode()
