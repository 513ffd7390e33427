"""The bounded summaries the engine keeps instead of every hit (analyzers/occurrences.py)
give what the whole lists gave: the same relations, the same earliest hits in the same
order. Checked against the unbounded computation on many random hit sets (hosts, times
with ties, missing timestamps and hosts, windows), and on a real fixture bundle with the
summaries forced small."""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta

import pytest

from analyzers.diagnose import _relation_holds
from analyzers.model import Hit
from analyzers.occurrences import Earliest, Use, _seconds, sort_key
from analyzers.runbook_spec import Relation

HOSTS = ["dn1", "dn2", "nn1", None]
T0 = datetime(2024, 3, 1, 10, 0, 0)


def _hits(r: random.Random, symptom: str, n: int) -> list[Hit]:
    out = []
    for _ in range(n):
        when = None if r.random() < 0.1 else T0 + timedelta(seconds=r.choice([r.randrange(0, 3600), r.randrange(0, 60)]),
                                                               milliseconds=r.choice([0, r.randrange(1000)]))
        out.append(Hit(symptom=symptom, path=r.choice(["a.log", "b.log"]), line=r.randrange(1, 500), text="",
                       captures={}, timestamp=when.isoformat(sep=" ", timespec="milliseconds") if when else None,
                       level=None, host=r.choice(HOSTS), component="hdfs"))
    return out


@pytest.mark.parametrize("seed", range(300))
def test_a_relation_holds_on_the_summary_exactly_when_on_all_hits(seed):
    r = random.Random(seed)
    within = r.choice([None, 0.0, 1.0, 5.0, 30.0, 300.0])
    rel = Relation(first="a", then="b", within_s=within, order=r.choice(["after", "any"]),
                   hosts=r.choice(["any", "same", "other"]))
    firsts, thens = _hits(r, "a", r.randrange(1, 60)), _hits(r, "b", r.randrange(1, 60))
    # A use is bucketed by the narrowest window of the relations it is in (this one or a narrower one).
    window = None if within is None else r.choice([within, within / 2 if within else 0.0])
    summary = {}
    for sid, hits in (("a", firsts), ("b", thens)):
        use = Use(window)
        for h in hits:
            use.add(h)
        summary[sid] = use.relation_hits()
        assert len(summary[sid]) <= len(hits)

    whole = _relation_holds(rel, {"a": firsts, "b": thens}) is not None
    assert (_relation_holds(rel, summary) is not None) == whole


@pytest.mark.parametrize("seed", range(50))
def test_earliest_is_the_head_of_a_stable_sort(seed):
    r = random.Random(seed)
    hits = _hits(r, "a", r.randrange(1, 400))
    n = r.choice([1, 3, 10, 50])
    kept = Earliest(n)
    for h in hits:
        kept.add(h)
    assert [id(h) for h in kept.items] == [id(h) for h in sorted(hits, key=sort_key)[:n]]


def _retained(n: int) -> int:
    """Hit objects an Occurrences keeps after n hits of one symptom over one hour on 3 hosts."""
    import gc

    from analyzers.occurrences import Occurrences
    from analyzers.runbook_spec import as_specs
    from analyzers.runbooks import load_runbooks
    from tests.helpers import ROOT

    specs = as_specs([rb.meta for rb in load_runbooks(ROOT / "runbooks").runbooks.values()])
    sid = next(rel.first for rb in specs for rel in rb.relations if rel.within_s)
    occ = Occurrences(specs)
    for h in _hits(random.Random(n), sid, n):
        occ.add(h)
    assert occ.count(sid) == n
    return len({id(o) for o in gc.get_referents(*_containers(occ)) if isinstance(o, Hit)})


def _containers(occ) -> list:
    symptom = next(s for _, s in occ.items())
    lists = [symptom.in_order, symptom.earliest.items]
    for use in symptom.uses.values():
        lists += [use.earliest.items, use.relation_hits()]
    return lists


def test_what_is_kept_does_not_grow_with_the_hits():
    # Past the first few thousand (every host and time bucket met), 4x the hits keep no more.
    small, big = _retained(20_000), _retained(80_000)
    assert big <= small + 50
    assert big < 5_000


def _brute_force_burst(hits: list[Hit], within: int, hosts: str) -> int:
    """Most hits whose whole seconds lie at most `within` apart (on one host for 'same'), from all of them."""
    timed = [(h.host, h.when.tzinfo is None, math.floor(_seconds(h.when))) for h in hits if h.when is not None
             and (hosts != "same" or h.host is not None)]
    best = 0
    for host, naive, start in timed:
        best = max(best, sum(1 for h2, n2, s2 in timed if n2 == naive and start <= s2 <= start + within
                             and (hosts != "same" or h2 == host)))
    return best


@pytest.mark.parametrize("seed", range(200))
def test_a_burst_count_from_the_per_second_summary_is_the_count_over_all_hits(seed):
    from analyzers.runbook_spec import Burst

    r = random.Random(seed)
    hits = _hits(r, "a", r.randrange(1, 120))
    within = r.choice([1, 2, 5, 30, 60])
    burst = Burst(count=2, within_s=float(within), within=f"{within}s", hosts=r.choice(["any", "same"]))
    use = Use(None, bursty=True)
    for h in hits:
        use.add(h)
    window = use.burst(burst)
    assert window.count == _brute_force_burst(hits, within, burst.hosts)
    # Its evidence lies in the window it reports.
    for h in use.burst_hits(burst, 10) if window.count else []:
        assert window.start <= math.floor(_seconds(h.when)) <= window.end
        assert burst.hosts != "same" or h.host == window.host


def test_a_use_without_a_burst_keeps_no_per_second_counts():
    use = Use(None)
    for h in _hits(random.Random(1), "a", 50):
        use.add(h)
    assert use._per_second is None and use._second_samples == {}
