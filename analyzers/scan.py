"""Scan one byte range of one file with every signature.

A range covers the lines whose first byte lies in [start, end). Both engines
call scan_range: the local engine with one range per file, the Spark engine
with many ranges per file spread over tasks. Results carry line numbers
relative to the range (`line_in_range`) plus the range's line count, so the
caller numbers lines across ranges with a prefix sum: the same numbers either
way, hence the same findings.

Only the matched lines (and the line that starts each one's record, for its timestamp)
leave this module, with a bounded sample of error-like records for the unmatched list and
the leads (analyzers/lead_scan.py); everything else is bytes skimmed by Hyperscan.
"""

from __future__ import annotations

import pickle
import zlib
from dataclasses import dataclass, field, fields, replace
from typing import Any, Iterator

from analyzers.lead_scan import MAX_LEAD_LINES, LeadCollector, LeadRecord
from analyzers.signatures import ERROR_KEY, LEAD_KEY, VERSION_KEY_PREFIX, Matcher

# Read block. A scan holds a few copies of one (Python peak on the bench's 1 GB / 100 MB bundles: 46 / 22
# MiB with 8 MiB blocks, 7 / 6 with 1 MiB), and sampling stops a block after the samples fill (less CPU).
CHUNK = 1024 * 1024
# Bytes of one scan task (a ByteRange), in both engines. Spark tasks scan at most this
# much too (analyzers/spark/runner.py: why not less).
RANGE_BYTES = 64 * 1024 * 1024
MAX_TEXT = 2000              # characters of a line kept for display
MAX_ERROR_LINES = 2000       # unmatched-candidate lines sampled per range for templates
HEADER_LOOKBACK_LINES = 400  # how far up a stack trace we look for the record's first line
HEADER_LOOKBACK_BYTES = 256 * 1024


@dataclass
class RawHit:
    key: str                 # symptom id
    line_in_range: int       # 1-based within the range
    text: str
    captures: dict[str, Any]
    header: str | None       # the record's first line (may be the line itself)


@dataclass(eq=False)
class RangeResult:
    path: str
    start: int
    lines: int = 0                   # lines that start inside the range
    bytes: int = 0
    hits: list[RawHit] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)  # (line_in_range, text): unmatched-template sample
    error_count: int = 0             # error lines seen while sampling (all of them unless errors_sampled)
    errors_sampled: bool = False     # the sample filled up; later blocks were scanned without the error pattern
    versions: list[tuple[str, str, int, str]] = field(default_factory=list)  # (component, version, line, text)
    cut_lines: list[tuple[int, int]] = field(default_factory=list)           # (line_in_range, bytes kept)
    leads: dict[str, LeadRecord] = field(default_factory=dict)  # template key -> first record (analyzers/lead_scan.py)
    lead_lines: int = 0              # candidate records looked at
    leads_sampled: bool = False      # MAX_LEAD_LINES or MAX_LEAD_KEYS reached: later candidates were not kept
    stops: list[int] = field(default_factory=list)  # first lines of records saying the process stops
    # More hits after `hits`, as (pack_hits bytes or a list, lines to add): a Spark task's hits stay
    # packed on the driver until assembly reads them, one range at a time (memory: analyzers/occurrences.py).
    packed: list[tuple[bytes | list[RawHit], int]] = field(default_factory=list)

    def all_hits(self) -> Iterator[RawHit]:
        yield from self.hits
        for payload, offset in self.packed:
            hits = unpack_hits(payload) if isinstance(payload, bytes) else payload
            for h in hits:
                yield replace(h, line_in_range=h.line_in_range + offset) if offset else h

    def __eq__(self, other: object) -> bool:
        """The same scan, however its hits are held (a list or packed)."""
        if not isinstance(other, RangeResult):
            return NotImplemented
        return (all(getattr(self, f.name) == getattr(other, f.name) for f in fields(self)
                    if f.name not in ("hits", "packed"))
                and list(self.all_hits()) == list(other.all_hits()))


# Hits stay packed (zlib) until assembly reads them, in chunks of PACK_CHUNK_HITS packed as the scan
# goes: a worker or the driver holds one chunk unpacked, not a range's (10,000 hits, 7.9 MiB, in a
# range of the bench's 1 GB bundle; 1,000 at 100 MB). Under PACK_MIN_HITS they are not worth a block.
PACK_MIN_HITS, PACK_CHUNK_HITS = 256, 1024


def packed_result(result: RangeResult) -> RangeResult:
    """`result` with its hits packed, when there are PACK_MIN_HITS or more."""
    if len(result.hits) >= PACK_MIN_HITS:
        result.packed, result.hits = [(pack_hits(result.hits), 0), *result.packed], []
    return result


def hit_rows(hits: list[RawHit]) -> list[tuple]:
    """Hits as plain tuples, each record's header string shared by the hits under it (pickle
    writes a shared object once): with zlib level 1 about a ninth of the pickled dataclasses."""
    headers: dict[str, str] = {}
    return [(h.key, h.line_in_range, h.text, h.captures or None,
             None if h.header is None else headers.setdefault(h.header, h.header)) for h in hits]


def rows_to_hits(rows: list[tuple]) -> list[RawHit]:
    return [RawHit(key, line, text, captures or {}, header) for key, line, text, captures, header in rows]


def pack_hits(hits: list[RawHit]) -> bytes:
    return zlib.compress(pickle.dumps(hit_rows(hits), protocol=pickle.HIGHEST_PROTOCOL), 1)


def unpack_hits(blob: bytes) -> list[RawHit]:
    return rows_to_hits(pickle.loads(zlib.decompress(blob)))


def plan_ranges(size: int, target: int) -> list[tuple[int, int]]:
    """Split [0, size) into ranges of about `target` bytes."""
    return [(0, size)] if size <= target else [(s, min(s + target, size)) for s in range(0, size, target)]


def _aligned_start(f, start: int) -> int:
    """First line start at or after `start` (a line starting before belongs to the previous range)."""
    if start == 0:
        return 0
    f.seek(start - 1)
    pos = start - 1
    while True:
        block = f.read(65536)
        if not block:
            return pos
        i = block.find(b"\n")
        if i >= 0:
            return pos + i + 1
        pos += len(block)


class _HeaderFinder:
    """Finds the first line of the record a matched line belongs to (Java stack traces,
    Caused by chains, kernel call traces): the nearest line above that parses as a header."""

    def __init__(self, disk_path: str, is_record_start):
        self.disk_path = disk_path
        self.is_start = is_record_start
        self._fh = None

    def find(self, data: bytes, line_start: int, abs_base: int, line: str) -> str | None:
        if self.is_start(line):
            return line
        # Walk up inside the current block first; fall back to the file for lines above it.
        pos = line_start
        for _ in range(HEADER_LOOKBACK_LINES):
            if pos <= 0:
                break
            prev = data.rfind(b"\n", 0, pos - 1) + 1
            candidate = data[prev:pos - 1].decode("utf-8", errors="replace")
            if self.is_start(candidate):
                return candidate
            pos = prev
        if pos > 0 or abs_base == 0:
            return None
        return self._from_file(abs_base)

    def _from_file(self, abs_pos: int) -> str | None:
        if self._fh is None:
            self._fh = open(self.disk_path, "rb")
        begin = max(0, abs_pos - HEADER_LOOKBACK_BYTES)
        self._fh.seek(begin)
        lines = self._fh.read(abs_pos - begin).split(b"\n")
        for raw in reversed(lines[-HEADER_LOOKBACK_LINES:]):
            text = raw.decode("utf-8", errors="replace")
            if self.is_start(text):
                return text
        return None

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()


def scan_range(path: str, disk_path: str, start: int, end: int, matcher: Matcher,
               max_line_bytes: int, is_record_start) -> RangeResult:
    result = RangeResult(path=path, start=start)
    headers = _HeaderFinder(disk_path, is_record_start)
    leads = LeadCollector(disk_path, is_record_start, matcher.is_lead_candidate, headers)
    with open(disk_path, "rb") as f:
        base = _aligned_start(f, start)   # file offset of data[0]
        leads.range_start = base
        f.seek(base)
        line_no = 0                       # lines scanned so far
        carry = b""
        while base < end:
            block = f.read(max(CHUNK, len(carry)))   # doubling: a long line is not copied per MiB
            eof = not block
            data = carry + block
            if not data:
                break
            if eof:
                complete, carry = data, b""
            else:
                last_nl = data.rfind(b"\n")
                if last_nl < 0:
                    if len(data) <= max_line_bytes:
                        carry = data
                        continue
                    # A line longer than the limit: scan its head, report the cut, skip the rest.
                    _scan_block(data[:max_line_bytes], base, line_no, result, matcher, headers, leads)
                    result.cut_lines.append((line_no + 1, max_line_bytes))
                    result.bytes += max_line_bytes
                    line_no += 1
                    base = _skip_line(f, base + len(data))
                    carry = b""
                    continue
                complete, carry = data[:last_nl + 1], data[last_nl + 1:]
            done = eof
            if base + len(complete) > end:
                # Keep the lines that start before `end`; the rest belong to the next range.
                nl = complete.find(b"\n", end - base - 1)
                if nl >= 0:
                    complete = complete[:nl + 1]
                done = True
            size = len(complete)
            if size > max_line_bytes:
                complete = _cut_long_lines(complete, max_line_bytes, line_no, result)
            _scan_block(complete, base, line_no, result, matcher, headers, leads)
            line_no += complete.count(b"\n") + (0 if complete.endswith(b"\n") else 1)
            result.bytes += size
            base += size
            if done:
                break
    headers.close()
    leads.close()
    if result.packed and result.hits:   # all_hits yields `hits` first: the last ones go after the chunks
        result.packed, result.hits = [*result.packed, (pack_hits(result.hits), 0)], []
    result.lines = line_no
    return result


def _cut_long_lines(data: bytes, limit: int, line_no: int, result: RangeResult) -> bytes:
    """Keep the first `limit` bytes of each longer line (only called on blocks larger than the limit)."""
    parts = data.split(b"\n")
    for i, part in enumerate(parts):
        if len(part) > limit:
            parts[i] = part[:limit]
            result.cut_lines.append((line_no + i + 1, limit))
    return b"\n".join(parts)


def _skip_line(f, pos: int) -> int:
    """Read past the rest of an over-long line; return the offset of the next line."""
    while True:
        block = f.read(CHUNK)
        if not block:
            return pos
        nl = block.find(b"\n")
        if nl >= 0:
            f.seek(pos + nl + 1)
            return pos + nl + 1
        pos += len(block)


def _scan_block(data: bytes, base: int, line_no: int, result: RangeResult, matcher: Matcher,
                headers: _HeaderFinder, leads: LeadCollector) -> None:
    prev_off, prev_line = 0, line_no
    leading = result.lead_lines < MAX_LEAD_LINES
    sampling = len(result.errors) < MAX_ERROR_LINES or leading
    result.errors_sampled = result.errors_sampled or not sampling   # this block's error lines go unseen
    last_lead = -1                       # a line both the error and the lead pattern match is one candidate
    last_ls, line = -1, ""
    for idx, ls, le in matcher.candidates(data, errors=sampling, leads=leading):
        key = matcher.signatures[idx].key
        if key == LEAD_KEY and (ls == last_lead or leads.covers(base + ls)):
            continue                         # already a candidate, or a line of the record just kept
        if ls != last_ls:
            line = data[ls:le].decode("utf-8", errors="replace").rstrip("\r")
            last_ls = ls
        m = matcher.confirm(idx, line)
        if m is None:
            continue
        lineno = prev_line + data.count(b"\n", prev_off, ls) + 1
        prev_off, prev_line = ls, lineno - 1
        if key == ERROR_KEY or key == LEAD_KEY:
            if key == ERROR_KEY:
                result.error_count += 1
                if len(result.errors) < MAX_ERROR_LINES:
                    result.errors.append((lineno, line[:MAX_TEXT]))
                else:
                    result.errors_sampled = True
            if ls != last_lead:
                last_lead = ls
                if result.lead_lines < MAX_LEAD_LINES:
                    leads.add(data, ls, le, base, lineno, line, result)
                else:
                    result.leads_sampled = True
        elif key.startswith(VERSION_KEY_PREFIX):
            result.versions.append((key[len(VERSION_KEY_PREFIX):], m.group(1), lineno, line[:MAX_TEXT]))
        else:
            caps = {k: v for k, v in m.groupdict().items() if v is not None}
            result.hits.append(RawHit(key, lineno, line[:MAX_TEXT], caps, headers.find(data, ls, base, line)))
            if len(result.hits) >= PACK_CHUNK_HITS:
                result.packed, result.hits = [*result.packed, (pack_hits(result.hits), 0)], []

