"""Helpers shared by the fact parsers: capped line reading, timestamps, Fact building."""

from __future__ import annotations

import re
from collections.abc import Iterator

from analyzers.model import BundleFile, Fact

# A bundle can hold multi-GB GC logs; facts are a side channel, so stop early
# and say so instead of stalling the whole analysis on one file.
MAX_LINES = 1_000_000
# Real config files are a few hundred KB at most; anything bigger is not one.
MAX_CONFIG_BYTES = 10 * 1024**2
MAX_TEXT = 2000   # same display limit as Hit.text
# Characters of one line a fact parser sees; the rest of a longer line is read past,
# never held (a single 2 GiB line would otherwise be read whole, twice over as str).
MAX_LINE_CHARS = 1024**2

# "2019-04-23T17:39:19.323+0800", "2019-04-23 17:39:19,323", "2019-04-23 17:39:19"
_ISO_RE = re.compile(r"(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)(?:[.,](\d{1,9}))?")


def iso(text: str | None) -> str | None:
    """First date-time in text as ISO 8601 without zone, the convention of Header.timestamp.

    The zone offset is dropped on purpose: log lines of the same host carry local
    time without an offset, and correlation compares these strings.
    """
    if not text:
        return None
    m = _ISO_RE.search(text)
    if not m:
        return None
    out = f"{m.group(1)}T{m.group(2)}"
    return f"{out}.{m.group(3)}" if m.group(3) else out


def iter_lines(file: BundleFile, notes: list[str] | None,
               max_lines: int | None = None) -> Iterator[tuple[int, str]]:
    """(1-based line number, line without EOL), streaming, stopping at max_lines."""
    max_lines = max_lines or MAX_LINES
    with open(file.disk_path, encoding="utf-8", errors="replace", newline="") as f:
        n = 0
        while line := f.readline(MAX_LINE_CHARS):
            n += 1
            if n > max_lines:
                if notes is not None:
                    notes.append(f"{file.path}: facts read from the first {max_lines} lines only")
                return
            rest = line
            while len(rest) == MAX_LINE_CHARS and not rest.endswith(("\n", "\r")):
                rest = f.readline(MAX_LINE_CHARS)      # an over-long line: skip to its end
            yield n, line.rstrip("\r\n")


def read_config_text(file: BundleFile, notes: list[str] | None) -> str | None:
    """Whole text of a config file, or None when it is too big to be one."""
    if file.size > MAX_CONFIG_BYTES:
        if notes is not None:
            notes.append(f"{file.path}: {file.size} bytes, too big for a config file; no config facts")
        return None
    with open(file.disk_path, encoding="utf-8", errors="replace", newline="") as f:
        return f.read()


def make_fact(file: BundleFile, name: str, line: int, text: str, captures: dict,
              timestamp: str | None = None) -> Fact:
    return Fact(name=name, path=file.path, line=line, text=text.strip()[:MAX_TEXT],
                captures=captures, timestamp=timestamp, host=file.host,
                component=file.component)
