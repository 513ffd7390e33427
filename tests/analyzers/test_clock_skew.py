"""Clock skew and "the earliest failure across hosts" (issue 12).

Seed bundle 003 (HBase RegionServer abort after HDFS pipeline recovery; provenance in
tests/fixtures/README.md) is the repository's bundle whose hosts name one object in common:
block blk_1124743217, reported by DataNodes dn2 and dn3 at 03:44:22 and by the RegionServer's
DFS client on c1-hd-dn18 at 03:44:29. The fixture stays verbatim; the tests shift one host's
timestamps in a copy, as a host whose clock is off would have written them.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path

from analyzers.clock_skew import MIN_IDS, SUSPECT_S, estimate, observe
from analyzers.engine import analyze_paths
from tests.helpers import SEED_BUNDLES, bundle_copy

SEED = SEED_BUNDLES / "003-hbase-rs-abort-pipeline-recovery"
_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})", re.M)


def _shift(path: Path, delta: timedelta) -> None:
    """Every record header of the file moved by delta (what a clock off by delta writes)."""
    def moved(m: re.Match) -> str:
        when = datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S") + delta
        return f"{when:%Y-%m-%d %H:%M:%S},{m.group(2)}"
    path.write_text(_STAMP.sub(moved, path.read_text()))


def _leads(bundle: Path) -> list[dict]:
    return analyze_paths([str(bundle)], [])["leads"]


def _earliest(leads: list[dict]) -> dict:
    (lead,) = [lead for lead in leads if lead["reason"].startswith("earliest failure in the bundle")]
    return lead


def test_hosts_that_agree_keep_their_times_and_the_datanode_is_earliest(tmp_path):
    lead = _earliest(_leads(bundle_copy(SEED, tmp_path)))
    assert (lead["host"], lead["timestamp"]) == ("dn3", "2016-08-06T03:44:22.981")
    assert "clock" not in lead["reason"]      # 7 s between DataNode and client: the event's own delay


def test_a_host_whose_clock_is_hours_behind_makes_earliest_uncertain(tmp_path):
    bundle = bundle_copy(SEED, tmp_path)
    _shift(bundle / "c1-hd-dn18" / "hbase-regionserver.log", timedelta(hours=-2))
    leads = _leads(bundle)
    lead = _earliest(leads)
    # By its own clock the RegionServer now fails first; one block id is no proof of a skew, so
    # its time stays as logged and the reason says the order rests on clocks that disagree.
    assert (lead["host"], lead["timestamp"]) == ("c1-hd-dn18", "2016-08-06T01:44:29.320")
    assert "own clocks, which may differ: blk_1124743217 logged on c1-hd-dn18 and dn2 1h59m54s apart" \
        in lead["reason"]
    dn3 = [x for x in leads if x["host"] == "dn3"]
    assert dn3 and dn3[0]["timestamp"] == "2016-08-06T03:44:22.981"


def test_a_shift_within_the_events_own_delay_is_no_doubt(tmp_path):
    bundle = bundle_copy(SEED, tmp_path)
    _shift(bundle / "c1-hd-dn18" / "hbase-regionserver.log", timedelta(seconds=-(SUSPECT_S - 60)))
    lead = _earliest(_leads(bundle))
    assert lead["host"] == "c1-hd-dn18" and "clock" not in lead["reason"]


def test_observations_are_the_first_time_each_host_names_an_id():
    # The lines of seed 003 that name the block, with their hosts (verbatim headers).
    lines = {host: (p.read_text().splitlines()[0]) for host, p in
             ((d.name, next(d.iterdir())) for d in SEED.iterdir() if d.is_dir() and d.name != "dn-src")}
    obs = observe((host, _STAMP.match(text).group(1).replace(" ", "T"), text) for host, text in lines.items())
    assert {h: sorted(ids) for h, ids in obs.items()} == {h: ["blk_1124743217"] for h in lines}
    skew = estimate(obs)
    assert skew.offsets == {} and skew.doubts == []


def test_several_ids_at_one_distance_correct_a_clock_and_disagreeing_ids_do_not():
    # Arithmetic of the estimator (no log format involved): ids of blocks, containers, attempts.
    base = datetime(2016, 8, 6, 3, 44, 22)
    ids = ["blk_1124743217", "container_e05_1526900000000_0042_01_000007", "attempt_1458127593000_0001_m_000003_0"]
    assert len(ids) >= MIN_IDS
    on_a = {x: base + timedelta(seconds=40 * i) for i, x in enumerate(ids)}
    on_b = {x: t - timedelta(hours=2, seconds=0.3 * i) for i, (x, t) in enumerate(on_a.items())}
    skew = estimate({"a": on_a, "b": on_b, "c": {ids[0]: base + timedelta(seconds=2)}})
    assert set(skew.offsets) == {"b"} and abs(skew.offsets["b"] - 7200.3) < 0.01
    assert skew.corrected("b", "2016-08-06T01:44:22.000") == "2016-08-06T03:44:22.300"
    assert skew.corrected("a", "2016-08-06T03:44:22.000") == "2016-08-06T03:44:22.000"
    assert "b +2h00m00s (3 ids logged on b and a that far apart)" in skew.note()
    on_b[ids[2]] -= timedelta(minutes=30)        # one id disagrees: no correction, a doubt
    skew = estimate({"a": on_a, "b": on_b})
    assert skew.offsets == {} and skew.doubts and "(3 ids, not one distance)" in skew.doubts[0]
