"""JDK 6/7/8 GC logs (-XX:+PrintGCDetails, date and/or uptime stamps).

One collection can span several lines: -XX:+PrintTenuringDistribution splits
a ParNew record, G1 prints its phase table and the [Times: ...] line after the
pause line, a CMS "concurrent mode failure" is interleaved with a concurrent
phase that carries its own [Times: ...]. So records are assembled by bracket
depth from their "[GC"/"[Full GC" start, and [Times: ... real=] is taken only
after the record's brackets have closed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_DATE = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[.,]\d+(?:[+-]\d{4}|Z)?"
_NUM = r"\d+[.,]\d+"     # some locales print "0,0123456 secs"
START_RE = re.compile(
    rf"^\s*(?:(?P<date>{_DATE}):\s*)?(?:(?P<up>{_NUM}):\s*)?(?:#\d+:\s*)?"
    r"\[(?P<ev>Full GC|GC)(?P<after>.*)$")
# What may follow "[GC" in a collection (not "[GC concurrent-mark-start]",
# "[GC Worker Start (ms)...]" of the G1 table, "[GC ref-proc" inside a remark).
_AFTER_OK_RE = re.compile(r"^(?:\s*\(|\s*\[|\s*\d|--|\s+pause\b|\s+remark\b|\s+cleanup\b|\s*$)")
_BODY_SECS_RE = re.compile(rf"({_NUM}) secs\]$")
_REAL_RE = re.compile(rf"\[Times:.*?real=({_NUM}) secs")
_BRACKET_RE = re.compile(r"[\[\]]")
# One level of nesting for "(System.gc())".
_CAUSE_RE = re.compile(r"^\s*(?:pause\s+)?\(((?:[^()]|\([^()]*\))*)\)")
MAX_RECORD_LINES = 200   # a record never legitimately runs longer


def _num(s: str) -> float:
    return float(s.replace(",", "."))


@dataclass
class Pause:
    line: int
    text: str
    ms: float
    kind: str
    date: str | None
    uptime: float | None
    cause: str | None


@dataclass
class _Record:
    line: int
    text: str
    date: str | None
    uptime: float | None
    ev: str
    after: str
    depth: int = 0
    body: list[str] = field(default_factory=list)
    closed: bool = False   # brackets closed; still waiting for a [Times: line
    secs: float | None = None
    n_lines: int = 1


def is_start(line: str) -> re.Match | None:
    m = START_RE.match(line)
    return m if m and _AFTER_OK_RE.match(m.group("after")) else None


class Assembler:
    """Feed lines in order; collects completed Pauses in .pauses.

    feed() returns True when the line belonged to a GC record, so the caller
    does not look at it again.
    """

    def __init__(self) -> None:
        self.pauses: list[Pause] = []
        self._rec: _Record | None = None

    def feed(self, n: int, line: str) -> bool:
        rec = self._rec
        start = is_start(line)
        if rec is not None:
            if start is None and not rec.closed:
                rec.n_lines += 1
                if rec.n_lines > MAX_RECORD_LINES:
                    self._rec = None      # runaway: drop rather than invent a pause
                    return False
                self._advance(rec, line, 0)
                return True
            if start is None and rec.closed and (line[:1].isspace() or line.startswith("[Times")):
                # G1's phase table and the trailing [Times: ...] line.
                rec.n_lines += 1
                m = _REAL_RE.search(line)
                if m:
                    self._emit(rec, _num(m.group(1)))
                elif rec.n_lines > MAX_RECORD_LINES:
                    self._emit(rec, None)
                return True
            if rec.closed:
                self._emit(rec, None)
            self._rec = None              # an unfinished record cut by a new one is dropped
        if start is None:
            return False
        rec = _Record(line=n, text=line, date=start.group("date"),
                      uptime=_num(start.group("up")) if start.group("up") else None,
                      ev=start.group("ev"), after=start.group("after"))
        self._rec = rec
        self._advance(rec, line, start.start("ev") - 1)
        return True

    def finish(self) -> list[Pause]:
        if self._rec is not None and self._rec.closed:
            self._emit(self._rec, None)
        self._rec = None
        return self.pauses

    def _advance(self, rec: _Record, line: str, pos: int) -> None:
        for b in _BRACKET_RE.finditer(line, pos):
            rec.depth += 1 if b.group() == "[" else -1
            if rec.depth == 0:
                end = b.end()
                rec.body.append(line[pos:end])
                m = _BODY_SECS_RE.search(rec.body[-1][-48:])   # the record's own ", N secs]"
                rec.secs = _num(m.group(1)) if m else None
                rec.closed = True
                real = _REAL_RE.search(line, end)
                if real:
                    self._emit(rec, _num(real.group(1)))
                return
        rec.body.append(line[pos:])

    def _emit(self, rec: _Record, real: float | None) -> None:
        self._rec = None
        # real= is the wall-clock pause; it has only 2 decimals, so a "real=0.00"
        # would erase a measured 1.2 ms: then the record's own secs are kept.
        secs = real if real is not None and (real > 0 or rec.secs is None) else rec.secs
        if secs is None:
            return
        body = "\n".join(rec.body)
        cause = _CAUSE_RE.match(rec.after)
        self.pauses.append(Pause(line=rec.line, text=rec.text, ms=round(secs * 1000, 6),
                                 kind=_kind(rec.ev, rec.after, body), date=rec.date,
                                 uptime=rec.uptime, cause=cause.group(1) if cause else None))


def _kind(ev: str, after: str, body: str) -> str:
    if ev == "Full GC":
        return "full"
    # ParNew that could not promote falls back to a stop-the-world CMS collection.
    if "concurrent mode failure" in body or "promotion failed" in body:
        return "full"
    if "CMS-initial-mark" in body or "CMS Initial Mark" in body:
        return "initial-mark"
    if "CMS-remark" in body or "CMS Final Remark" in body or after.startswith(" remark"):
        return "remark"
    if after.startswith(" cleanup"):
        return "cleanup"
    head = body.split("\n", 1)[0]
    if after.startswith(" pause"):     # G1: [GC pause (G1 Evacuation Pause) (mixed), ...]
        if "(initial-mark)" in head:
            return "initial-mark"
        if "(mixed)" in head:
            return "mixed"
    return "young"
