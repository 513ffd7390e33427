"""The files staging writes: <workdir>/staged-*/000001.log, named by us, never by a member.

Text in another encoding is rewritten as UTF-8 (textio.copy_utf8), a collector's stream
of many hosts' logs becomes one file per section (layouts), a nested zip is spooled out
because ZipFile must seek. Everything moves in chunks (analyzers/bundle.py's policies).
"""

from __future__ import annotations

import os
from typing import Callable

from analyzers import layouts, textio
from analyzers.layouts.stream import decoded_chunks, lines_of, split_stream


class StagedFiles:
    def __init__(self, outdir: str):
        self.outdir = outdir
        self.seq = 0

    def new_file(self, suffix: str) -> str:
        self.seq += 1
        return os.path.join(self.outdir, f"{self.seq:06d}{suffix}")

    def spool(self, head: bytes, src) -> str:
        """A nested archive copied out to a file of its own."""
        path = self.new_file(".zip")
        with open(path, "wb") as out:
            textio.copy_utf8(head, src, out, "utf-8")   # "utf-8" = a plain byte copy
        return path

    def text(self, head: bytes, src, encoding: str, disk: str | None) -> tuple[str, int]:
        """(disk path, size) of one log file as UTF-8: a plain UTF-8 file on disk is scanned
        where it is, with no copy; anything else is written out (and removed if that fails)."""
        if disk and encoding == "utf-8":
            return disk, os.path.getsize(disk)
        disk = self.new_file(".log")
        try:
            with open(disk, "wb") as out:
                return disk, textio.copy_utf8(head, src, out, encoding)
        except BaseException:
            os.remove(disk)
            raise

    def split(self, head: bytes, src, encoding: str, demuxer: layouts.Demuxer,
              count: Callable[[], None]) -> list[tuple[layouts.Section, str, int]]:
        """A collector's stream: (section, disk path, size) per section. `count` is called for
        every file past the first (the stream itself was counted as one file)."""
        def new_file(section: layouts.Section) -> str:
            if first:
                first.pop()
            else:
                count()
            return self.new_file(".log")

        first = [True]
        return split_stream(demuxer, lines_of(decoded_chunks(head, src, encoding)), new_file)
