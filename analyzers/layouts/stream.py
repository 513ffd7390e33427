"""Split one text stream into the files of its sections, streaming (nothing held whole)."""

from __future__ import annotations

import codecs
import os
from collections import OrderedDict
from typing import Callable, Iterable, Iterator

from analyzers import textio
from analyzers.layouts.base import Demuxer, Section

LONG_LINE = 1 << 20          # a line longer than this is passed on in pieces
OPEN_FILES = 64              # interleaved streams (kubectl, compose) reopen files past this many


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


def split_stream(demuxer: Demuxer, lines: Iterable[str], new_file: Callable[[Section], str]
                 ) -> list[tuple[Section, str, int]]:
    """(section, disk path, bytes) for every section that got text, in order of first appearance.

    new_file(section) names the disk file for a new section (and may refuse: it counts files).
    """
    out: dict[str, list] = {}             # section name -> [section, disk, size]
    handles: OrderedDict[str, object] = OrderedDict()
    try:
        for line in lines:
            for section, text in demuxer.feed(line):
                entry = out.get(section.name)
                if entry is None:
                    entry = out[section.name] = [section, new_file(section), 0]
                fh = handles.pop(section.name, None)
                if fh is None:
                    fh = open(entry[1], "ab")
                    if len(handles) >= OPEN_FILES:
                        handles.popitem(last=False)[1].close()
                handles[section.name] = fh
                data = text.encode("utf-8", "replace")
                fh.write(data)
                entry[2] += len(data)
    finally:
        for fh in handles.values():
            fh.close()
    for _, disk, size in out.values():
        if not size:
            os.remove(disk)
    return [(s, disk, size) for s, disk, size in out.values() if size]
