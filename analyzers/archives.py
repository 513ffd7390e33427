"""Archive formats read safely: the budget every nesting level shares, and the checks
against bombs and hostile headers (the policies are in analyzers/bundle.py's docstring)."""

from __future__ import annotations

import bz2
import gzip
import lzma
import stat
import tarfile
import zipfile
import zlib

from analyzers import textio
from analyzers.model import BundleError, Limits

CHUNK = textio.CHUNK
RATIO_FLOOR = 1 << 20          # below 1 MiB a high ratio is just a small repetitive log
MAX_EXT_HEADER = 1 << 20       # a GNU long name or pax header bigger than this is an attack
ZIP_DIR_BYTES_PER_FILE = 1024  # central directory budget per allowed file: ZipFile loads it whole
DECOMPRESSORS = {"gzip": lambda f: gzip.GzipFile(fileobj=f, mode="rb"),
                 "bz2": lambda f: bz2.BZ2File(f, "rb"), "xz": lambda f: lzma.LZMAFile(f, "rb")}
# Errors of reading damaged compressed data (gzip and bz2 raise OSError subclasses).
READ_ERRORS = (EOFError, OSError, zlib.error, lzma.LZMAError, zipfile.BadZipFile, tarfile.TarError)


class Corrupt(Exception):
    """Damaged archive data, raised while reading a member."""


class Budget:
    """The limits that span every PATH and nesting level: bytes produced, files seen.

    `label` and `member` name the PATH and the member being read, for messages."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self.unpacked = self.files = 0
        self.label = self.member = ""

    def produced(self, n: int) -> None:
        self.unpacked += n
        if self.unpacked > self.limits.max_unpacked_bytes:
            raise BundleError(f"{self.label}: expands beyond {self.limits.max_unpacked_bytes} bytes "
                              f"(at member {self.member})")

    def count(self) -> None:
        self.files += 1
        if self.files > self.limits.max_files:
            raise BundleError(f"{self.label}: more than {self.limits.max_files} files")

    def check_zip_directory(self, f) -> None:
        # ZipFile parses the whole central directory into memory before we can count: read
        # the end record first (a private helper, but the only parser of it in the stdlib).
        end = zipfile._EndRecData(f)
        if end is None:
            return                                # ZipFile raises a clear BadZipFile
        entries, size = end[zipfile._ECD_ENTRIES_TOTAL], end[zipfile._ECD_SIZE]
        if entries > self.limits.max_files or size > self.limits.max_files * ZIP_DIR_BYTES_PER_FILE:
            raise BundleError(f"{self.label}: more than {self.limits.max_files} files")


class Meter:
    """Counts what comes out of a decompressor and stops a bomb early.

    `compressed` counts what went in, so the ratio is measured on bytes actually read,
    never on sizes an archive header claims.
    """

    def __init__(self, budget: Budget, src, compressed: textio.Counted, pending=lambda: 0):
        self.budget, self.src, self.compressed, self.pending = budget, src, compressed, pending
        self.restart()

    def restart(self) -> None:
        """Measure the ratio afresh: a .tgz is one stream, but the ratio is per member."""
        self.base, self.count = self.compressed.count - self.pending(), 0

    def read(self, n: int = -1) -> bytes:
        n = CHUNK if n is None or n < 0 else min(n, CHUNK)
        try:
            data = self.src.read(n)
        except READ_ERRORS as e:
            raise Corrupt(str(e) or type(e).__name__) from e
        self.count += len(data)
        self.budget.produced(len(data))
        limit = self.budget.limits.max_ratio
        used = self.compressed.count - self.base - self.pending()
        if self.count > RATIO_FLOOR and self.count > limit * max(1, used):
            raise BundleError(f"{self.budget.label}: member {self.budget.member} expands more than "
                              f"{limit}:1 (possible zip bomb); stopped after {self.count} bytes")
        return data


class SafeTarInfo(tarfile.TarInfo):
    # tarfile reads a GNU long name or a pax header whole into memory, whatever size it claims.
    def _proc_member(self, tf):
        if self.type in (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE,
                         tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE) and self.size > MAX_EXT_HEADER:
            raise tarfile.ReadError(f"extended header of {self.size} bytes")
        return super()._proc_member(tf)


def zip_pending(member) -> int:
    """Compressed bytes a zip member has read ahead but not inflated yet.

    ZipExtFile.read(n) reads n compressed bytes for n wanted, so on a bomb most of what it read
    is still waiting; without this the ratio would look 1:1 for the first megabyte of input.
    Private, so read defensively: without it the ratio is merely measured later.
    """
    return len(getattr(getattr(member, "_decompressor", None), "unconsumed_tail", b""))


def mode_reason(mode: int) -> str | None:
    """Why a zip member with these Unix mode bits is skipped, or None for a regular file."""
    kind = stat.S_IFMT(mode)
    if kind in (0, stat.S_IFREG, stat.S_IFDIR):   # a directory without a trailing "/" reads as empty
        return None
    return {stat.S_IFLNK: "symlink", stat.S_IFCHR: "device", stat.S_IFBLK: "device",
            stat.S_IFIFO: "fifo"}.get(kind, "special file")


def tar_reason(m: tarfile.TarInfo) -> str | None:
    """Why a tar member is skipped, or None for a regular file."""
    if m.isreg():
        return None
    if m.issym():
        return "symlink"
    if m.islnk():
        return "hardlink"
    if m.ischr() or m.isblk():
        return "device"
    return "fifo" if m.isfifo() else "special file"


def check_overlap(infos: list[zipfile.ZipInfo], label: str) -> None:
    # Overlapping entries (bamsoftware's zip bomb) make one compressed kernel count many times.
    # Python only rejects them from 3.11.8; a member's data must end before the next header.
    spans = sorted((i.header_offset, i.header_offset + 30 + len(i.orig_filename.encode(
        "utf-8" if i.flag_bits & 0x800 else "cp437", "replace")) + i.compress_size) for i in infos)
    if any(end > nxt for (_, end), (nxt, _) in zip(spans, spans[1:])):
        raise BundleError(f"{label}: overlapping zip entries (possible zip bomb)")
