"""A text file kept compressed, with a line index, so that any few lines of it
are read in bounded time and bytes however long the file is (the ±10 lines
around a piece of evidence, issue 17).

    <prefix>.lines   the file in blocks, each one zlib stream: a block ends at
                     the end of a line once it holds LINES_PER_BLOCK lines or
                     BLOCK_BYTES bytes, whichever comes first
    <prefix>.idx     one record per block, (first line number, offset of the
                     block in .lines) as two little-endian uint64, then a last
                     record (line count + 1, size of .lines)

Reading lines first..last: a binary search over .idx (about log2(blocks)
reads of 16 bytes), then the compressed block(s) holding those lines,
decompressed piece by piece and left as soon as `last` is passed. A line is
cut at max_line_bytes (the rest is skipped, never kept in memory).
"""

from __future__ import annotations

import os
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, BinaryIO

LINES_PER_BLOCK = 1000
BLOCK_BYTES = 1024 * 1024
READ_CHUNK = 1024 * 1024
READ_PIECE = 16 * 1024   # compressed bytes read at a time
PIECE = 64 * 1024        # decompressed bytes produced at a time
RECORD = struct.Struct("<QQ")
LEVEL = 1                # zlib's fastest: the store is written once per analysis, read a few lines at a time


@dataclass(frozen=True)
class StoredLine:
    number: int
    raw: bytes        # without the line end; at most max_line_bytes
    cut: bool         # the line was longer


def line_store_paths(prefix: Path) -> tuple[Path, Path]:
    return prefix.with_name(prefix.name + ".lines"), prefix.with_name(prefix.name + ".idx")


def line_store_write(source: Path, prefix: Path) -> tuple[int, int]:
    """Write the store of `source`; returns (lines, bytes written)."""
    lines_path, idx_path = line_store_paths(prefix)
    with open(source, "rb") as src, open(lines_path, "wb") as out, open(idx_path, "wb") as idx:
        writer = _BlockWriter(out, idx)
        while chunk := src.read(READ_CHUNK):
            writer.feed(chunk)
        writer.finish()
    return writer.next_line - 1, os.path.getsize(lines_path) + os.path.getsize(idx_path)


class _BlockWriter:
    def __init__(self, out: BinaryIO, idx: BinaryIO):
        self.out, self.idx = out, idx
        self.offset, self.next_line = 0, 1          # next_line: the number of the next line to start
        self.block_lines, self.block_bytes = 0, 0   # complete lines and bytes in the open block
        self.comp = zlib.compressobj(LEVEL)
        self.tail_open = False
        idx.write(RECORD.pack(1, 0))

    def feed(self, chunk: bytes) -> None:
        """The block closes at the first line end where it holds LINES_PER_BLOCK lines
        or BLOCK_BYTES bytes; found with bytes.count/find (C), never a loop per line."""
        pos, size = 0, len(chunk)
        while pos < size:
            need, room = LINES_PER_BLOCK - self.block_lines, BLOCK_BYTES - self.block_bytes
            nl = chunk.find(b"\n", max(pos + room - 1, pos))
            by_bytes = nl + 1 if nl >= 0 else -1
            by_lines = _after_nth_newline(chunk, pos, need, by_bytes if by_bytes > 0 else size)
            close = by_lines if by_lines > 0 else by_bytes
            if close < 0:
                self._add(chunk[pos:], chunk.count(b"\n", pos))
                return
            self._add(chunk[pos:close], chunk.count(b"\n", pos, close))
            self._close()
            pos = close

    def _add(self, data: bytes, newlines: int) -> None:
        self.out.write(self.comp.compress(data))
        self.block_lines += newlines
        self.block_bytes += len(data)
        self.next_line += newlines
        if data:
            self.tail_open = not data.endswith(b"\n")

    def _close(self) -> None:
        self.out.write(self.comp.flush())
        self.offset = self.out.tell()
        self.comp = zlib.compressobj(LEVEL)
        self.block_lines = self.block_bytes = 0
        self.idx.write(RECORD.pack(self.next_line, self.offset))

    def finish(self) -> None:
        if self.block_bytes:
            if self.tail_open:          # a last line without a line end is a line too
                self.next_line += 1
            self._close()


def _after_nth_newline(data: bytes, pos: int, n: int, hi: int) -> int:
    """The index just past the n-th line end in data[pos:hi], or -1: windows that
    double from a guess, then a bisection of the last one, all on bytes.count (C),
    scanning a few times the span rather than the rest of the chunk."""
    lo, seen, step = pos, 0, max(n * 128, 4096)   # seen = line ends in data[pos:lo], always < n
    while True:
        end = min(lo + step, hi)
        k = data.count(b"\n", lo, end)
        if seen + k >= n:
            hi = end
            break
        if end >= hi:
            return -1
        lo, seen, step = end, seen + k, step * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        k = data.count(b"\n", lo, mid)
        if seen + k >= n:
            hi = mid
        else:
            lo, seen = mid, seen + k
    return hi


def line_store_read(prefix: Path, first: int, last: int, *, max_line_bytes: int,
                    opener: Callable[..., BinaryIO] = open) -> list[StoredLine]:
    """Lines first..last (1-based) of the stored file; fewer past its end.
    `opener` opens the two files (tests count the bytes read through it)."""
    lines_path, idx_path = line_store_paths(prefix)
    first = max(1, first)
    with opener(idx_path, "rb") as idx:
        records = idx.seek(0, os.SEEK_END) // RECORD.size
        if records < 2 or first > last:
            return []

        def record(i: int) -> tuple[int, int]:
            idx.seek(i * RECORD.size)
            return RECORD.unpack(idx.read(RECORD.size))

        lo, hi = 0, records - 2          # the block holding `first`: last record with first_line <= first
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if record(mid)[0] <= first:
                lo = mid
            else:
                hi = mid - 1
        block_first, offset = record(lo)
        end_line, end_offset = record(records - 1)
    if first >= end_line:
        return []
    with opener(lines_path, "rb") as data:
        data.seek(offset)
        return _scan(data, end_offset - offset, block_first, first, min(last, end_line - 1), max_line_bytes)


def _scan(data: BinaryIO, budget: int, number: int, first: int, last: int, max_line_bytes: int) -> list[StoredLine]:
    """Decompress consecutive blocks from the current position until line `last` is complete."""
    out: list[StoredLine] = []
    current, cut = bytearray(), False
    decomp = zlib.decompressobj()
    pending = b""
    while number <= last:
        if decomp.eof:     # the next block is its own zlib stream; what followed this one may sit in either
            pending, decomp = decomp.unused_data + pending, zlib.decompressobj()
        if not pending:
            if budget <= 0:
                break
            pending = data.read(min(READ_PIECE, budget))
            budget -= len(pending)
            if not pending:
                break
        text = decomp.decompress(pending, PIECE)
        pending = decomp.unconsumed_tail
        pos = 0
        while pos < len(text) and number <= last:
            nl = text.find(b"\n", pos)
            piece = text[pos:] if nl < 0 else text[pos:nl]
            if number >= first:
                room = max_line_bytes - len(current)
                cut = cut or len(piece) > room
                current += piece[:max(room, 0)]
            if nl < 0:
                break
            if number >= first:
                out.append(StoredLine(number, bytes(current).rstrip(b"\r"), cut))
            number, current, cut, pos = number + 1, bytearray(), False, nl + 1
    if number <= last and number >= first and (current or cut):
        out.append(StoredLine(number, bytes(current).rstrip(b"\r"), cut))   # a last line without a line end
    return out
