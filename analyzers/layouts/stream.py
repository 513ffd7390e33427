"""Split one text stream into the files of its sections, streaming (nothing held whole)."""

from __future__ import annotations

import codecs
import os
from typing import Callable, Iterable, Iterator

from analyzers import textio
from analyzers.layouts.base import Demuxer, Section

LONG_LINE = 1 << 20          # a line longer than this is passed on in pieces
BUFFERED = 4 << 20           # text held for all sections together before it goes to disk


def decoded_chunks(head: bytes, src, encoding: str) -> Iterator[str]:
    """head + the rest of src as text, chunk by chunk; bad bytes become U+FFFD."""
    decoder = codecs.getincrementaldecoder(textio.CODECS.get(encoding, "utf-8"))(errors="replace")
    yield decoder.decode(head)
    while chunk := src.read(textio.CHUNK):
        yield decoder.decode(chunk)
    yield decoder.decode(b"", final=True)


def lines_of(chunks: Iterable[str]) -> Iterator[str]:
    carry = ""
    for text in chunks:
        carry += text
        start = 0
        while (nl := carry.find("\n", start)) >= 0:
            yield carry[start:nl + 1]
            start = nl + 1
        carry = carry[start:]
        if len(carry) > LONG_LINE:
            yield carry
            carry = ""
    if carry:
        yield carry


class _Sections:
    """Text per section, kept in memory up to BUFFERED characters in all, then appended to disk:
    one write per section per flush, whatever the number of sections (no open-file limit)."""

    def __init__(self, new_file: Callable[[Section], str]):
        self.new_file = new_file
        self.files: dict[str, list] = {}      # name -> [section, disk path, bytes written]
        self.pending: dict[str, list[str]] = {}
        self.held = 0

    def add(self, section: Section, text: str) -> None:
        parts = self.pending.get(section.name)
        if parts is None:
            if section.name not in self.files:
                self.files[section.name] = [section, self.new_file(section), 0]
            parts = self.pending[section.name] = []
        parts.append(text)
        self.held += len(text)
        if self.held > BUFFERED:
            self.flush()

    def flush(self) -> None:
        for name, parts in self.pending.items():
            entry = self.files[name]
            data = "".join(parts).encode("utf-8", "replace")
            with open(entry[1], "ab") as fh:
                fh.write(data)
            entry[2] += len(data)
        self.pending, self.held = {}, 0


def split_stream(demuxer: Demuxer, lines: Iterable[str], new_file: Callable[[Section], str]
                 ) -> list[tuple[Section, str, int]]:
    """(section, disk path, bytes) for every section that got text, in order of first appearance.

    new_file(section) names the disk file for a new section (and may refuse: it counts files).
    """
    sections = _Sections(new_file)
    feed, add = demuxer.feed, sections.add
    for line in lines:
        for section, text in feed(line):
            add(section, text)
    sections.flush()
    for _, disk, size in sections.files.values():
        if not size and os.path.exists(disk):
            os.remove(disk)
    return [(s, disk, size) for s, disk, size in sections.files.values() if size]
