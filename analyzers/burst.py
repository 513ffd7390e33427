"""`burst` on a symptom usage: the symptom counts for a runbook only when some window of
`within` holds at least `count` of its occurrences (those meeting the usage's `where`).

One "Expiring session" is routine; fifty in the same second are a storm. `where` tests
one occurrence and relations pair two symptoms, so neither can say "many at once".

Exact in bounded memory: occurrences are counted per whole second (per host, for
`hosts: same`), so memory grows with the distinct seconds, not with the hits, and two
count tables merge by adding. Times are compared to the whole second: a window of
`within: 30s` holds the occurrences whose seconds are at most 30 apart. Occurrences
without a timestamp never make a burst (nothing says when they happened); with
`hosts: same`, neither do occurrences whose host is unknown (as relations treat them).
Naive and zoned timestamps are never put in one window.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Mapping

from analyzers.runbook_vocabulary import BURST_KEYS, parse_duration_ms

if TYPE_CHECKING:
    from analyzers.runbook_spec import Burst

# (host or None, naive?, whole second) -> occurrences in that second
SecondKey = tuple[str | None, bool, int]

_EPOCH = datetime(1970, 1, 1)


@dataclass(frozen=True)
class Densest:
    """The window of `within` that holds the most occurrences (the earliest such window)."""
    count: int                 # occurrences in it; 0 when no occurrence had a timestamp
    total: int                 # timed occurrences the count was taken from
    host: str | None = None    # with hosts: same, the host of the window
    naive: bool = True
    start: int = 0             # first and last whole second holding an occurrence of the window
    end: int = 0

    def holds(self, second_key: SecondKey, hosts: str) -> bool:
        """Whether an occurrence counted under second_key lies in this window."""
        host, naive, second = second_key
        return (naive == self.naive and self.start <= second <= self.end
                and (hosts != "same" or host == self.host))

    def bound(self, second: int) -> str:
        when = _EPOCH + timedelta(seconds=second) if self.naive else datetime.fromtimestamp(second, timezone.utc)
        return when.isoformat()

    def text(self, burst: Burst) -> str:
        """'12 occurrences within 30s (from .. to ..)', what the finding's explanation says."""
        where = f" on {self.host}" if burst.hosts == "same" and self.host else ""
        return (f"{self.count} occurrences within {burst.within}{where} "
                f"(from {self.bound(self.start)} to {self.bound(self.end)})")

    def shortfall(self, seen: int, burst: Burst) -> str:
        """'seen 14 times, at most 3 within 30s; needs 10', what the considered list says."""
        where = " on one host" if burst.hosts == "same" else ""
        return f"seen {seen} times, at most {self.count} within {burst.within}{where}; needs {burst.count}"


def densest(per_second: Mapping[SecondKey, int], burst: Burst) -> Densest:
    """The densest window, by a two-pointer sweep over each time line's sorted seconds."""
    lines: dict[tuple[str, bool], dict[int, int]] = defaultdict(lambda: defaultdict(int))
    hosts: dict[tuple[str, bool], str | None] = {}
    total = 0
    for (host, naive, second), n in per_second.items():
        if burst.hosts == "same" and host is None:
            continue
        line = (host if burst.hosts == "same" else "", naive)
        hosts[line] = host if burst.hosts == "same" else None
        lines[line][second] += n
        total += n
    width = int(burst.within_s)
    best = Densest(count=0, total=total)
    for line in sorted(lines):
        counts = lines[line]
        seconds = sorted(counts)
        left = in_window = 0
        for second in seconds:
            in_window += counts[second]
            while second - seconds[left] > width:
                in_window -= counts[seconds[left]]
                left += 1
            start = seconds[left]
            if in_window > best.count or (in_window == best.count and best.count and start < best.start):
                best = Densest(in_window, total, hosts[line], line[1], start, second)
    return best


def check_burst(burst: Any, p: Any, where: str) -> None:
    """Validates a usage's `burst` (p: runbook_checks.Problems)."""
    if burst is None:
        return
    where = f"{where}.burst"
    if not p.keys(burst, BURST_KEYS, {"count", "within"}, where):
        return
    count = burst.get("count")
    if "count" in burst and (not isinstance(count, int) or isinstance(count, bool) or count < 2):
        p.error(where, "count must be an integer >= 2 (one occurrence needs no burst)")
    if "within" in burst:
        try:
            ms = parse_duration_ms(burst["within"])
        except ValueError as exc:
            p.error(where, str(exc))
        else:
            if ms < 1000 or ms % 1000:
                p.error(where, "within must be a whole number of seconds, at least 1s (bursts are counted per second)")
    if burst.get("hosts", "any") not in ("same", "any"):
        p.error(where, "hosts must be same or any")
