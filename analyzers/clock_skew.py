"""Hosts' clocks differ: how far, when the bundle itself says so, before leads call one failure
"the earliest across hosts".

    skew = estimate(observe([(host, timestamp, text), ...]))
    skew.corrected(host, timestamp) -> the timestamp on the bundle's common clock
    skew.offsets   {host: seconds added to its times}      (only on strong evidence)
    skew.doubts    ["blk_1124743217 logged on c1-hd-dn18 and dn3 1h59m53s apart", ...]

The pairs come from the bundle: an object id (an HDFS block, a YARN application, attempt or
container) that error-like records of two hosts both name. The first time each host names it
is when each host saw the same event, give or take the event's own delay (a client times out
60 s after the DataNode failed). One id therefore proves nothing about clocks; what does is
several independent ids that all put the same distance between two hosts, to within a second,
and a distance no timeout explains (MIN_SKEW_S or more, at most MAX_SKEW_S: a time zone, a
clock that was never synced). Then the host's times are corrected. A single id far apart, or
ids that disagree, only cast doubt: "earliest" is then said to be by the hosts' own clocks.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Iterable

from analyzers import timestamps

# Ids that name one object across processes: HDFS blocks, YARN applications, attempts, containers.
_ID = re.compile(r"\b(?:blk_-?\d+|container_(?:e\d+_)?\d+_\d+_\d+_\d+|appattempt_\d+_\d+_\d+"
                 r"|application_\d+_\d+|attempt_\d+_\d+_[mr]_\d+_\d+)")
# Past the delays that separate two hosts' reports of one event (socket timeouts 60 s, ZooKeeper
# sessions 40-90 s, Flink heartbeats 50 s, HDFS pipeline recovery): a distance above this is a doubt.
SUSPECT_S = 300
MIN_SKEW_S = SUSPECT_S       # a correction is never smaller than what a doubt is
MAX_SKEW_S = 14 * 3600       # the widest time-zone difference; further apart is another incident
MIN_IDS = 3                  # independent ids that must agree before a host's clock is corrected
MAX_SPREAD_S = 1.0           # ... to within this many seconds of each other
_MAX_IDS_PER_HOST = 2000


def _parse(stamp: str | None) -> datetime | None:
    if not stamp or not stamp[:4].isdigit():
        return None
    try:
        return datetime.fromisoformat(stamp[:23])
    except ValueError:
        return None


# Every id _ID finds contains one of these: a substring test is far cheaper than the regex on
# the thousands of lines that name none (the leads' share of an analysis is capped, issue 12).
_ID_MARKS = ("blk_", "container_", "attempt_", "application_")


def _may_name_an_id(text: str) -> bool:
    return any(mark in text for mark in _ID_MARKS)


def observe(items: Iterable[tuple[str | None, str | None, str]]) -> dict[str, dict[str, datetime]]:
    """{host: {id: the earliest time the host's records name it}} from (host, timestamp, text)."""
    out: dict[str, dict[str, datetime]] = defaultdict(dict)
    for host, stamp, text in items:
        if host is None or not _may_name_an_id(text):
            continue
        idents = set(_ID.findall(text[:4096]))
        when = _parse(stamp) if idents else None
        if when is None:
            continue
        seen = out[host]
        for ident in idents:
            if ident in seen:
                seen[ident] = min(seen[ident], when)
            elif len(seen) < _MAX_IDS_PER_HOST:
                seen[ident] = when
    return dict(out)


def _span(seconds: float) -> str:
    s = int(round(abs(seconds)))
    h, m, sec = s // 3600, s % 3600 // 60, s % 60
    return f"{h}h{m:02d}m{sec:02d}s" if h else (f"{m}m{sec:02d}s" if m else f"{sec}s")


@dataclass
class Skew:
    offsets: dict[str, float] = field(default_factory=dict)    # seconds to add to a host's times
    evidence: dict[str, str] = field(default_factory=dict)     # host -> why its clock was corrected
    doubts: list[str] = field(default_factory=list)

    def corrected(self, host: str | None, stamp: str | None) -> str | None:
        off = self.offsets.get(host or "")
        when = _parse(stamp) if off else None
        if when is None:
            return stamp
        return (when + timedelta(seconds=off)).isoformat(timespec="milliseconds")

    def note(self) -> str:
        """What the reason of an "earliest across hosts" lead adds: the correction or the doubt."""
        if self.doubts:
            return "by the hosts' own clocks, which may differ: " + self.doubts[0]
        if self.offsets:
            return "after aligning clocks: " + "; ".join(self.evidence[h] for h in sorted(self.offsets))
        return ""


def estimate(obs: dict[str, dict[str, datetime]]) -> Skew:
    """Offsets for the hosts strong evidence ties to another host, doubts for the rest (module doc)."""
    skew = Skew()
    hosts = sorted(obs)
    strong: dict[str, list[tuple[str, float, int]]] = defaultdict(list)
    weak = []
    for i, a in enumerate(hosts):
        for b in hosts[i + 1:]:
            shared = sorted(set(obs[a]) & set(obs[b]))
            if not shared:
                continue
            diffs = [(obs[a][x] - obs[b][x]).total_seconds() for x in shared]
            mid = statistics.median(diffs)
            if (len(shared) >= MIN_IDS and max(diffs) - min(diffs) <= MAX_SPREAD_S
                    and MIN_SKEW_S <= abs(mid) <= MAX_SKEW_S):
                strong[a].append((b, mid, len(shared)))       # b's time + mid = a's time
                strong[b].append((a, -mid, len(shared)))
            else:
                weak.append((a, b, shared, diffs))
    # The host with the most ids keeps its clock; the others of its group are moved onto it.
    placed: set[str] = set()
    for root in sorted(strong, key=lambda h: (-len(obs[h]), h)):
        if root in placed:
            continue
        placed.add(root)
        todo = [(root, 0.0)]
        while todo:
            host, off = todo.pop()
            for other, mid, n in strong[host]:
                if other not in placed:
                    placed.add(other)
                    skew.offsets[other] = off + mid
                    skew.evidence[other] = (f"{other} {'+' if off + mid > 0 else '-'}{_span(off + mid)} "
                                            f"({n} ids logged on {other} and {host} that far apart)")
                    todo.append((other, off + mid))
    # What the other pairs say once the corrections are made: far apart, a doubt.
    for a, b, shared, diffs in weak:
        moved = [d + skew.offsets.get(a, 0.0) - skew.offsets.get(b, 0.0) for d in diffs]
        far = max(range(len(shared)), key=lambda k: abs(moved[k]))
        if abs(moved[far]) > SUSPECT_S:
            skew.doubts.append(f"{shared[far]} logged on {a} and {b} {_span(moved[far])} apart"
                               + (f" ({len(shared)} ids, not one distance)" if len(shared) > 1 else ""))
    return skew


def bundle_skew(candidates, error_lines: Iterable[tuple[str, int, str]], host_of, default_year: int | None,
                hits: Iterable[tuple[str | None, str | None, str]] = ()) -> Skew:
    """The Skew of a bundle from its lead records, its error lines (host_of(path) -> host) and the
    lines its symptoms matched, (host, timestamp, text): whatever both engines hand the driver alike."""
    def items():
        yield from hits
        for c in candidates:
            yield c.host, c.timestamp, c.text
        for path, _, text in error_lines:
            if not _may_name_an_id(text):   # most error lines name none: skip their header parse
                continue
            header = timestamps.parse_header(text, default_year)
            yield host_of(path), header.timestamp if header else None, text
    return estimate(observe(items()))
