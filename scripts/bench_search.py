"""Benchmark: search over the shipped catalog, printed (make bench).

Syncs runbooks/ into a scratch SQLite database (KB_VAR_DIR in a temporary
directory), then times the word-search index build (kb.services.search_index),
word queries on a warm index, and the match of seed 003's RegionServer excerpt
(tests/fixtures/seed-bundles/003-*/c1-hd-dn18/) with its candidate ranking.
Target: a word query within 50 ms, the index build within 1 s.

    python -m scripts.bench_search [--runs 20]
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXCERPT = (ROOT / "tests" / "fixtures" / "seed-bundles" / "003-hbase-rs-abort-pipeline-recovery"
           / "c1-hd-dn18" / "hbase-regionserver.log")
QUERIES = ["pipeline datanode", "soft lockup", "dfs.datanode.du.reserved", "the FailedLogCloseException",
           "zookeeper session expired", "checkpoint expired before completing"]
TARGET_QUERY_MS, TARGET_BUILD_MS = 50.0, 1000.0


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="kb-bench-search-")
    os.environ.update({"KB_VAR_DIR": scratch, "DJANGO_SETTINGS_MODULE": "kb.settings"})
    os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(40))
    import django

    django.setup()
    from django.core.management import call_command

    from kb.services.search import runbook_search_log, word_search
    from kb.services.search_index import RUNBOOK_INDEX, RunbookIndex

    call_command("migrate", verbosity=0)
    call_command("sync_runbooks", stdout=open(os.devnull, "w"))

    builds = []
    for _ in range(5):
        start = time.perf_counter()
        RunbookIndex()._build(None).close()
        builds.append(time.perf_counter() - start)
    word_search(q="warm", team=None)  # the shared catalog's index, built once
    timings = {}
    for q in QUERIES:
        runs = []
        for _ in range(args.runs):
            start = time.perf_counter()
            found = word_search(q=q, team=None)
            runs.append(time.perf_counter() - start)
        timings[q] = (statistics.median(runs), found.hits[0].runbook.slug if found.hits else "-", len(found.hits))
    text = EXCERPT.read_text(encoding="utf-8")
    start = time.perf_counter()
    result = runbook_search_log(text=text, team=None)
    log_seconds = time.perf_counter() - start

    (count,) = RUNBOOK_INDEX._connection(None).execute("SELECT count(*) FROM idx").fetchone()
    build = statistics.median(builds)
    print(f"search index: {count} runbooks built in {_ms(build)} (median of 5; target {TARGET_BUILD_MS:.0f} ms)"
          f" {'OK' if build * 1000 <= TARGET_BUILD_MS else 'SLOW'}")
    for q, (median, first, n) in timings.items():
        print(f"word query {q!r}: {_ms(median)} median of {args.runs}, {n} hits, first {first}"
              f" {'OK' if median * 1000 <= TARGET_QUERY_MS else 'SLOW'}")
    top = result["candidates"][0]["runbook"] if result["candidates"] else "-"
    print(f"pasted excerpt (seed 003 RegionServer, {len(text)} bytes): {_ms(log_seconds)}, "
          f"{len(result['findings'])} findings, first candidate {top}")


if __name__ == "__main__":
    main()
