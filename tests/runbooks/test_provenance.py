"""Provenance of the fixture cases (issue 13), checkable instead of guessed by grep.

Every tests/fixtures/cases/<slug>/<case>/SOURCE.md says in its first lines
`Provenance: real` (every line copied from the public sources the file names) or
`Provenance: synthetic` (some lines written from upstream templates); a synthetic case
must list the searches that found no real log (a `## Searches ...` section).
`Provenance: reproduced` (every line printed by an upstream release's own code, run by
a committed script under tests/fixtures/reproductions/, tests/runbooks/test_reproductions.py)
is for a runbook whose failure no public log shows: its SOURCE.md names the script and
has `## Searches` too. Every runbook needs a real positive* and a real near-miss* case;
the exceptions below are the current gaps with their reason, and may only shrink.
"""

import re

import pytest

from tests.helpers import CASES, PROVENANCE_LINES, ROOT, catalog, provenance

REPRODUCTION = re.compile(r"tests/fixtures/reproductions/[\w.-]+/reproduce\.py")
SEARCHES = re.compile(r"^## Searches\b", re.MULTILINE)

# Runbooks whose cases are being rewritten, skipped while that work is under way.
PENDING_REWRITE: frozenset[str] = frozenset()   # runbooks whose cases are being rewritten (none now)

# Runbooks whose positive is reproduced (upstream code run here), because no public log shows
# the failure; the searches are in the case's SOURCE.md. May only shrink, like the lists below.
REPRODUCED_POSITIVE: dict[str, str] = {
    "hive-acid-open-txn-limit": "no public log shows the metastore's hive.max.open.txns refusal (Flume, "
                                "NiFi and Storm reports describe the leak without it); Hive 2.3.10's "
                                "metastore prints it here (tests/fixtures/reproductions/)",
    "hdfs-rpc-request-exceeds-max-data-length": "no public NameNode log quotes the refusal (only descriptions "
                                                "and a screenshot); Hadoop 3.5.0's ipc.Server prints it here",
}

# Runbooks without a real positive* case, and why (searches in the synthetic case's SOURCE.md).
NO_REAL_POSITIVE = {
    "flink-filesink-too-many-buckets": "the decisive evidence is a heap histogram of StreamingFileSink "
                                       "Bucket objects; public reports describe it but paste none",
}
# Runbooks without a real near-miss* case, and why.
NO_REAL_NEAR_MISS: dict[str, str] = {
    "hdfs-block-missing": "the look-alike is a read whose retry rounds end in success; no public log "
                          "shows the retries and the later successful read together",
    "hdfs-pipeline-recovery-no-good-datanode": "the look-alike is a slow DataNode beside a pipeline "
                                               "recovery that succeeded; no public writer log shows both",
    "hdfs-slow-datanode-io": "the look-alike is sub-second slow-I/O warnings beside an xceiver limit; "
                             "no public DataNode log shows both",
}

SLUGS = sorted(p.name for p in CASES.iterdir() if p.is_dir())
CHECKED = [s for s in SLUGS if s not in PENDING_REWRITE]


def _cases(slug):
    return sorted(p for p in (CASES / slug).iterdir() if p.is_dir())




@pytest.mark.parametrize("slug", CHECKED)
def test_every_case_says_whether_its_lines_are_real(slug):
    unmarked = [c.name for c in _cases(slug) if provenance(c) is None]
    assert unmarked == [], f"{slug}: no `Provenance: real|synthetic|reproduced` in the first {PROVENANCE_LINES} lines"


@pytest.mark.parametrize("slug", CHECKED)
def test_a_synthetic_case_lists_the_searches_that_found_no_real_log(slug):
    bare = [c.name for c in _cases(slug) if provenance(c) in ("synthetic", "reproduced")
            and not SEARCHES.search((c / "SOURCE.md").read_text(encoding="utf-8"))]
    assert bare == [], f"{slug}: synthetic or reproduced case(s) without a `## Searches` section"


@pytest.mark.parametrize("slug", CHECKED)
def test_a_reproduced_case_names_the_script_that_printed_its_lines(slug):
    for case in _cases(slug):
        if provenance(case) == "reproduced":
            named = REPRODUCTION.findall((case / "SOURCE.md").read_text(encoding="utf-8"))
            assert named and all((ROOT / n).is_file() for n in named), f"{slug}/{case.name}: no existing script named"


@pytest.mark.parametrize("slug", CHECKED)
def test_every_runbook_has_a_real_positive_and_a_real_near_miss(slug):
    real = [c.name for c in _cases(slug) if provenance(c) == "real"]
    has_positive = any(n.startswith("positive") for n in real)
    reproduced = any(c.name.startswith("positive") and provenance(c) == "reproduced" for c in _cases(slug))
    assert (slug in REPRODUCED_POSITIVE) == (reproduced and not has_positive), (
        f"{slug}: reproduced positive only {reproduced and not has_positive}, listed {slug in REPRODUCED_POSITIVE}")
    has_positive = has_positive or slug in REPRODUCED_POSITIVE
    has_near_miss = any(n.startswith("near-miss") for n in real)
    # An exception that no longer holds must leave the list, so that it can only shrink.
    assert has_positive != (slug in NO_REAL_POSITIVE), (
        f"{slug}: real positive {has_positive}, listed in NO_REAL_POSITIVE {slug in NO_REAL_POSITIVE}")
    assert has_near_miss != (slug in NO_REAL_NEAR_MISS), (
        f"{slug}: real near-miss {has_near_miss}, listed in NO_REAL_NEAR_MISS {slug in NO_REAL_NEAR_MISS}")


def test_the_exception_lists_name_existing_runbooks():
    names = set(NO_REAL_POSITIVE) | set(NO_REAL_NEAR_MISS) | set(REPRODUCED_POSITIVE) | PENDING_REWRITE
    assert names <= set(SLUGS) and names <= set(catalog().runbooks)
    assert not (PENDING_REWRITE & (set(NO_REAL_POSITIVE) | set(NO_REAL_NEAR_MISS)))


def test_the_marker_check_fails_on_an_unmarked_or_misplaced_marker(tmp_path):
    case = tmp_path / "positive"
    case.mkdir()
    (case / "SOURCE.md").write_text("# x / positive\n\nReal lines.\n", encoding="utf-8")
    assert provenance(case) is None
    (case / "SOURCE.md").write_text("# x\n\n\n\nProvenance: real\n", encoding="utf-8")
    assert provenance(case) is None
    (case / "SOURCE.md").write_text("# x / positive\n\nProvenance: synthetic\n", encoding="utf-8")
    assert provenance(case) == "synthetic"
    (case / "SOURCE.md").write_text("# x / positive\n\nProvenance: reproduced\n", encoding="utf-8")
    assert provenance(case) == "reproduced"
