"""stage_bundle on hostile and messy input (docs/reliability.md C3, C4, checks U1-U15).

Every archive is built here, in tmp_path; no binary fixture is committed.
"""

from __future__ import annotations

import bz2
import gzip
import io
import os
import random
import stat
import struct
import tarfile
import time
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from analyzers.bundle import stage_bundle
from analyzers.model import BundleError, Limits

OOM = b"java.lang.OutOfMemoryError: Java heap space\n"
LINE = b"2019-04-23 17:38:05,591 INFO  org.apache.hadoop.hdfs.DFSClient - ok\n"


# ---- helpers --------------------------------------------------------------------------------

def make_zip(path: Path, members, compression=zipfile.ZIP_DEFLATED) -> Path:
    """members: {name: bytes} or [(name | ZipInfo, bytes)]."""
    with zipfile.ZipFile(path, "w", compression) as zf:
        for name, data in (members.items() if isinstance(members, dict) else members):
            zf.writestr(name, data)
    return path


def tar_entry(name: str, data: bytes = b"", type_=tarfile.REGTYPE, linkname: str = "") -> tuple:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.size = type_, linkname, len(data) if type_ == tarfile.REGTYPE else 0
    return info, data


def make_tar(path: Path, entries, mode: str = "w:gz", fmt=tarfile.PAX_FORMAT) -> Path:
    """entries: {name: bytes} or [tar_entry(...)]."""
    if isinstance(entries, dict):
        entries = [tar_entry(n, d) for n, d in entries.items()]
    with tarfile.open(path, mode, format=fmt) as tf:
        for info, data in entries:
            tf.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return path


def stage(tmp_path: Path, *paths, **limits):
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return stage_bundle([str(p) for p in paths], str(work), Limits(**limits))


def by_path(staged) -> dict:
    return {f.path: f for f in staged.files}


def skips(staged) -> dict:
    return {s.path: s.reason for s in staged.skipped}


def text_of(f) -> str:
    return Path(f.disk_path).read_text(encoding="utf-8")


def snapshot(root: Path, exclude: Path) -> set[str]:
    """Every path under root, except the workdir and what is inside it."""
    out = set()
    for top, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if Path(top, d) != exclude]
        out |= {os.path.join(top, n) for n in dirs + names}
    return out


def patch_central(zip_path: Path, name: bytes, offset: int, fmt: str, value: int) -> None:
    """Overwrite one field of a central directory entry (zipfile cannot write hostile ones)."""
    data = bytearray(zip_path.read_bytes())
    pos = data.index(b"PK\x01\x02")
    while pos >= 0:
        name_len = struct.unpack_from("<H", data, pos + 28)[0]
        if bytes(data[pos + 46:pos + 46 + name_len]) == name:
            struct.pack_into(fmt, data, pos + offset, value)
            zip_path.write_bytes(bytes(data))
            return
        pos = data.find(b"PK\x01\x02", pos + 46)
    raise AssertionError(f"no entry {name!r}")


def file_state(path: str):
    st = os.stat(path)
    return st.st_mtime_ns, st.st_size


def words(n_bytes: int, seed: int = 1) -> bytes:
    """Log-like text that compresses about 3:1, like real logs."""
    rng = random.Random(seed)
    vocab = [b"block", b"datanode", b"pipeline", b"ack", b"checkpoint", b"region", b"INFO", b"WARN",
             b"blk_1073741825", b"10.0.0.5:50010", b"slow", b"flush"]
    out = bytearray()
    while len(out) < n_bytes:
        out += b" ".join(rng.choice(vocab) for _ in range(12)) + f" {rng.random()}\n".encode()
    return bytes(out[:n_bytes])


def bomb_zip(path: Path, name: str, size: int, block: bytes = LINE) -> Path:
    """One member of `size` bytes of `block` repeated: a log line compresses about 290:1."""
    chunk = block * ((1 << 20) // len(block))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf, zf.open(name, "w", force_zip64=True) as m:
        for _ in range(size // len(chunk)):
            m.write(chunk)
    return path


# ---- ordinary bundles -----------------------------------------------------------------------

def test_it_references_plain_utf8_files_of_a_directory_in_place(tmp_path):
    src = tmp_path / "bundle"
    (src / "hadoop-080-037").mkdir(parents=True)
    (src / "hadoop-080-037" / "kern.log").write_bytes(LINE)
    (src / "flink-root-taskexecutor-0-worker7.log").write_bytes(LINE + OOM)
    staged = stage(tmp_path, src)
    files = by_path(staged)
    assert set(files) == {"hadoop-080-037/kern.log", "flink-root-taskexecutor-0-worker7.log"}
    kern = files["hadoop-080-037/kern.log"]
    assert kern.disk_path == str(src / "hadoop-080-037" / "kern.log")       # no copy
    assert (kern.host, kern.component, kern.kind, kern.encoding) == ("hadoop-080-037", "kernel", "log", "utf-8")
    tm = files["flink-root-taskexecutor-0-worker7.log"]
    assert (tm.host, tm.component) == ("worker7", "flink-taskmanager")
    assert staged.total_bytes == len(LINE) * 2 + len(OOM) and staged.skipped == [] and staged.notes == []


def test_it_streams_zip_members_into_files_it_names_itself(tmp_path):
    z = make_zip(tmp_path / "b.zip", {"dn2/hadoop-hdfs-datanode.log": LINE,
                                      "dn2/conf/hdfs-site.xml": b"<configuration/>\n"})
    staged = stage(tmp_path, z)
    files = by_path(staged)
    log = files["dn2/hadoop-hdfs-datanode.log"]
    assert Path(log.disk_path).parent.parent == tmp_path / "work"
    assert Path(log.disk_path).name == "000001.log" and Path(log.disk_path).read_bytes() == LINE
    assert (log.host, log.component, log.size) == ("dn2", "hdfs-datanode", len(LINE))
    assert files["dn2/conf/hdfs-site.xml"].kind == "config"


def test_it_merges_several_paths_at_the_root_unless_names_collide(tmp_path):
    a = make_tar(tmp_path / "dn2.tgz", {"hadoop-hdfs-datanode.log": LINE})
    b = make_zip(tmp_path / "nn1.zip", {"hadoop-hdfs-namenode.log": LINE})
    assert set(by_path(stage(tmp_path, a, b))) == {"hadoop-hdfs-datanode.log", "hadoop-hdfs-namenode.log"}
    c = make_zip(tmp_path / "dn3.zip", {"hadoop-hdfs-datanode.log": LINE})
    files = by_path(stage(tmp_path, a, c))
    assert set(files) == {"dn2/hadoop-hdfs-datanode.log", "dn3/hadoop-hdfs-datanode.log"}
    assert files["dn3/hadoop-hdfs-datanode.log"].host == "dn3"
    (tmp_path / "hadoop-080-037").mkdir()
    (tmp_path / "hadoop-081-159").mkdir()
    k1, k2 = tmp_path / "hadoop-080-037" / "kern.log", tmp_path / "hadoop-081-159" / "kern.log"
    k1.write_bytes(LINE)
    k2.write_bytes(LINE)
    assert set(by_path(stage(tmp_path, k1, k2))) == {"hadoop-080-037/kern.log", "hadoop-081-159/kern.log"}


def test_it_expands_archives_found_in_a_directory_under_their_own_name(tmp_path):
    src = tmp_path / "incident-17"
    src.mkdir()
    make_tar(src / "dn2.tar.gz", {"hadoop-hdfs-datanode.log": LINE})
    (src / "kern.log.1.gz").write_bytes(gzip.compress(LINE))
    files = by_path(stage(tmp_path, src))
    assert set(files) == {"dn2/hadoop-hdfs-datanode.log", "kern.log.1"}
    assert (files["dn2/hadoop-hdfs-datanode.log"].host, files["kern.log.1"].component) == ("dn2", "kernel")


def test_it_rejects_missing_and_special_paths(tmp_path):
    with pytest.raises(BundleError, match=r"nope\.zip: no such file or directory$"):
        stage(tmp_path, tmp_path / "nope.zip")
    os.mkfifo(tmp_path / "pipe.log")
    with pytest.raises(BundleError, match=r"pipe\.log: not a regular file or directory$"):
        stage(tmp_path, tmp_path / "pipe.log")


def test_it_stages_inside_a_directory_it_is_reading_without_reading_itself(tmp_path):
    (tmp_path / "a.log").write_bytes(LINE)
    work = tmp_path / "work"
    work.mkdir()
    staged = stage_bundle([str(tmp_path)], str(work))
    assert set(by_path(staged)) == {"a.log"}


def test_it_decompresses_rotated_gz_logs(tmp_path):
    gz = tmp_path / "hadoop-hdfs-namenode-nn1.log.2.gz"
    gz.write_bytes(gzip.compress(LINE + OOM))
    (f,) = stage(tmp_path, gz).files
    assert (f.path, f.host, f.component) == ("hadoop-hdfs-namenode-nn1.log.2", "nn1", "hdfs-namenode")
    assert text_of(f) == (LINE + OOM).decode()
    z = make_zip(tmp_path / "b.zip", {"dn2/app.log.2.gz": gzip.compress(OOM), "dn2/app.log": LINE})
    files = by_path(stage(tmp_path, z))
    assert set(files) == {"dn2/app.log.2", "dn2/app.log"} and text_of(files["dn2/app.log.2"]) == OOM.decode()


def test_it_detects_formats_by_content_not_extension(tmp_path):
    tar_bz2 = tmp_path / "b.tgz"                       # really a tar.bz2
    make_tar(tar_bz2, {"dn2/x.log": LINE}, mode="w:bz2")
    assert set(by_path(stage(tmp_path, tar_bz2))) == {"dn2/x.log"}
    txz = make_tar(tmp_path / "c.tar.xz", {"x.log": LINE}, mode="w:xz")
    assert set(by_path(stage(tmp_path, txz))) == {"x.log"}
    named_log = tmp_path / "really-a-zip.log"
    make_zip(named_log, {"y.log": LINE})
    assert set(by_path(stage(tmp_path, named_log))) == {"y.log"}


def test_it_rejects_a_text_file_named_zip(tmp_path):
    fake = tmp_path / "x.zip"
    fake.write_bytes(LINE * 20)
    with pytest.raises(BundleError, match=r"^x\.zip: not a zip archive \(it looks like text\)$"):
        stage(tmp_path, fake)
    t = make_tar(tmp_path / "b.tgz", {"x.zip": LINE, "ok.log": LINE})
    staged = stage(tmp_path, t)
    assert set(by_path(staged)) == {"ok.log"} and skips(staged) == {"x.zip": "not a zip archive"}


def test_it_rejects_garbage_that_claims_to_be_a_zip(tmp_path):
    bad = tmp_path / "x.zip"
    bad.write_bytes(b"PK\x03\x04" + random.Random(0).randbytes(1020))
    with pytest.raises(BundleError, match=r"^x\.zip: archive corrupt \(File is not a zip file\)$"):
        stage(tmp_path, bad)
    assert os.listdir(tmp_path / "work") == []          # a rejected bundle leaves nothing


def test_it_says_no_log_files_for_empty_archives_and_bare_directories(tmp_path):
    empty_zip = make_zip(tmp_path / "e.zip", {})
    dirs_zip = make_zip(tmp_path / "d.zip", [(zipfile.ZipInfo("a/"), b""), (zipfile.ZipInfo("a/b/"), b"")])
    empty_tar = make_tar(tmp_path / "e.tar", {}, mode="w")
    empty_tgz = make_tar(tmp_path / "e.tgz", {})
    dirs_tgz = make_tar(tmp_path / "d.tgz", [tar_entry("a", type_=tarfile.DIRTYPE)])
    (tmp_path / "zero.log").write_bytes(b"")
    for p in (empty_zip, dirs_zip, empty_tar, empty_tgz, dirs_tgz):
        staged = stage(tmp_path, p)
        assert (staged.files, staged.skipped, staged.notes) == ([], [], ["no log files found"]), p.name
    staged = stage(tmp_path, tmp_path / "zero.log")
    assert skips(staged) == {"zero.log": "empty"} and staged.notes == ["no log files found"]


# ---- traversal, links, special files, names -------------------------------------------------

def test_it_never_writes_outside_workdir_for_traversal_names_in_a_zip(tmp_path):
    (tmp_path / "outside").mkdir()
    evil_abs = str(tmp_path / "outside" / "evil.log")
    z = make_zip(tmp_path / "u1.zip", [("../../etc/passwd", b"root::0:0\n"), ("/etc/cron.d/x", b"* * * * * x\n"),
                                       ("..\\..\\win.ini", b"[x]\n"), (evil_abs, b"evil\n"),
                                       ("../outside/evil2.log", b"evil\n"), ("dn2/ok.log", LINE)])
    before, passwd = snapshot(tmp_path, tmp_path / "work"), file_state("/etc/passwd")
    staged = stage(tmp_path, z)
    assert snapshot(tmp_path, tmp_path / "work") == before and file_state("/etc/passwd") == passwd
    assert set(by_path(staged)) == {"dn2/ok.log"}
    assert skips(staged) == {"../../etc/passwd": "path traversal", "/etc/cron.d/x": "absolute path",
                             "..\\..\\win.ini": "path traversal", evil_abs: "absolute path",
                             "../outside/evil2.log": "path traversal"}


def test_it_never_writes_outside_workdir_for_traversal_names_in_a_tar(tmp_path):
    (tmp_path / "outside").mkdir()
    evil_abs = str(tmp_path / "outside" / "evil.log")
    t = make_tar(tmp_path / "u1.tgz", {"../../etc/passwd": b"x\n", "/etc/cron.d/x": b"x\n", "..\\..\\win.ini": b"x\n",
                                        evil_abs: b"x\n", "dn2/ok.log": LINE})
    before = snapshot(tmp_path, tmp_path / "work")
    staged = stage(tmp_path, t)
    assert snapshot(tmp_path, tmp_path / "work") == before and not os.path.exists(evil_abs)
    assert set(by_path(staged)) == {"dn2/ok.log"}
    assert skips(staged) == {"../../etc/passwd": "path traversal", "/etc/cron.d/x": "absolute path",
                             "..\\..\\win.ini": "path traversal", evil_abs: "absolute path"}


def test_it_skips_links_devices_and_fifos_in_a_tar(tmp_path):
    t = make_tar(tmp_path / "u2.tgz", [
        tar_entry("etc_link", type_=tarfile.SYMTYPE, linkname="/etc"),
        tar_entry("etc_link/passwd", b"from the archive\n"),
        tar_entry("h", type_=tarfile.LNKTYPE, linkname="/etc/shadow"),
        tar_entry("a", type_=tarfile.SYMTYPE, linkname="b"),
        tar_entry("b", type_=tarfile.SYMTYPE, linkname="../../.."),
        tar_entry("dev/sda", type_=tarfile.CHRTYPE),
        tar_entry("dev/loop0", type_=tarfile.BLKTYPE),
        tar_entry("fifo", type_=tarfile.FIFOTYPE),
        tar_entry("dn2/ok.log", LINE),
    ])
    before, passwd = snapshot(tmp_path, tmp_path / "work"), file_state("/etc/passwd")
    staged = stage(tmp_path, t)
    assert snapshot(tmp_path, tmp_path / "work") == before and file_state("/etc/passwd") == passwd
    assert skips(staged) == {"etc_link": "symlink", "h": "hardlink", "a": "symlink", "b": "symlink",
                             "dev/sda": "device", "dev/loop0": "device", "fifo": "fifo"}
    files = by_path(staged)
    assert set(files) == {"etc_link/passwd", "dn2/ok.log"}
    # a plain member whose name runs "through" the link: its own bytes, in a file we named
    assert text_of(files["etc_link/passwd"]) == "from the archive\n"
    assert Path(files["etc_link/passwd"].disk_path).parent.parent == tmp_path / "work"


def test_it_skips_symlinks_and_special_files_in_a_zip(tmp_path):
    link = zipfile.ZipInfo("etc_link")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    fifo = zipfile.ZipInfo("fifo")
    fifo.external_attr = (stat.S_IFIFO | 0o644) << 16
    z = make_zip(tmp_path / "l.zip", [(link, b"/etc"), (fifo, b""), ("secret.log", b"x"), ("ok.log", LINE)])
    patch_central(z, b"secret.log", 8, "<H", 0x1)          # general purpose flags: encrypted
    staged = stage(tmp_path, z)
    assert set(by_path(staged)) == {"ok.log"}
    assert skips(staged) == {"etc_link": "symlink", "fifo": "fifo", "secret.log": "encrypted"}


def test_it_skips_symlinks_and_fifos_in_a_directory(tmp_path):
    src = tmp_path / "bundle"
    src.mkdir()
    (src / "ok.log").write_bytes(LINE)
    (src / "passwd.log").symlink_to("/etc/passwd")
    (src / "etc").symlink_to("/etc")
    os.mkfifo(src / "pipe.log")                         # reading it would block forever
    staged = stage(tmp_path, src)
    assert set(by_path(staged)) == {"ok.log"}
    assert skips(staged) == {"passwd.log": "symlink", "etc": "symlink", "pipe.log": "special file"}


def test_it_skips_and_escapes_hostile_member_names(tmp_path):
    z = tmp_path / "n.zip"
    make_zip(z, [("evilX.log", b"x\n"), ("a\nb.log", b"x\n"), ("evil\u202egol.exe", b"x\n"),
                 ("x" * 300 + ".log", b"x\n"), ("<img src=x onerror=alert(1)>.log", LINE)])
    z.write_bytes(z.read_bytes().replace(b"evilX.log", b"evil\x00.log"))   # zipfile cannot write a NUL
    staged = stage(tmp_path, z)
    assert set(by_path(staged)) == {"<img src=x onerror=alert(1)>.log"}
    assert skips(staged) == {"evil\\x00.log": "control character in name", "a\\x0ab.log": "control character in name",
                             "evil\\u202egol.exe": "control character in name",
                             "x" * 300 + "...": "name too long"}


def test_it_reads_gbk_member_names(tmp_path):
    name = "数据节点.log".encode("gbk")
    z = make_zip(tmp_path / "win.zip", {"ABCDEFGH.log": LINE})            # same length as the GBK name
    z.write_bytes(z.read_bytes().replace(b"ABCDEFGH.log", name))           # no UTF-8 flag: a Windows zip
    assert set(by_path(stage(tmp_path, z))) == {"数据节点.log"}
    t = make_tar(tmp_path / "gbk.tar", [tar_entry(name.decode("utf-8", "surrogateescape"), LINE)], mode="w",
                 fmt=tarfile.GNU_FORMAT)
    assert set(by_path(stage(tmp_path, t))) == {"数据节点.log"}


def test_it_skips_duplicate_member_names(tmp_path):
    t = make_tar(tmp_path / "d.tar", [tar_entry("a.log", LINE), tar_entry("a.log", OOM)], mode="w")
    staged = stage(tmp_path, t)
    assert text_of(by_path(staged)["a.log"]) == LINE.decode() and skips(staged) == {"a.log": "duplicate name"}


def test_it_refuses_a_huge_gnu_long_name(tmp_path):
    t = make_tar(tmp_path / "long.tar", [tar_entry("d/" * (1 << 20) + "x.log", LINE)], mode="w", fmt=tarfile.GNU_FORMAT)
    with pytest.raises(BundleError, match=r"^long\.tar: archive corrupt \(extended header of \d+ bytes\)$"):
        stage(tmp_path, t)


# ---- bombs and limits -----------------------------------------------------------------------

def test_it_stops_a_zip_bomb_early(tmp_path):
    z = bomb_zip(tmp_path / "bomb.zip", "big.log", 64 << 20)              # 64 MiB -> about 230 KB
    t0 = time.monotonic()
    with pytest.raises(BundleError, match=r"^bomb\.zip: member big\.log expands more than 200:1 "
                                          r"\(possible zip bomb\); stopped after \d+ bytes$") as e:
        stage(tmp_path, z)
    assert time.monotonic() - t0 < 2 and int(str(e.value).rsplit(" ", 2)[-2]) < 4 << 20
    assert os.listdir(tmp_path / "work") == []


def test_it_stops_a_nested_zip_bomb(tmp_path):
    inner = [bomb_zip(tmp_path / f"inner{i}.zip", "zeros.log", 32 << 20).read_bytes() for i in range(3)]
    z = make_zip(tmp_path / "42.zip", {f"lib{i}.zip": data for i, data in enumerate(inner)})
    with pytest.raises(BundleError, match=r"^42\.zip: member lib0/zeros\.log expands more than 200:1"):
        stage(tmp_path, z)


def test_it_skips_archives_nested_deeper_than_the_limit(tmp_path):
    data = make_zip(tmp_path / "l5.zip", {"deep.log": LINE}).read_bytes()
    for level in (4, 3, 2, 1):
        data = make_zip(tmp_path / f"l{level}.zip", {f"l{level + 1}.zip": data}).read_bytes()
    staged = stage(tmp_path, tmp_path / "l1.zip")
    assert staged.files == [] and skips(staged) == {"l2/l3/l4/l5.zip": "nested too deep"}


def test_it_expands_zip_in_tgz_in_zip_and_shares_the_depth_limit(tmp_path):
    inner = make_zip(tmp_path / "inner.zip", {"app.log": OOM})
    tgz = make_tar(tmp_path / "host1.tgz", {"inner.zip": inner.read_bytes(), "dn2/x.log": LINE})
    outer = make_zip(tmp_path / "outer.zip", {"host1.tgz": tgz.read_bytes()})
    files = by_path(stage(tmp_path, outer))
    assert set(files) == {"host1/inner/app.log", "host1/dn2/x.log"}
    assert text_of(files["host1/inner/app.log"]) == OOM.decode() and files["host1/inner/app.log"].host == "host1"
    staged = stage(tmp_path, outer, max_depth=1)
    assert set(by_path(staged)) == {"host1/dn2/x.log"} and skips(staged) == {"host1/inner.zip": "nested too deep"}
    assert by_path(staged)["host1/dn2/x.log"].host == "dn2"     # the deepest host, not its wrapper


def test_it_rejects_overlapping_zip_entries(tmp_path):
    z = make_zip(tmp_path / "overlap.zip", {"a.log": LINE * 20, "b.log": LINE * 20}, zipfile.ZIP_STORED)
    patch_central(z, b"a.log", 20, "<I", len(LINE) * 40)       # a's data now runs over b's header
    with pytest.raises(BundleError, match=r"^overlap\.zip: overlapping zip entries \(possible zip bomb\)$"):
        stage(tmp_path, z)


def gz_of(tmp_path: Path, name: str, block: bytes, copies: int) -> Path:
    """A gzip file of `copies` concatenated members, each 100 MiB of `block` repeated."""
    member = gzip.compress(block * ((100 << 20) // len(block)), compresslevel=9)
    path = tmp_path / name
    with open(path, "wb") as f:
        for _ in range(copies):
            f.write(member)
    return path


def test_it_reads_only_the_first_64k_of_a_10mb_gzip_of_zeros(tmp_path):
    gz = gz_of(tmp_path, "zeros.log.gz", bytes(1 << 20), 100)            # about 10 MB -> 10 GB of NULs
    assert gz.stat().st_size > 5 << 20
    t0 = time.monotonic()
    staged = stage(tmp_path, gz)
    assert time.monotonic() - t0 < 2
    assert skips(staged) == {"zeros.log": "binary"} and staged.notes == ["no log files found"]


def test_it_stops_a_gzip_that_inflates_to_gigabytes_of_text(tmp_path):
    gz = gz_of(tmp_path, "huge.log.gz", LINE, 30)                       # about 10 MB -> 3 GB of text
    t0 = time.monotonic()
    with pytest.raises(BundleError, match=r"^huge\.log\.gz: member huge\.log\.gz expands more than 200:1"):
        stage(tmp_path, gz)
    assert time.monotonic() - t0 < 2 and os.listdir(tmp_path / "work") == []


class _Repeat(io.RawIOBase):
    """`block` repeated up to n bytes, produced on demand."""

    def __init__(self, block: bytes, n: int):
        self.chunk, self.left = block * ((1 << 20) // len(block)), n

    def readable(self):
        return True

    def readinto(self, b):
        n = min(len(b), self.left, len(self.chunk))
        b[:n] = self.chunk[:n]
        self.left -= n
        return n


def test_it_stops_a_tgz_even_while_skipping_a_binary_member(tmp_path):
    # The member is binary, so it is skipped; tarfile still inflates it to reach the next header.
    path = tmp_path / "core.tgz"
    with tarfile.open(path, "w:gz") as tf:
        info = tarfile.TarInfo("core.1234")
        info.size = 256 << 20
        tf.addfile(info, io.BufferedReader(_Repeat(b"\0" + LINE, info.size)))
        tf.addfile(tarfile.TarInfo("after.log"), io.BytesIO(b""))
    assert path.stat().st_size < 2 << 20
    with pytest.raises(BundleError, match=r"^core\.tgz: member core\.1234 expands more than 200:1"):
        stage(tmp_path, path)


def test_it_measures_the_ratio_per_member_of_a_tgz(tmp_path):
    # Over the whole stream this is about 30:1; the second member alone is about 290:1.
    path = tmp_path / "mixed.tgz"
    with tarfile.open(path, "w:gz", compresslevel=6) as tf:
        normal = random.Random(3).randbytes(4 << 20).hex().encode()
        tf.addfile(tar_entry("normal.log", normal)[0], io.BytesIO(normal))
        info = tarfile.TarInfo("spin.log")
        info.size = 128 << 20
        tf.addfile(info, io.BufferedReader(_Repeat(LINE, info.size)))
    with pytest.raises(BundleError, match=r"^mixed\.tgz: member spin\.log expands more than 200:1"):
        stage(tmp_path, path)


def test_it_stops_past_the_unpacked_byte_budget(tmp_path):
    t = make_tar(tmp_path / "big.tgz", {f"{c}.log": words(1 << 20, i) for i, c in enumerate("abc")})
    with pytest.raises(BundleError, match=r"^big\.tgz: expands beyond 2097152 bytes \(at member b\.log\)$"):
        stage(tmp_path, t, max_unpacked_bytes=2 << 20)


@pytest.mark.slow
def test_it_stops_at_the_file_cap_for_100000_tiny_zip_members(tmp_path):
    path = tmp_path / "many.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for i in range(100_000):
            zf.writestr(f"d/{i}.log", b"x\n")
    t0 = time.monotonic()
    with pytest.raises(BundleError, match=r"^many\.zip: more than 20000 files$"):
        stage(tmp_path, path)
    assert time.monotonic() - t0 < 1


@pytest.mark.slow
def test_it_stops_at_the_file_cap_for_100000_tiny_tar_members(tmp_path):
    # A tar is a stream: the cap is met by counting, after staging max_files files. Creating a
    # file takes 0.05-3 ms on this machine kind depending on load, so the cap is lower here.
    path = tmp_path / "many.tgz"
    with tarfile.open(path, "w:gz", compresslevel=1) as tf:
        info = tarfile.TarInfo()
        info.size = 2
        for i in range(100_000):
            info.name = f"d/{i}.log"
            tf.addfile(info, io.BytesIO(b"x\n"))
    t0 = time.monotonic()
    with pytest.raises(BundleError, match=r"^many\.tgz: more than 500 files$"):
        stage(tmp_path, path, max_files=500)
    assert time.monotonic() - t0 < 10 and os.listdir(tmp_path / "work") == []


# ---- damaged archives -----------------------------------------------------------------------

def test_it_keeps_members_before_the_damage_in_a_truncated_tgz(tmp_path):
    t = make_tar(tmp_path / "cut.tgz", {f"{c}.log": words(300_000, i) for i, c in enumerate("abc", 1)})
    t.write_bytes(t.read_bytes()[: t.stat().st_size * 6 // 10])
    staged = stage(tmp_path, t)
    assert set(by_path(staged)) == {"a.log"} and text_of(by_path(staged)["a.log"]) == words(300_000, 1).decode()
    assert skips(staged) == {"b.log": "archive corrupt"}
    assert staged.notes == ["cut.tgz: archive corrupt at member b.log (Compressed file ended before the "
                            "end-of-stream marker was reached)"]
    assert len(os.listdir(Path(by_path(staged)["a.log"].disk_path).parent)) == 1   # b's partial file removed


def test_it_rejects_a_tgz_damaged_in_its_first_member(tmp_path):
    t = make_tar(tmp_path / "x.tgz", {"a.log": words(300_000, 1), "b.log": LINE})
    t.write_bytes(t.read_bytes()[: t.stat().st_size // 2])
    with pytest.raises(BundleError, match=r"^x\.tgz: archive corrupt at member a\.log \(Compressed file ended"):
        stage(tmp_path, t)


def test_it_reports_a_truncated_plain_tar(tmp_path):
    t = make_tar(tmp_path / "x.tar", {"a.log": LINE, "b.log": words(100_000)}, mode="w")
    t.write_bytes(t.read_bytes()[:50_000])
    staged = stage(tmp_path, t)
    assert set(by_path(staged)) == {"a.log"} and skips(staged) == {"b.log": "archive corrupt"}
    assert staged.notes == ["x.tar: archive corrupt at member b.log (unexpected end of data)"]


def test_it_skips_a_zip_member_with_a_bad_crc_and_reads_the_rest(tmp_path):
    z = make_zip(tmp_path / "crc.zip", {"a.log": LINE, "b.log": b"B" * 100 + b"\n", "c.log": OOM}, zipfile.ZIP_STORED)
    z.write_bytes(z.read_bytes().replace(b"B" * 100, b"B" * 50 + b"C" + b"B" * 49))
    staged = stage(tmp_path, z)
    assert set(by_path(staged)) == {"a.log", "c.log"} and skips(staged) == {"b.log": "archive corrupt"}
    assert staged.notes == ["crc.zip: archive corrupt at member b.log (Bad CRC-32 for file 'b.log')"]


def test_it_rejects_a_zip_cut_in_half(tmp_path):
    z = make_zip(tmp_path / "half.zip", {"a.log": words(100_000, 1), "b.log": words(100_000, 2)})
    z.write_bytes(z.read_bytes()[: z.stat().st_size // 2])
    with pytest.raises(BundleError, match=r"^half\.zip: archive corrupt \(File is not a zip file\)$"):
        stage(tmp_path, z)


def test_it_notes_a_corrupt_inner_archive_and_keeps_the_rest(tmp_path):
    bad = tmp_path / "host2.tgz"
    make_tar(bad, {"a.log": words(100_000)})
    z = make_zip(tmp_path / "b.zip", {"host2.tgz": bad.read_bytes()[:5000], "host1/ok.log": LINE})
    staged = stage(tmp_path, z)
    assert set(by_path(staged)) == {"host1/ok.log"} and skips(staged) == {"host2/a.log": "archive corrupt"}
    assert staged.notes[0].startswith("b.zip: archive corrupt at member host2/a.log (")


# ---- binary and encodings -------------------------------------------------------------------

def test_it_skips_binary_members(tmp_path):
    rng = random.Random(7)
    png = b"\x89PNG\r\n\x1a\n" + rng.randbytes(2000)
    elf = b"\x7fELF\x02\x01\x01" + bytes(9) + rng.randbytes(2000)
    jar = make_zip(tmp_path / "lib.jar", {"A.class": b"\xca\xfe\xba\xbe" + bytes(100)}).read_bytes()
    z = make_zip(tmp_path / "b.zip", {"random.log": rng.randbytes(5000), "core.log": elf, "shot.png": png,
                                      "lib/app.jar": jar, "A.class": b"\xca\xfe\xba\xbe\x00\x00\x00\x34",
                                      "controls.log": bytes(range(1, 9)) * 200, "ok.log": OOM})
    staged = stage(tmp_path, z)
    assert set(by_path(staged)) == {"ok.log"}
    assert skips(staged) == {"random.log": "binary", "core.log": "binary", "shot.png": "binary",
                             "lib/app.jar": "binary", "A.class": "binary", "controls.log": "binary"}


def test_it_transcodes_a_gbk_log(tmp_path):
    text = "2019-04-23 17:39:19,323 ERROR 数据节点 写入失败 (写入管道中断)\n" + OOM.decode()
    z = make_zip(tmp_path / "cn.zip", {"dn2/app.log": text.encode("gbk") * 3})
    (f,) = stage(tmp_path, z).files
    assert f.encoding == "gb18030" and text_of(f) == text * 3 and f.size == len((text * 3).encode("utf-8"))


def test_it_transcodes_a_gbk_file_given_in_a_directory(tmp_path):
    src = tmp_path / "bundle"
    src.mkdir()
    (src / "app.log").write_bytes("数据节点\n".encode("gbk"))
    (f,) = stage(tmp_path, src).files
    assert f.encoding == "gb18030" and f.disk_path.startswith(str(tmp_path / "work")) and text_of(f) == "数据节点\n"


def test_it_transcodes_utf16_with_a_bom_instead_of_calling_it_binary(tmp_path):
    text = "2019-04-23 ERROR 服务 stopped\r\n" + OOM.decode()
    z = make_zip(tmp_path / "win.zip", {"le.log": b"\xff\xfe" + text.encode("utf-16-le"),
                                        "be.log": b"\xfe\xff" + text.encode("utf-16-be"),
                                        "bom8.log": b"\xef\xbb\xbf" + text.encode()})
    files = by_path(stage(tmp_path, z))
    assert {p: f.encoding for p, f in files.items()} == {"le.log": "utf-16-le", "be.log": "utf-16-be",
                                                         "bom8.log": "utf-8-sig"}
    assert all(Path(f.disk_path).read_bytes() == text.encode() for f in files.values())


def test_it_replaces_invalid_utf8_bytes(tmp_path):
    z = make_zip(tmp_path / "bad.zip", {"app.log": b"ok \xff\xfe\x80 ok\n" + OOM})
    (f,) = stage(tmp_path, z).files
    assert f.encoding == "utf-8-replace" and text_of(f) == "ok \ufffd\ufffd\ufffd ok\n" + OOM.decode()


def test_it_keeps_ascii_signatures_of_a_file_mixing_utf8_gbk_and_bad_bytes(tmp_path):
    data = "数据节点 utf8\n".encode() + "数据节点 gbk\n".encode("gbk") + b"bad \xff\x80\n" + OOM
    z = make_zip(tmp_path / "mixed.zip", {"app.log": data})
    (f,) = stage(tmp_path, z).files
    assert f.encoding in ("gb18030", "utf-8-replace")
    assert text_of(f).splitlines()[-1] == OOM.decode().strip()


def test_it_keeps_utf8_when_a_multibyte_char_is_cut_at_the_sample_end(tmp_path):
    data = b"a" * (64 * 1024 - 1) + "数据".encode() + b"\n"            # the sample ends inside a char
    z = make_zip(tmp_path / "cut.zip", {"app.log": data})
    (f,) = stage(tmp_path, z).files
    assert f.encoding == "utf-8" and Path(f.disk_path).read_bytes() == data


def peak_while(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_it_stages_a_50mb_single_line_with_bounded_memory(tmp_path):
    rng = random.Random(5)
    line = rng.randbytes(25 << 20).hex().encode() + b" " + OOM        # compresses about 2:1, like logs
    gz = tmp_path / "one-line.log.gz"
    with gzip.open(gz, "wb", compresslevel=1) as f:
        f.write(line)
    gbk = tmp_path / "gbk-line.zip"
    with zipfile.ZipFile(gbk, "w", zipfile.ZIP_DEFLATED) as zf, zf.open("cn.log", "w") as m:
        for i in range(25):                                              # 1 MiB per write, one line
            m.write("数据".encode("gbk") * (1 << 17) + line[i << 20:(i << 20) + (1 << 19)])
        m.write(b"\n")
    plain = tmp_path / "plain.log"
    plain.write_bytes(line)
    del line
    out = {}
    assert peak_while(lambda: out.update(plain=stage(tmp_path, plain))) < 1 << 20
    assert out["plain"].files[0].disk_path == str(plain)                # referenced, not read
    assert peak_while(lambda: out.update(gz=stage(tmp_path, gz))) < 8 << 20
    assert peak_while(lambda: out.update(cn=stage(tmp_path, gbk))) < 16 << 20
    (f,) = out["gz"].files
    assert f.size == (50 << 20) + 1 + len(OOM) and Path(f.disk_path).read_bytes()[-len(OOM):] == OOM
    (cn,) = out["cn"].files
    assert cn.encoding == "gb18030" and cn.size == 25 * ((1 << 19) + (1 << 17) * 6) + 1


def test_it_stages_a_bz2_single_file(tmp_path):
    p = tmp_path / "app.log.bz2"
    p.write_bytes(bz2.compress(OOM))
    (f,) = stage(tmp_path, p).files
    assert f.path == "app.log" and text_of(f) == OOM.decode()
