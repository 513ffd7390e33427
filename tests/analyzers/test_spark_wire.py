"""What a Spark task sends back (analyzers/spark/wire.py) decodes to the RangeResult it encoded."""

from __future__ import annotations

import pickle

from analyzers.engine import plan_byte_ranges, run_ranges_local
from analyzers.model import Limits
from analyzers.signatures import signatures_from_runbooks
from analyzers.spark import wire
from analyzers.staging import stage_logs
from tests.helpers import SEED_BUNDLES, bundle_cases, runbook_metas


def test_results_of_every_seed_bundle_survive_the_wire(tmp_path):
    signatures = signatures_from_runbooks(runbook_metas())
    staged = stage_logs([str(case) for case in bundle_cases()], str(tmp_path), Limits())
    results = run_ranges_local(plan_byte_ranges(staged.files), signatures, Limits().max_line_bytes)
    assert sum(len(r.hits) for r in results) > 50 and any(r.errors for r in results)
    assert any(h.header and h.header != h.text for r in results for h in r.hits), "stack-trace hits expected"
    for r in results:
        assert wire.decode(wire.encode(r)) == r
    # Each Spark task sends back its own result, so the baseline is one pickle per result
    # (pickling the whole list at once shares class and field names across ~1100 results,
    # which no task can do; that ratio sat at 0.49 and moved with the fixtures' file sizes).
    assert sum(len(wire.encode(r)) for r in results) < sum(len(pickle.dumps(r)) for r in results) / 2


def test_merge_takes_encoded_pieces():
    from analyzers.engine import ByteRange
    from analyzers.spark.runner import merge

    path = SEED_BUNDLES / "000-flink-hdfs-openforwrite-after-soft-lockup"
    log = next(p for p in sorted(path.rglob("*.log")) if p.stat().st_size > 2000)
    signatures = signatures_from_runbooks(runbook_metas())
    whole = run_ranges_local([ByteRange("a.log", str(log), 0, log.stat().st_size)], signatures, 1 << 20)[0]
    assert merge([ByteRange("a.log", str(log), 0, log.stat().st_size)], [(0, 0, wire.encode(whole))]) == [whole]
