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
    assert sum(len(list(r.all_hits())) for r in results) > 50 and any(r.errors for r in results)
    assert any(h.header and h.header != h.text for r in results for h in r.all_hits()), "stack-trace hits expected"
    for r in results:
        decoded = wire.decode(wire.encode(r))
        assert decoded == r
        assert decoded.__dict__["_errors"] is None   # the sample stays compressed after reading it
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


def test_many_hits_stay_packed_until_read_and_merge_in_order(tmp_path):
    """A range with more than PACK_MIN_HITS hits (a seed log's real lines, repeated) decodes
    with its hits packed; the pieces of a range, encoded, merge to one scan of it."""
    from analyzers.engine import ByteRange
    from analyzers.scan import PACK_MIN_HITS
    from analyzers.spark.runner import merge, split

    source = SEED_BUNDLES / "000-flink-hdfs-openforwrite-after-soft-lockup"
    log = next(p for p in sorted(source.rglob("*.log")) if p.stat().st_size > 2000)
    big = tmp_path / "big.log"
    big.write_bytes(log.read_bytes() * 400)
    signatures = signatures_from_runbooks(runbook_metas())
    task = ByteRange("big.log", str(big), 0, big.stat().st_size)
    (whole,) = run_ranges_local([task], signatures, 1 << 20)
    hits = list(whole.all_hits())
    assert len(hits) > 4 * PACK_MIN_HITS and whole.hits == [] and whole.packed   # the local engine packs too

    decoded = wire.decode(wire.encode(whole))
    assert decoded.hits == [] and len(decoded.packed) == len(whole.packed) > 1   # chunks (PACK_CHUNK_HITS)
    assert decoded == whole and list(decoded.all_hits()) == hits

    pieces = split([task], task.end // 3 + 1)
    scanned = [(i, k, wire.encode(run_ranges_local([ByteRange(p, d, s, e)], signatures, 1 << 20)[0]))
               for i, k, p, d, s, e in pieces]
    (merged,) = merge([task], scanned)
    # (the error and lead samples merge as merge_pieces says; the hits exactly)
    assert len(merged.packed) == 3 and list(merged.all_hits()) == hits and merged.lines == whole.lines
