"""The scan side of leads: candidate lines turned into whole records, kept per range, bounded.

scan_range (analyzers/scan.py) calls `LeadCollector.add` for every line the error or
lead pattern matched. A record is identified by its first line: the collector walks up
from the candidate line through continuation lines (analyzers/lead_records.continues)
to the record's start, and down from there to its end. A record is kept by the range
that holds its first candidate line, and only once: a later candidate line of the same
record (a "Caused by" under an ERROR header) is skipped, whether the record began in
this range or the one before. The walk depends only on the file's bytes around the
line (blocks are read from the file when the record crosses them), so the local and
the Spark engine, whatever their range and piece boundaries, keep the same records.

Bounds per range: MAX_LEAD_LINES candidate lines looked at (then `leads_sampled`), and
MAX_LEAD_KEYS template keys, each with its first record, count and last line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from analyzers.lead_records import (MAX_RECORD_LINES, MAX_RECORD_SCAN, MAX_RECORD_TEXT, continues, headline,
                                    is_stop, kind_of, starts_record)
from analyzers.template_key import message_part, template_key

MAX_LEAD_LINES = 500    # candidate records a range looks at (a quarter of MAX_ERROR_LINES: cost, scripts/bench.py)
MAX_LEAD_KEYS = 500     # distinct templates a range keeps a record of
MAX_STOPS = 50          # lines where a process said it stops, per range
_LOOKBACK_BYTES = MAX_RECORD_SCAN + 4096
_DIGITS_TO_ZERO = str.maketrans("123456789", "000000000")
# Indented, non-blank lines (what continues() takes without looking further), each with its "\n".
_INDENTED_RUN = re.compile(rb"(?:[ \t]+[^\s][^\n]*\n)*")


@dataclass
class LeadRecord:
    line_in_range: int       # the record's first line, 1-based within the range (<= 0: it began before)
    lines: int               # lines of the record
    text: str                # the record, lines joined by "\n", at most MAX_RECORD_TEXT characters
    headline: str
    kind: str                # exception | error | traceback | state | stop | kernel | panic
    header: str | None       # the line whose timestamp the record has (its first line, or the nearest above)
    count: int = 1           # records of this key in the range
    last_line: int = 0       # the last one's first line, within the range


def record_key(first_line: str, head: str) -> str:
    """Template key of a record: its first line's message, and its headline when that differs
    (two traces under the same ERROR line with different root causes are different leads)."""
    key = template_key(message_part(first_line))
    return key if head == first_line.strip() else f"{key} <- {template_key(head)}"


class LeadCollector:
    def __init__(self, disk_path: str, is_record_start, is_candidate, headers):
        self.disk_path = disk_path
        self.is_start = is_record_start
        self.is_candidate = is_candidate    # the scan's own test: error or lead pattern on one line
        self.headers = headers              # scan._HeaderFinder: the timestamp line above a record
        self._fh = None
        self.last_start = -1                # absolute offset of the last record's first line
        self.covered_until = -1             # ... and of the end of that record
        self._shapes: dict[str, tuple[str, bool]] = {}   # one-line record, digits as 0 -> (key, is a stop)
        self.range_start = 0                # file offset of the range's first line (set by scan_range)
        self._stop_of: dict[str, bool] = {}   # template key -> does its record say the process stops
        self._texts: list[str] = []

    def covers(self, abs_offset: int) -> bool:
        """Is the line at this file offset part of the record kept last?"""
        return self.last_start <= abs_offset < self.covered_until

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()

    def _file(self):
        if self._fh is None:
            self._fh = open(self.disk_path, "rb")
        return self._fh

    def _lines_above(self, data: bytes, ls: int, abs_base: int):
        """(absolute offset, raw line) of the lines above offset ls of data, nearest first."""
        pos = ls
        while pos > 0:
            prev = data.rfind(b"\n", 0, pos - 1) + 1
            yield abs_base + prev, data[prev:pos - 1]
            pos = prev
        if abs_base == 0:
            return
        fh = self._file()
        begin = max(0, abs_base - _LOOKBACK_BYTES)
        fh.seek(begin)
        raw = fh.read(abs_base - begin)
        pos = len(raw)
        while pos > 0:
            prev = raw.rfind(b"\n", 0, pos - 1) + 1
            if prev == 0 and begin > 0:
                return                          # a cut line: the walk's byte limit is reached anyway
            yield begin + prev, raw[prev:pos - 1]
            pos = prev

    def _down(self, data: bytes, le: int, abs_base: int, lines: list, size: int) -> tuple[list, int]:
        """The record's lines from the line ending at le on, and its bytes: continuation lines while
        MAX_RECORD_LINES and MAX_RECORD_SCAN allow. Runs of indented lines (stack frames) are
        matched in one regex step and kept as bytes, decoded only if the record is kept."""
        if le + 1 + MAX_RECORD_SCAN <= len(data):
            chunk, pos = data, le + 1
        else:
            fh = self._file()
            fh.seek(abs_base + le + 1)
            chunk, pos = fh.read(MAX_RECORD_SCAN), 0
        end = min(pos + MAX_RECORD_SCAN, len(chunk))
        whole = len(chunk) < pos + MAX_RECORD_SCAN      # the file ends inside: its last line is complete
        prev = lines[-1]
        while pos < end:
            run = _INDENTED_RUN.match(chunk, pos, end).end()
            if run > pos:
                frames = chunk[pos:run - 1].split(b"\n")
                if len(lines) + len(frames) > MAX_RECORD_LINES or size + run - pos > MAX_RECORD_SCAN:
                    for raw in frames:                  # the record ends inside this run
                        if len(lines) >= MAX_RECORD_LINES or size + len(raw) + 1 > MAX_RECORD_SCAN:
                            return lines, size
                        lines.append(raw)
                        size += len(raw) + 1
                    return lines, size
                lines.extend(frames)
                size += run - pos
                pos, prev = run, frames[-1].decode("utf-8", errors="replace").rstrip("\r")
                continue
            nl = chunk.find(b"\n", pos, end)
            if nl < 0 and not whole:
                break
            raw = chunk[pos:nl if nl >= 0 else end]
            text = raw.decode("utf-8", errors="replace").rstrip("\r")
            if (len(lines) >= MAX_RECORD_LINES or size + len(raw) + 1 > MAX_RECORD_SCAN
                    or not continues(text, prev, self.is_start)):
                break
            lines.append(text)
            self._texts.append(text)
            size += len(raw) + 1
            if nl < 0:
                break
            pos, prev = nl + 1, text
        return lines, size

    def add(self, data: bytes, ls: int, le: int, abs_base: int, lineno: int, line: str, result) -> None:
        """One candidate line (text `line`, line number `lineno` in the range, bytes data[ls:le])."""
        abs_ls = abs_base + ls
        if self.last_start <= abs_ls < self.covered_until:
            return                              # a later line of the record just kept
        start_abs, above, walked = abs_ls, [], le - ls + 1   # above: the record's lines over this one
        starts = starts_record(line, self.is_start)
        if starts and self._alone(data, le, line):
            result.lead_lines += 1              # the common case, a one-line record: no walk either way
            self.last_start, self.covered_until = abs_ls, abs_ls + walked
            self._texts = [line]
            self._keep(data, ls, abs_base, lineno, [line], abs_ls, result)
            return
        if not starts:
            start_abs, above, offsets, walked = self._walk_up(data, ls, le, abs_base, line)
            if start_abs == self.last_start:
                return
            # A candidate line above, in this range, made this record already (it covers this line,
            # or the walk would have stopped short); above the range, the range before kept it.
            if start_abs < self.range_start and any(
                    self.is_candidate(t) for t, off in zip(above, offsets) if off < self.range_start):
                return
        self._texts = above + [line]          # the record's decoded lines: what can head it
        lines, size = self._down(data, le, abs_base, above + [line], walked)
        result.lead_lines += 1
        self.last_start, self.covered_until = start_abs, start_abs + size
        self._keep(data, ls, abs_base, lineno - len(above), lines, start_abs, result)

    def _alone(self, data: bytes, le: int, line: str) -> bool:
        """Is the next line, when this block holds all of it, no continuation of this one?
        (False when it is, or when it is not in the block: the general path reads the file.)"""
        nxt = data.find(b"\n", le + 1)
        if nxt < 0:
            return False
        raw = data[le + 1:nxt]
        if raw[:1] in (b" ", b"\t"):
            return not raw.strip()
        return not continues(raw.decode("utf-8", errors="replace").rstrip("\r"), line, self.is_start)

    def _walk_up(self, data: bytes, ls: int, le: int, abs_base: int,
                 line: str) -> tuple[int, list[str], list[int], int]:
        """(offset of the record's first line, its lines down to this one's, their offsets, their bytes)."""
        start_abs, above, offsets = abs_base + ls, [], []
        cur, walked = line, le - ls + 1
        for off, raw in self._lines_above(data, ls, abs_base):
            text = raw.decode("utf-8", errors="replace").rstrip("\r")
            if not continues(cur, text, self.is_start):
                break
            walked += len(raw) + 1
            if len(above) + 1 >= MAX_RECORD_LINES or walked > MAX_RECORD_SCAN:
                return abs_base + ls, [], [], le - ls + 1   # too long to be one record: this line starts its own
            above.append(text)
            offsets.append(off)
            start_abs, cur = off, text
        above.reverse()
        offsets.reverse()
        return start_abs, above, offsets, walked

    def _keep(self, data, ls, abs_base, first_lineno, lines, start_abs, result) -> None:
        # A one-line record's key and stop-ness depend on where its digits are, not which: a line
        # seen before in this shape skips the key (most candidates repeat: a retry loop, a flood).
        shape = lines[0].translate(_DIGITS_TO_ZERO) if len(lines) == 1 else None
        known = self._shapes.get(shape) if shape is not None else None
        if known is not None:
            key, stop = known
        else:
            head = headline(self._texts)        # frames (kept as bytes) never head a record
            key = record_key(lines[0], head)
            stop = self._stop_of.get(key)
            if stop is None:                    # the words that say "stop" are never the variable parts
                stop = self._stop_of[key] = is_stop(lines[0])
            if shape is not None:
                if len(self._shapes) >= MAX_LEAD_KEYS * 4:
                    self._shapes.clear()
                self._shapes[shape] = (key, stop)
        if stop and len(result.stops) < MAX_STOPS:
            result.stops.append(first_lineno)
        found = result.leads.get(key)
        if found is not None:
            found.count += 1
            found.last_line = first_lineno
            return
        if len(result.leads) >= MAX_LEAD_KEYS:
            result.leads_sampled = True
            return
        if known is not None:
            head = headline(lines)
        text = "\n".join(ln if isinstance(ln, str) else ln.decode("utf-8", errors="replace").rstrip("\r")
                         for ln in lines)
        header = lines[0] if self.is_start(lines[0]) else self._header_above(data, ls, abs_base, start_abs)
        result.leads[key] = LeadRecord(first_lineno, len(lines), text[:MAX_RECORD_TEXT], head[:MAX_RECORD_TEXT],
                                       kind_of(text), header, 1, first_lineno)

    def _header_above(self, data, ls, abs_base, start_abs) -> str | None:
        rel = start_abs - abs_base
        if rel >= 0:
            return self.headers.find(data, rel, abs_base, data[rel:data.find(b"\n", rel)].decode(
                "utf-8", errors="replace"))
        return self.headers._from_file(start_abs)
