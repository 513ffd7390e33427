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

import os
import shutil
import stat
import tarfile
import tempfile
import zipfile

from analyzers import layouts, textio
from analyzers.archives import (DECOMPRESSORS, READ_ERRORS, Budget, Corrupt, Meter, SafeTarInfo, check_overlap,
                                mode_reason, tar_reason, zip_pending)
from analyzers.bundle_assembly import PathItem, assemble
from analyzers.model import BundleError, Limits, Skipped, StagedBundle
from analyzers.paths import (decode_zip_name, escape_name, expected_archive, fix_name,
                             safe_member_path, strip_archive_suffix)
from analyzers.staged_files import StagedFiles
from analyzers.textio import archive_format

NOT_ARCHIVES = (".jar", ".war", ".ear", ".apk", ".whl", ".egg", ".docx", ".xlsx", ".pptx", ".odt")


def stage_bundle(paths: list[str], workdir: str, limits: Limits = Limits()) -> StagedBundle:
    """Stage archives, directories and files (see the module docstring for the policies)."""
    outdir = tempfile.mkdtemp(prefix="staged-", dir=workdir)
    try:
        stager = _Stager(outdir, limits)
        items = [stager.stage_path(p) for p in paths]
        return assemble(items, stager.notes, stager.damage)
    except BaseException:
        shutil.rmtree(outdir, ignore_errors=True)     # a rejected bundle leaves nothing behind
        raise


class _Stager:
    """Walks every PATH once: directories, archives and the members inside them, down to the
    text files it keeps (written by StagedFiles). The budget (analyzers/archives.py) spans all
    PATHs; what one PATH gave goes into its PathItem (analyzers/bundle_assembly.py)."""

    def __init__(self, outdir: str, limits: Limits):
        self.outdir, self.limits = outdir, limits
        self.budget = Budget(limits)              # bytes and files, across every PATH
        self.output = StagedFiles(outdir)
        self.notes: list[str] = []
        self.damage: list[str] = []
        self.item = PathItem("")
        self.seen: set[str] = set()

    def stage_path(self, path: str) -> PathItem:
        path = os.path.abspath(path)
        self.budget.label = escape_name(fix_name(os.path.basename(path) or path))   # goes into messages
        self.seen = set()
        if os.path.isdir(path):
            self.item = PathItem(self.budget.label)
            self._walk(path)
        elif os.path.isfile(path):
            label = self.budget.label
            self.item = PathItem(strip_archive_suffix(label) if expected_archive(label) else
                                 os.path.basename(os.path.dirname(path)) or label)
            self._top_file(path)
        elif os.path.exists(path):
            raise BundleError(f"{path}: not a regular file or directory")
        else:
            raise BundleError(f"{path}: no such file or directory")
        return self.item

    def _skip(self, rel: str, reason: str) -> None:
        self.item.skipped.append(Skipped(escape_name(rel), reason))

    def _damaged(self, err: Exception, member: str | None, after: bool = False) -> None:
        where = f" {'after' if after else 'at'} member {escape_name(member)}" if member else ""
        msg = f"{self.budget.label}: archive corrupt{where} ({err})"
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
                self.budget.count()
                try:
                    safe_member_path(rel)
                except ValueError as e:
                    self._skip(rel, str(e))
                    continue
                with open(full, "rb") as f:
                    self.budget.member = rel
                    self._entry(rel, textio.read_head(f), f, 0, disk=full)

    def _top_file(self, path: str) -> None:
        self.budget.count()
        with open(path, "rb") as f:
            head = textio.read_head(f)
            what = expected_archive(self.budget.label)
            if what and not archive_format(head, "tar" in what):
                raise BundleError(f"{self.budget.label}: not {what} ({textio.describe(head)})")
            self.budget.member = self.budget.label
            self._entry(self.budget.label, head, f, 0, disk=path, prefix="")

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
        stream = Meter(self.budget, DECOMPRESSORS[fmt](raw), raw)
        try:
            # 1 KiB tells a tar (an empty one is 1 KiB of zeros); a short truncated .tgz then
            # fails at its member, not here.
            inner = textio.read_head(stream, 1024)
            if archive_format(inner, "tar" in (expected_archive(rel) or "")) == "tar":   # .tgz: one layer
                return self._tar(textio.Prefixed(inner, stream), depth, prefix, stream)
            inner += textio.read_head(stream, textio.SAMPLE_BYTES - len(inner))
            self._entry(strip_archive_suffix(rel), inner, stream, depth + 1)   # app.log.2.gz -> app.log.2
        except Corrupt as e:
            self._damaged(e, None if rel == self.budget.label else rel)

    def _zip(self, rel: str, head: bytes, src, depth: int, disk: str | None, prefix: str) -> None:
        spool = None if disk else self.output.spool(head, src)   # ZipFile must seek: copy a nested zip out
        try:
            with open(disk or spool, "rb") as f:
                raw = textio.Counted(f)
                try:
                    self.budget.check_zip_directory(f)
                    zf = zipfile.ZipFile(raw)
                except (zipfile.BadZipFile, *READ_ERRORS) as e:
                    return self._damaged(e, None if rel == self.budget.label else rel)
                with zf:
                    infos = zf.infolist()
                    check_overlap(infos, self.budget.label)
                    for info in infos:
                        if not info.is_dir():
                            self._zip_member(zf, info, raw, depth, prefix)
        finally:
            if spool:
                os.remove(spool)

    def _zip_member(self, zf: zipfile.ZipFile, info: zipfile.ZipInfo, raw, depth: int, prefix: str) -> None:
        self.budget.count()
        # orig_filename: zipfile cuts .filename at a NUL, which would hide it from the name check
        rel = self._member_path(prefix, decode_zip_name(info.orig_filename, bool(info.flag_bits & 0x800)))
        if rel is None:
            return
        reason = "encrypted" if info.flag_bits & 1 else mode_reason(info.external_attr >> 16)
        if reason:
            return self._skip(rel, reason)
        self.budget.member = rel
        try:
            with zf.open(info) as m:
                stream = Meter(self.budget, m, raw, lambda: zip_pending(m))
                self._entry(rel, textio.read_head(stream), stream, depth + 1)
        except NotImplementedError as e:          # deflate64, zstd, ...
            self._skip(rel, f"unsupported compression ({e})")
        except (Corrupt, zipfile.BadZipFile, *READ_ERRORS) as e:
            self._damaged(e, rel)

    def _tar(self, src, depth: int, prefix: str, meter: _Meter | None = None) -> None:
        reading, last = None, None
        try:
            with tarfile.open(fileobj=src, mode="r|", tarinfo=SafeTarInfo) as tf:
                while (m := tf.next()) is not None:
                    tf.members.clear()             # stream mode still keeps every header otherwise
                    if m.isdir():
                        continue
                    self.budget.count()
                    rel = self._member_path(prefix, fix_name(m.name))
                    if rel is None:
                        continue
                    reason = tar_reason(m)
                    if reason:
                        self._skip(rel, reason)
                        continue
                    reading = self.budget.member = rel
                    if meter:
                        meter.restart()
                    f = tf.extractfile(m)
                    self._entry(rel, textio.read_head(f), f, depth + 1)
                    reading, last = None, rel
        except (Corrupt, tarfile.TarError) as e:
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
        disk, size = self.output.text(head, src, encoding, disk)
        self.seen.add(rel)
        self.item.files.append((rel, disk, size, encoding, None))

    def _split(self, rel: str, head: bytes, src, encoding: str, demuxer: layouts.Demuxer) -> None:
        """A collector's stream of many hosts' logs: one staged file per section (layouts)."""
        sections = self.output.split(head, src, encoding, demuxer, self.budget.count)
        self.seen.add(rel)
        self.notes.append(f"{rel}: read as the output of `{demuxer.label}`: {len(sections)} files")
        for section, disk, size in sections:
            self.item.files.append((f"{rel}/{section.name}", disk, size, encoding, section))

def _rel(root: str, full: str) -> str:
    return fix_name(os.path.relpath(full, root).replace(os.sep, "/"))


