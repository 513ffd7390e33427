"""Occurrences of symptoms, summarised as they stream in: memory bounded by the
number of symptoms (and hosts and time span), not by the bundle's size.

The engine used to hold every Hit of every symptom (95,000 for the bench's 1 GB
bundle: the driver's peak RSS grew by 126 MiB from 100 MB to 1 GB). What the
diagnosis, the considered list, the symptom summary and the timeline read of
them is kept here instead, exactly, so findings do not change:

- counts, per symptom and per `where` a runbook puts on it (a Use);
- the earliest hits by (timestamp, path, line), in the order a stable sort of
  all of them gives: 10 per finding's symptom are evidence, 200 are the
  considered list's relation sample, 500 over all symptoms are the timeline;
- the first MAX_IN_ORDER hits in bundle order (the lines leads skip);
- for relations, per host and per time bucket as wide as the use's narrowest
  `within`, the earliest and the latest hit, and one hit without a timestamp.
  A relation holds on these exactly when it holds on all hits: any two hits of
  one bucket are at most `within` apart, so for a hit of the other side the
  bucket's nearest member within the window is its earliest or its latest, or
  the hit lies between them and both are in the window (order 'after' likewise:
  the latest member not after it, or the earliest not before it). Without a
  window one bucket per host keeps the earliest and latest; host conditions
  compare hosts, kept apart.
- for a use some runbook puts a `burst` on, its count per whole second (and host),
  and the earliest hit of each of the first MAX_BURST_SAMPLE_SECONDS seconds: a
  burst's densest window and its evidence (analyzers/burst.py).
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any, Iterable, Iterator

from analyzers.burst import Densest, SecondKey, densest
from analyzers.conditions import all_hold
from analyzers.model import Hit

KEEP_EARLIEST = 500     # per symptom, >= engine.MAX_TIMELINE
KEEP_USE_EARLIEST = 200  # per use, >= diagnose.MAX_EVIDENCE_PER_SYMPTOM and considered.MAX_RELATION_HITS
MAX_IN_ORDER = 2000     # = engine.MAX_EXPLAINED_PER_SYMPTOM
MAX_BURST_SAMPLE_SECONDS = 2000   # per use: seconds whose earliest hit can be a burst's evidence


_EPOCH = datetime(1970, 1, 1)


def _seconds(when: datetime) -> float:
    """Seconds on the time line relation deltas use (naive ones without the local zone's DST)."""
    return (when - _EPOCH).total_seconds() if when.tzinfo is None else when.timestamp()


def second_key(hit: Hit) -> SecondKey:
    """The whole second a timed hit is counted under for bursts (analyzers/burst.py)."""
    return (hit.host, hit.when.tzinfo is None, math.floor(_seconds(hit.when)))


def sort_key(hit: Hit) -> tuple:
    return (hit.timestamp or "9999", hit.path, hit.line)


class Earliest:
    """The first `n` of a stable sort of everything added, by sort_key, in bounded memory."""

    def __init__(self, n: int):
        self.n = n
        self._items: list[Hit] = []
        self._sorted = True

    def add(self, hit: Hit) -> None:
        self._items.append(hit)
        self._sorted = False
        if len(self._items) >= 2 * self.n:
            self._trim()

    def _trim(self) -> None:
        if not self._sorted:
            self._items.sort(key=sort_key)   # stable: kept items were added before new ones
            del self._items[self.n:]
            self._sorted = True

    @property
    def items(self) -> list[Hit]:
        self._trim()
        return self._items


class Use:
    """One `where` on one symptom: its hits as the runbooks that put it see them."""

    def __init__(self, window: float | None, bursty: bool = False):
        self.count = 0
        self.earliest = Earliest(KEEP_USE_EARLIEST)
        self._window = window
        # (host, naive?, bucket) -> [earliest, latest]; naive and aware times never compared
        self._timed: dict[tuple[str | None, bool, float], list[Hit]] = {}
        self._untimed: dict[str | None, Hit] = {}
        # Only for a use a runbook puts a burst on: the counts cost a slot per distinct second.
        self._per_second: dict[SecondKey, int] | None = {} if bursty else None
        self._second_samples: dict[SecondKey, Hit] = {}
        self._densest: dict[Any, Densest] = {}

    def add(self, hit: Hit) -> None:
        self.count += 1
        self.earliest.add(hit)
        if hit.when is None:
            self._untimed.setdefault(hit.host, hit)
            return
        seconds = _seconds(hit.when)
        if self._per_second is not None:
            self._count_second(hit, second_key(hit))
        bucket = (0 if self._window is None else seconds if self._window <= 0
                  else math.floor(seconds / self._window))
        key = (hit.host, hit.when.tzinfo is None, bucket)
        ends = self._timed.get(key)
        if ends is None:
            self._timed[key] = [hit, hit]
        elif hit.when < ends[0].when:
            ends[0] = hit
        elif hit.when > ends[1].when:
            ends[1] = hit

    def _count_second(self, hit: Hit, key: SecondKey) -> None:
        self._per_second[key] = self._per_second.get(key, 0) + 1
        self._densest.clear()
        kept = self._second_samples.get(key)
        if kept is None:
            if len(self._second_samples) < MAX_BURST_SAMPLE_SECONDS:
                self._second_samples[key] = hit
        elif sort_key(hit) < sort_key(kept):
            self._second_samples[key] = hit

    def burst(self, burst) -> Densest:
        """The densest window of `burst.within` (runbook_spec.Burst) over this use's hits."""
        found = self._densest.get(burst)
        if found is None:
            found = self._densest[burst] = densest(self._per_second or {}, burst)
        return found

    def burst_hits(self, burst, n: int) -> list[Hit]:
        """The first n hits of the densest window that are still at hand (the earliest hits and
        one per sampled second); the earliest hits when none of them is in it."""
        window = self.burst(burst)
        pool = {id(h): h for h in (*self.earliest.items, *self._second_samples.values())}
        inside = [h for h in pool.values() if h.when is not None and window.holds(second_key(h), burst.hosts)]
        return sorted(inside, key=sort_key)[:n] or self.earliest.items[:n]

    def relation_hits(self) -> list[Hit]:
        """Hits on which a relation holds exactly when it holds on all of them (module doc)."""
        out = {id(h): h for ends in self._timed.values() for h in ends}
        out.update((id(h), h) for h in self._untimed.values())
        return sorted(out.values(), key=sort_key)


class Symptom:
    """Every hit of one symptom, whatever the `where`."""

    def __init__(self, uses: dict[Any, Use]):
        self.count = 0
        self.hosts: set[str] = set()
        self.first_seen: str | None = None
        self.last_seen: str | None = None
        self.earliest = Earliest(KEEP_EARLIEST)
        self.in_order: list[Hit] = []
        self.uses = uses            # where -> Use

    def add(self, hit: Hit) -> None:
        self.count += 1
        if hit.host:
            self.hosts.add(hit.host)
        if hit.timestamp:
            if self.first_seen is None or hit.timestamp < self.first_seen:
                self.first_seen = hit.timestamp
            if self.last_seen is None or hit.timestamp > self.last_seen:
                self.last_seen = hit.timestamp
        self.earliest.add(hit)
        if len(self.in_order) < MAX_IN_ORDER:
            self.in_order.append(hit)
        for where, use in self.uses.items():
            if all_hold(where, hit.captures, hit.component):
                use.add(hit)


class Occurrences:
    """symptom id -> Symptom, in the order symptoms were first seen (as a dict of lists was)."""

    def __init__(self, runbooks: Iterable):
        self._windows: dict[str, dict[Any, float | None]] = {}
        self._bursty: set[tuple[str, Any]] = set()   # (symptom, where) a runbook puts a burst on
        for rb in runbooks:
            wheres = {s.id: s.where for s in rb.symptoms}
            for s in rb.symptoms:
                self._windows.setdefault(s.id, {}).setdefault(s.where, None)
                if s.burst is not None:
                    self._bursty.add((s.id, s.where))
            for rel in rb.relations:
                for sid in (rel.first, rel.then):
                    if sid in wheres and rel.within_s is not None:
                        old = self._windows.setdefault(sid, {}).get(wheres[sid])
                        self._windows[sid][wheres[sid]] = rel.within_s if old is None else min(old, rel.within_s)
        self._symptoms: dict[str, Symptom] = {}

    def add(self, hit: Hit) -> None:
        symptom = self._symptoms.get(hit.symptom)
        if symptom is None:
            uses = {where: Use(window, (hit.symptom, where) in self._bursty)
                    for where, window in self._windows.get(hit.symptom, {}).items()}
            symptom = self._symptoms[hit.symptom] = Symptom(uses)
        symptom.add(hit)

    def get(self, sid: str) -> Symptom | None:
        return self._symptoms.get(sid)

    def count(self, sid: str) -> int:
        s = self._symptoms.get(sid)
        return s.count if s else 0

    def use(self, sid: str, where) -> Use | None:
        """The hits of `sid` that meet `where`, or None when there are none."""
        s = self._symptoms.get(sid)
        use = s.uses.get(where) if s else None
        return use if use is not None and use.count else None

    def items(self) -> Iterator[tuple[str, Symptom]]:
        return iter(self._symptoms.items())

    def earliest(self, n: int) -> list[Hit]:
        """The first n hits of all symptoms by sort_key, as a stable sort of all of them in symptom order."""
        merged = [h for s in self._symptoms.values() for h in s.earliest.items]
        merged.sort(key=sort_key)
        return merged[:n]


def as_occurrences(occurrences: Occurrences | dict[str, list[Hit]], runbooks) -> Occurrences:
    """Occurrences, from a dict of hit lists too (callers that have the hits at hand, tests)."""
    if isinstance(occurrences, Occurrences):
        return occurrences
    out = Occurrences(runbooks)
    for hits in occurrences.values():
        for hit in hits:
            out.add(hit)
    return out
