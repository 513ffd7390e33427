"""Stage a bundle: archives, directories and log files -> UTF-8 files on disk, with host and component.

    stage_bundle(["incident.zip"], "/tmp/work") -> StagedBundle(files=[BundleFile(
        path="hadoop-080-037/kern.log", disk_path="/tmp/work/staged-x1/000001.log", ...)], ...)

Policies (reliability-notes C3, C4):

- Formats by magic bytes, never by extension: gzip, zip, bzip2, xz, tar ("ustar" at 257).
  A PATH named like an archive that is none raises BundleError("x.zip: not a zip archive (...)");
  such a member inside a bundle is skipped ("not a zip archive") instead.
- Nothing is extracted. Members are streamed into files named by us (<workdir>/staged-*/000001.log);
  member names are labels only. Links, devices, FIFOs, absolute or "..", over-long and control-
  character names are skipped and listed. In directories, symlinks and special files are skipped.
- Limits count bytes actually produced by decompressors, shared by every nesting level: past
  max_unpacked_bytes, past max_ratio for one member once it has produced 1 MiB, past max_files,
  or with overlapping zip entries -> BundleError naming the PATH and the member. Archives nested
  deeper than max_depth are skipped ("nested too deep"). A binary member is never inflated past
  its first 64 KiB, unless a tar stream must run through it (and then it is metered).
- Damaged archives: the damaged member is dropped ("archive corrupt") with a note
  "x.tgz: archive corrupt at member y (...)"; members read before it are kept. A zip goes on with
  its next member (its central directory locates each one); a tar or gzip stream stops there.
  If the whole bundle then holds no file, BundleError with the first such message.
- Encodings from the first 64 KiB (textio.sniff): utf-8 is kept byte for byte, and files given as
  a directory or a file are referenced in place; utf-8-sig, utf-16-le/be, gb18030 and
  "utf-8-replace" (neither: bad bytes -> U+FFFD) are rewritten as UTF-8. BundleFile.encoding keeps
  the name. Only the sample is checked, so readers decode disk_path with errors="replace".
- Everything moves in 1 MiB chunks; no file, member or line is ever held whole in memory.
- On BundleError nothing staged is left in workdir.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections import Counter
from dataclasses import dataclass, field

from analyzers import layouts, textio
from analyzers.hosts import describe_file, strip_wrapper, wrapper_depth
from analyzers.layouts.folders import folder_sections
from analyzers.layouts.stream import decoded_chunks, lines_of, split_stream
from analyzers.model import BundleError, BundleFile, Limits, Skipped, StagedBundle
from analyzers.paths import (decode_zip_name, escape_name, expected_archive, fix_name,
                             safe_member_path, strip_archive_suffix)
from analyzers.textio import archive_format

CHUNK = textio.CHUNK
RATIO_FLOOR = 1 << 20          # below 1 MiB a high ratio is just a small repetitive log
MAX_EXT_HEADER = 1 << 20       # a GNU long name or pax header bigger than this is an attack
ZIP_DIR_BYTES_PER_FILE = 1024  # central directory budget per allowed file: ZipFile loads it whole
NOT_ARCHIVES = (".jar", ".war", ".ear", ".apk", ".whl", ".egg", ".docx", ".xlsx", ".pptx", ".odt")
DECOMPRESSORS = {"gzip": lambda f: gzip.GzipFile(fileobj=f, mode="rb"),
                 "bz2": lambda f: bz2.BZ2File(f, "rb"), "xz": lambda f: lzma.LZMAFile(f, "rb")}
# Errors of reading damaged compressed data (gzip and bz2 raise OSError subclasses).
READ_ERRORS = (EOFError, OSError, zlib.error, lzma.LZMAError, zipfile.BadZipFile, tarfile.TarError)


class _Corrupt(Exception):
    """Damaged archive data, raised while reading a member."""


def stage_bundle(paths: list[str], workdir: str, limits: Limits = Limits()) -> StagedBundle:
    """Stage archives, directories and files (see the module docstring for the policies)."""
    outdir = tempfile.mkdtemp(prefix="staged-", dir=workdir)
    try:
        stager = _Stager(outdir, limits)
        items = [stager.stage_path(p) for p in paths]
        return _assemble(items, stager)
    except BaseException:
        shutil.rmtree(outdir, ignore_errors=True)     # a rejected bundle leaves nothing behind
        raise


@dataclass
class _Item:
    """What one PATH argument gave: (bundle path, disk path, size, encoding, section) and skips.

    section: the collector-layout section (layouts.Section) a file was split from, else None.
    """
    prefix: str
    files: list[tuple[str, str, int, str, layouts.Section | None]] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def unwrap(self) -> None:
        """Drop the folders that only wrap this PATH's files (hosts.wrapper_depth).

        A file split from a collector's stream counts as the stream: "app.log/dn1/c_01/stderr"
        sits in no folder "app.log/dn1/"."""
        depth = wrapper_depth([_stream_path(rel, section) for rel, _, _, _, section in self.files]
                              + [s.path for s in self.skipped])
        if depth and self.files:                  # with nothing to analyse, name skips in full
            self.files = [(strip_wrapper(rel, depth), *rest) for rel, *rest in self.files]
            self.skipped = [Skipped(strip_wrapper(s.path, depth), s.reason) for s in self.skipped]


def _stream_path(rel: str, section: layouts.Section | None) -> str:
    return rel[: -len(section.name) - 1] if section is not None else rel


def _assemble(items: list[_Item], stager: _Stager) -> StagedBundle:
    # Several PATHs are merged at the root unless their paths collide; then each gets its name.
    for item in items:
        item.unwrap()
    names = Counter(rel for item in items for rel in {f[0] for f in item.files})
    collide = any(n > 1 for n in names.values())
    prefixes: Counter[str] = Counter()
    out = StagedBundle(notes=stager.notes)
    placed = folder_sections([f[0] for item in items for f in item.files])
    for item in items:
        prefixes[item.prefix] += 1
        prefix = item.prefix if prefixes[item.prefix] == 1 else f"{item.prefix}-{prefixes[item.prefix]}"
        for rel, disk, size, encoding, section in item.files:
            section = section or placed.get(rel)
            path = f"{prefix}/{rel}" if collide else rel
            host, component, kind = describe_file(path, disk, section)
            out.files.append(BundleFile(path, disk, size, host, component, kind, encoding))
        out.skipped += [Skipped(f"{prefix}/{s.path}" if collide else s.path, s.reason) for s in item.skipped]
    out.total_bytes = sum(f.size for f in out.files)
    if not out.files:
        if stager.damage:
            raise BundleError(stager.damage[0])
        out.notes.append("no log files found")
    return out


class _Meter:
    """Counts what comes out of a decompressor and stops a bomb early.

    `compressed` counts what went in, so the ratio is measured on bytes actually read,
    never on sizes an archive header claims.
    """

    def __init__(self, stager: _Stager, src, compressed: textio.Counted, pending=lambda: 0):
        self.stager, self.src, self.compressed, self.pending = stager, src, compressed, pending
        self.restart()

    def restart(self) -> None:
        """Measure the ratio afresh: a .tgz is one stream, but the ratio is per member."""
        self.base, self.count = self.compressed.count - self.pending(), 0

    def read(self, n: int = -1) -> bytes:
        n = CHUNK if n is None or n < 0 else min(n, CHUNK)
        try:
            data = self.src.read(n)
        except READ_ERRORS as e:
            raise _Corrupt(str(e) or type(e).__name__) from e
        self.count += len(data)
        self.stager.produced(len(data))
        limit = self.stager.limits.max_ratio
        used = self.compressed.count - self.base - self.pending()
        if self.count > RATIO_FLOOR and self.count > limit * max(1, used):
            raise BundleError(f"{self.stager.label}: member {self.stager.member} expands more than "
                              f"{limit}:1 (possible zip bomb); stopped after {self.count} bytes")
        return data


class _TarInfo(tarfile.TarInfo):
    # tarfile reads a GNU long name or a pax header whole into memory, whatever size it claims.
    def _proc_member(self, tf):
        if self.type in (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE,
                         tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE) and self.size > MAX_EXT_HEADER:
            raise tarfile.ReadError(f"extended header of {self.size} bytes")
        return super()._proc_member(tf)


class _Stager:
    """Walks every PATH once, writing what it keeps into outdir; the limits span all PATHs."""

    def __init__(self, outdir: str, limits: Limits):
        self.outdir, self.limits = outdir, limits
        self.unpacked = self.files = self.seq = 0
        self.label = self.member = ""             # the PATH and member being read, for messages
        self.notes: list[str] = []
        self.damage: list[str] = []
        self.item = _Item("")
        self.seen: set[str] = set()

    def stage_path(self, path: str) -> _Item:
        path = os.path.abspath(path)
        self.label = escape_name(fix_name(os.path.basename(path) or path))   # goes into messages
        self.seen = set()
        if os.path.isdir(path):
            self.item = _Item(self.label)
            self._walk(path)
        elif os.path.isfile(path):
            self.item = _Item(strip_archive_suffix(self.label) if expected_archive(self.label) else
                              os.path.basename(os.path.dirname(path)) or self.label)
            self._top_file(path)
        elif os.path.exists(path):
            raise BundleError(f"{path}: not a regular file or directory")
        else:
            raise BundleError(f"{path}: no such file or directory")
        return self.item

    def produced(self, n: int) -> None:
        self.unpacked += n
        if self.unpacked > self.limits.max_unpacked_bytes:
            raise BundleError(f"{self.label}: expands beyond {self.limits.max_unpacked_bytes} bytes "
                              f"(at member {self.member})")

    def _count(self) -> None:
        self.files += 1
        if self.files > self.limits.max_files:
            raise BundleError(f"{self.label}: more than {self.limits.max_files} files")

    def _skip(self, rel: str, reason: str) -> None:
        self.item.skipped.append(Skipped(escape_name(rel), reason))

    def _damaged(self, err: Exception, member: str | None, after: bool = False) -> None:
        where = f" {'after' if after else 'at'} member {escape_name(member)}" if member else ""
        msg = f"{self.label}: archive corrupt{where} ({err})"
        self.notes.append(msg)
        self.damage.append(msg)
        if member and not after:
            self._skip(member, "archive corrupt")

    def _walk(self, root: str) -> None:
        ours = os.path.realpath(self.outdir)
        for top, dirs, names in os.walk(root):
            dirs[:] = sorted(d for d in dirs if os.path.realpath(os.path.join(top, d)) != ours)  # not our output
            for d in [d for d in dirs if os.path.islink(os.path.join(top, d))]:
                self._skip(_rel(root, os.path.join(top, d)), "symlink")
            for name in sorted(names):
                full = os.path.join(top, name)
                rel = _rel(root, full)
                mode = os.lstat(full).st_mode
                if stat.S_ISLNK(mode) or not stat.S_ISREG(mode):   # a FIFO would block forever
                    self._skip(rel, "symlink" if stat.S_ISLNK(mode) else "special file")
                    continue
                self._count()
                try:
                    safe_member_path(rel)
                except ValueError as e:
                    self._skip(rel, str(e))
                    continue
                with open(full, "rb") as f:
                    self.member = rel
                    self._entry(rel, textio.read_head(f), f, 0, disk=full)

    def _top_file(self, path: str) -> None:
        self._count()
        with open(path, "rb") as f:
            head = textio.read_head(f)
            what = expected_archive(self.label)
            if what and not archive_format(head, "tar" in what):
                raise BundleError(f"{self.label}: not {what} ({textio.describe(head)})")
            self.member = self.label
            self._entry(self.label, head, f, 0, disk=path, prefix="")

    def _entry(self, rel: str, head: bytes, src, depth: int, disk: str | None = None,
               prefix: str | None = None) -> None:
        """One file's bytes, whatever they are: an archive to expand, text to stage, or a skip."""
        fmt = archive_format(head, "tar" in (expected_archive(rel) or ""))
        if fmt and rel.lower().endswith(NOT_ARCHIVES):
            return self._skip(rel, "binary")
        if not fmt and expected_archive(rel):
            return self._skip(rel, f"not {expected_archive(rel)}")
        if not fmt:
            return self._text(rel, head, src, disk)
        if depth > self.limits.max_depth:
            return self._skip(rel, "nested too deep")
        prefix = strip_archive_suffix(rel) if prefix is None else prefix
        if fmt == "zip":
            self._zip(rel, head, src, depth, disk, prefix)
        elif fmt == "tar":
            self._tar(textio.Prefixed(head, src), depth, prefix)
        else:
            self._decompress(fmt, rel, head, src, depth, prefix)

    def _decompress(self, fmt: str, rel: str, head: bytes, src, depth: int, prefix: str) -> None:
        raw = textio.Counted(textio.Prefixed(head, src))
        stream = _Meter(self, DECOMPRESSORS[fmt](raw), raw)
        try:
            # 1 KiB tells a tar (an empty one is 1 KiB of zeros); a short truncated .tgz then
            # fails at its member, not here.
            inner = textio.read_head(stream, 1024)
            if archive_format(inner, "tar" in (expected_archive(rel) or "")) == "tar":   # .tgz: one layer
                return self._tar(textio.Prefixed(inner, stream), depth, prefix, stream)
            inner += textio.read_head(stream, textio.SAMPLE_BYTES - len(inner))
            self._entry(strip_archive_suffix(rel), inner, stream, depth + 1)   # app.log.2.gz -> app.log.2
        except _Corrupt as e:
            self._damaged(e, None if rel == self.label else rel)

    def _zip(self, rel: str, head: bytes, src, depth: int, disk: str | None, prefix: str) -> None:
        spool = None if disk else self._spool(head, src)   # ZipFile must seek: copy a nested zip out
        try:
            with open(disk or spool, "rb") as f:
                raw = textio.Counted(f)
                try:
                    self._check_zip_directory(f)
                    zf = zipfile.ZipFile(raw)
                except (zipfile.BadZipFile, *READ_ERRORS) as e:
                    return self._damaged(e, None if rel == self.label else rel)
                with zf:
                    infos = zf.infolist()
                    _check_overlap(infos, self.label)
                    for info in infos:
                        if not info.is_dir():
                            self._zip_member(zf, info, raw, depth, prefix)
        finally:
            if spool:
                os.remove(spool)

    def _zip_member(self, zf: zipfile.ZipFile, info: zipfile.ZipInfo, raw, depth: int, prefix: str) -> None:
        self._count()
        # orig_filename: zipfile cuts .filename at a NUL, which would hide it from the name check
        rel = self._member_path(prefix, decode_zip_name(info.orig_filename, bool(info.flag_bits & 0x800)))
        if rel is None:
            return
        reason = "encrypted" if info.flag_bits & 1 else _mode_reason(info.external_attr >> 16)
        if reason:
            return self._skip(rel, reason)
        self.member = rel
        try:
            with zf.open(info) as m:
                stream = _Meter(self, m, raw, lambda: _zip_pending(m))
                self._entry(rel, textio.read_head(stream), stream, depth + 1)
        except NotImplementedError as e:          # deflate64, zstd, ...
            self._skip(rel, f"unsupported compression ({e})")
        except (_Corrupt, zipfile.BadZipFile, *READ_ERRORS) as e:
            self._damaged(e, rel)

    def _tar(self, src, depth: int, prefix: str, meter: _Meter | None = None) -> None:
        reading, last = None, None
        try:
            with tarfile.open(fileobj=src, mode="r|", tarinfo=_TarInfo) as tf:
                while (m := tf.next()) is not None:
                    tf.members.clear()             # stream mode still keeps every header otherwise
                    if m.isdir():
                        continue
                    self._count()
                    rel = self._member_path(prefix, fix_name(m.name))
                    if rel is None:
                        continue
                    reason = _tar_reason(m)
                    if reason:
                        self._skip(rel, reason)
                        continue
                    reading = self.member = rel
                    if meter:
                        meter.restart()
                    f = tf.extractfile(m)
                    self._entry(rel, textio.read_head(f), f, depth + 1)
                    reading, last = None, rel
        except (_Corrupt, tarfile.TarError) as e:
            self._damaged(e, reading or last, after=reading is None)

    def _member_path(self, prefix: str, name: str) -> str | None:
        try:
            clean = safe_member_path(name)
        except ValueError as e:
            self._skip(f"{prefix}/{name}" if prefix else name, str(e))
            return None
        return None if clean is None else f"{prefix}/{clean}" if prefix else clean

    def _text(self, rel: str, head: bytes, src, disk: str | None) -> None:
        encoding = textio.sniff(head, at_eof=len(head) < textio.SAMPLE_BYTES)
        if rel in self.seen:
            return self._skip(rel, "duplicate name")
        if encoding is None or not head:
            return self._skip(rel, "binary" if head else "empty")
        demuxer = layouts.detect(head.decode(textio.CODECS.get(encoding, "utf-8"), "replace"))
        if demuxer is not None:
            return self._split(rel, head, src, encoding, demuxer)
        if disk and encoding == "utf-8":          # a plain file: scanned where it is, no copy
            size = os.path.getsize(disk)
        else:
            disk = self._new_file(".log")
            try:
                with open(disk, "wb") as out:
                    size = textio.copy_utf8(head, src, out, encoding)
            except BaseException:
                os.remove(disk)
                raise
        self.seen.add(rel)
        self.item.files.append((rel, disk, size, encoding, None))

    def _split(self, rel: str, head: bytes, src, encoding: str, demuxer: layouts.Demuxer) -> None:
        """A collector's stream of many hosts' logs: one staged file per section (layouts)."""
        def new_file(section: layouts.Section) -> str:
            if first:
                first.pop()
            else:
                self._count()
            return self._new_file(".log")

        first = [True]                            # the stream itself was counted as one file
        sections = split_stream(demuxer, lines_of(decoded_chunks(head, src, encoding)), new_file)
        self.seen.add(rel)
        self.notes.append(f"{rel}: read as the output of `{demuxer.label}`: {len(sections)} files")
        for section, disk, size in sections:
            self.item.files.append((f"{rel}/{section.name}", disk, size, encoding, section))

    def _spool(self, head: bytes, src) -> str:
        path = self._new_file(".zip")
        with open(path, "wb") as out:
            textio.copy_utf8(head, src, out, "utf-8")   # "utf-8" = a plain byte copy
        return path

    def _new_file(self, suffix: str) -> str:
        self.seq += 1
        return os.path.join(self.outdir, f"{self.seq:06d}{suffix}")

    def _check_zip_directory(self, f) -> None:
        # ZipFile parses the whole central directory into memory before we can count: read
        # the end record first (a private helper, but the only parser of it in the stdlib).
        end = zipfile._EndRecData(f)
        if end is None:
            return                                # ZipFile raises a clear BadZipFile
        entries, size = end[zipfile._ECD_ENTRIES_TOTAL], end[zipfile._ECD_SIZE]
        if entries > self.limits.max_files or size > self.limits.max_files * ZIP_DIR_BYTES_PER_FILE:
            raise BundleError(f"{self.label}: more than {self.limits.max_files} files")


def _rel(root: str, full: str) -> str:
    return fix_name(os.path.relpath(full, root).replace(os.sep, "/"))


def _zip_pending(member) -> int:
    """Compressed bytes a zip member has read ahead but not inflated yet.

    ZipExtFile.read(n) reads n compressed bytes for n wanted, so on a bomb most of what it read
    is still waiting; without this the ratio would look 1:1 for the first megabyte of input.
    Private, so read defensively: without it the ratio is merely measured later.
    """
    return len(getattr(getattr(member, "_decompressor", None), "unconsumed_tail", b""))


def _mode_reason(mode: int) -> str | None:
    kind = stat.S_IFMT(mode)
    if kind in (0, stat.S_IFREG, stat.S_IFDIR):   # a directory without a trailing "/" reads as empty
        return None
    return {stat.S_IFLNK: "symlink", stat.S_IFCHR: "device", stat.S_IFBLK: "device",
            stat.S_IFIFO: "fifo"}.get(kind, "special file")


def _tar_reason(m: tarfile.TarInfo) -> str | None:
    if m.isreg():
        return None
    if m.issym():
        return "symlink"
    if m.islnk():
        return "hardlink"
    if m.ischr() or m.isblk():
        return "device"
    return "fifo" if m.isfifo() else "special file"


def _check_overlap(infos: list[zipfile.ZipInfo], label: str) -> None:
    # Overlapping entries (bamsoftware's zip bomb) make one compressed kernel count many times.
    # Python only rejects them from 3.11.8; a member's data must end before the next header.
    spans = sorted((i.header_offset, i.header_offset + 30 + len(i.orig_filename.encode(
        "utf-8" if i.flag_bits & 0x800 else "cp437", "replace")) + i.compress_size) for i in infos)
    if any(end > nxt for (_, end), (nxt, _) in zip(spans, spans[1:])):
        raise BundleError(f"{label}: overlapping zip entries (possible zip bomb)")
