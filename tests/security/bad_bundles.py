"""Hostile and broken bundles (docs/reliability.md C3/C4, checks U1-U15), built in memory.

Every builder returns the bytes of one upload. File names carry MARKER so a
test can search the file system for anything a bundle managed to write.
"""

from __future__ import annotations

import bz2
import gzip
import io
import os
import stat
import struct
import tarfile
import zipfile
import zlib

MARKER = "kbescape7f3a"
GOOD_LINE = b"2024-03-01 10:00:02,000 ERROR DataNode: java.io.IOException: No space left on device\n"
GOOD_SLUG = "disk-full"
HEAP_OOM = b"java.lang.OutOfMemoryError: Java heap space"
XSS_NAME = "<img src=x onerror=alert(1)>.log"
PASSWD_LINE = "root:x:0:0"


def _tar(members: list[tarfile.TarInfo | tuple[tarfile.TarInfo, bytes]], mode: str = "w:gz") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode, format=tarfile.PAX_FORMAT) as tar:
        for m in members:
            if isinstance(m, tuple):
                info, data = m
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.addfile(m)
    return buf.getvalue()


def _file(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    return tarfile.TarInfo(name), data


def _special(name: str, kind: bytes, **attrs) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    for k, v in attrs.items():
        setattr(info, k, v)
    return info


def _zip(members: list[tuple[str | zipfile.ZipInfo, bytes]], compression=zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return buf.getvalue()


# ---------------------------------------------------------------- U1 traversal


def zip_traversal() -> bytes:
    return _zip([
        (f"../../../../../../../../tmp/{MARKER}-dotdot.log", GOOD_LINE),
        (f"/tmp/{MARKER}-absolute.log", GOOD_LINE),
        (f"..\\..\\..\\{MARKER}-win.ini", GOOD_LINE),
        (f"logs/../../{MARKER}-middle.log", GOOD_LINE),
        ("dn1/hadoop-hdfs-datanode-dn1.log", GOOD_LINE),
    ])


def tar_traversal() -> bytes:
    return _tar([
        _file(f"../../../../../../../../tmp/{MARKER}-dotdot.log", GOOD_LINE),
        _file(f"/tmp/{MARKER}-absolute.log", GOOD_LINE),
        _file("dn1/hadoop-hdfs-datanode-dn1.log", GOOD_LINE),
    ])


# ---------------------------------------------------------------- U2 links and special files


def tar_links() -> bytes:
    return _tar([
        _special("etc_link", tarfile.SYMTYPE, linkname="/etc"),
        _file("etc_link/passwd", b"written through a symlink\n"),
        _special(f"{MARKER}-abs-symlink.log", tarfile.SYMTYPE, linkname="/etc/passwd"),
        _special(f"{MARKER}-hardlink.log", tarfile.LNKTYPE, linkname="/etc/passwd"),
        _special("shadow-hardlink.log", tarfile.LNKTYPE, linkname="/etc/shadow"),
        _special("a", tarfile.SYMTYPE, linkname="b"),
        _special("b", tarfile.SYMTYPE, linkname="../../.."),
        _special("a/etc/passwd", tarfile.REGTYPE),
        _special("null-device", tarfile.CHRTYPE, devmajor=1, devminor=3),
        _special("disk-device", tarfile.BLKTYPE, devmajor=8, devminor=0),
        _special("a-fifo", tarfile.FIFOTYPE),
        _file("dn1/hadoop-hdfs-datanode-dn1.log", GOOD_LINE),
    ])


def zip_symlink() -> bytes:
    info = zipfile.ZipInfo(f"{MARKER}-zip-symlink.log")
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    info.create_system = 3
    return _zip([(info, b"/etc/passwd"), ("dn1/hadoop-hdfs-datanode-dn1.log", GOOD_LINE)])


# ---------------------------------------------------------------- U3 bombs


BOMB_UNIT = (b"2024-03-01 10:00:01,000 INFO org.apache.hadoop.hdfs.server.datanode.DataNode: "
             b"Receiving BP-1:blk_1 src: /10.0.0.1:5000 dest: /10.0.0.2:50010\n")


def _deflate_text(n: int) -> tuple[bytes, int]:
    """Raw deflate of n bytes of one repeated log line (~1000:1) and their CRC-32."""
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    chunk = (BOMB_UNIT * ((1 << 20) // len(BOMB_UNIT) + 1))[: 1 << 20]
    out, crc = [], 0
    for _ in range(n >> 20):
        out.append(comp.compress(chunk))
        crc = zlib.crc32(chunk, crc)
    out.append(comp.flush())
    return b"".join(out), crc


def _zip_raw(entries: list[tuple[bytes, bytes, int, int]], method: int = 8) -> bytes:
    """A zip written by hand: (raw name, member data as stored, crc, uncompressed size).
    Names are written as given (a NUL or a newline included), data as given."""
    buf = io.BytesIO()
    central = []
    for n, data, crc, size in entries:
        offset = buf.tell()
        buf.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0, crc, len(data), size, len(n), 0) + n)
        buf.write(data)
        central.append(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, 0, crc, len(data), size,
                                   len(n), 0, 0, 0, 0, 0, offset) + n)
    start = buf.tell()
    for c in central:
        buf.write(c)
    buf.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(central), len(central), buf.tell() - start, start, 0))
    return buf.getvalue()


def _stored(name: str, data: bytes) -> tuple[bytes, bytes, int, int]:
    return name.encode("utf-8", "surrogatepass"), data, zlib.crc32(data), len(data)


def zip_bomb() -> bytes:
    """One member: 200 MiB of a repeated log line in ~200 KiB."""
    data, crc = _deflate_text(200 << 20)
    return _zip_raw([(b"datanode.log", data, crc, 200 << 20)])


def nested_zip_bomb() -> bytes:
    """42.zip style: 4 zips of 4 members of 50 MiB of log text each (800 MiB from ~3 MiB)."""
    data, crc = _deflate_text(50 << 20)
    leaf = _zip_raw([(f"datanode-{i}.log".encode(), data, crc, 50 << 20) for i in range(4)])
    return _zip([(f"layer-{i}.zip", leaf) for i in range(4)], compression=zipfile.ZIP_STORED)


def overlapping_zip_bomb() -> bytes:
    """bamsoftware-style: many central directory entries share one compressed kernel."""
    data, crc = _deflate_text(20 << 20)
    buf = io.BytesIO()
    name = b"kernel.log"
    buf.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, crc, len(data), 20 << 20, len(name), 0) + name)
    buf.write(data)
    start = buf.tell()
    for i in range(50):
        n = f"overlap-{i:02d}.log".encode()
        buf.write(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0, crc, len(data), 20 << 20,
                              len(n), 0, 0, 0, 0, 0, 0) + n)
    buf.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 50, 50, buf.tell() - start, start, 0))
    return buf.getvalue()


def gz_bomb(unit: bytes = BOMB_UNIT) -> bytes:
    """A .log.gz: 300 MiB of a repeated line (or of zeros: unit=b"\\0") gzip-compressed (~300 KiB)."""
    out = io.BytesIO()
    chunk = (unit * ((1 << 20) // len(unit) + 1))[: 1 << 20]
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=9, mtime=0) as gz:
        for _ in range(300):
            gz.write(chunk)
    return out.getvalue()


def bz2_named_tgz() -> bytes:
    """A tar.bz2 of 100 MiB of zeros, uploaded as .tgz (format by magic bytes, ratio far above gzip's)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        info = tarfile.TarInfo("zeros.log")
        info.size = 100 << 20
        tar.addfile(info, io.BytesIO(bytes(100 << 20)))
    return bz2.compress(raw.getvalue(), 9)


def over_budget_tgz(budget: int) -> bytes:
    """Ordinary, varied log text (ratio ~10:1, no bomb) that unpacks past `budget` bytes."""
    lines, size, i = [], 0, 0
    while size <= budget + (4 << 20):
        line = f"2024-03-01 10:{i // 60000 % 60:02d}:{i // 1000 % 60:02d},{i % 1000:03d} INFO Worker: step {i} " \
               f"took {i * 7919 % 10007} ms on partition {i * 31 % 977}\n".encode()
        lines.append(line)
        size += len(line)
        i += 1
    body = b"".join(lines)
    return _tar([_file("big/worker.log", body)], mode="w:gz")


# ---------------------------------------------------------------- U4 corrupt, U5 empty


def garbage_named_zip() -> bytes:
    return os.urandom(1024)


def text_named_tgz() -> bytes:
    return b"this is a plain text file, not a gzip-compressed tar\n" * 20


def truncated_tgz() -> bytes:
    members = [_file(f"host{i}/hadoop-hdfs-datanode-host{i}.log", GOOD_LINE + os.urandom(40_000).hex().encode())
               for i in range(6)]
    data = _tar(members)
    return data[: len(data) // 2]


def crc_corrupt_zip() -> bytes:
    data = bytearray(_zip([("dn1/hadoop-hdfs-datanode-dn1.log", GOOD_LINE * 50),
                           ("dn2/broken.log", b"2024-03-01 10:00:02,000 INFO fine line\n" * 200)],
                          compression=zipfile.ZIP_STORED))
    at = data.index(b"fine line")        # flip a byte of the stored (uncompressed) member
    data[at] ^= 0xFF
    return bytes(data)


def empty_zip() -> bytes:
    return _zip([])


def empty_tar() -> bytes:
    return _tar([], mode="w")


def dirs_only_tgz() -> bytes:
    return _tar([_special("logs/", tarfile.DIRTYPE), _special("logs/host1/", tarfile.DIRTYPE)])


# ---------------------------------------------------------------- U6 nesting, U7 many files


def nested_deep() -> bytes:
    """zip > tgz > zip > tgz > zip > log: deeper than the nesting limit (3)."""
    inner = _zip([("deep/app.log", GOOD_LINE)])
    level = _tar([_file("l4.zip", inner)])
    level = _zip([("l3.tgz", level)])
    level = _tar([_file("l2.zip", level)])
    return _zip([("l1.tgz", level), ("top/hadoop-hdfs-datanode-dn1.log", GOOD_LINE)])


def many_files_tgz(n: int = 100_000) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1) as tar:
        data = b"x\n"
        for i in range(n):
            info = tarfile.TarInfo(f"f/{i}.log")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def many_files_zip(n: int = 100_000) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for i in range(n):
            zf.writestr(f"f/{i}.log", b"x\n")
    return buf.getvalue()


# ---------------------------------------------------------------- U8 names, U9-U13 content


XSS_LINE = b"2024-03-01 10:00:02,000 ERROR x: <script>alert(2)</script> No space left on device\n"


def hostile_names_zip() -> bytes:
    """Names a file system must never see: 4 KiB long, NUL, newline, RTL override, HTML."""
    return _zip_raw([
        _stored("n/" + "a" * 4096 + ".log", GOOD_LINE),
        _stored(f"n/{MARKER}-nul\x00../../../../tmp/{MARKER}-after-nul.log", GOOD_LINE),
        _stored("n/new\nline.log", GOOD_LINE),
        _stored("n/rtl-\u202egol.exe", GOOD_LINE),
        _stored(f"n/{XSS_NAME}", XSS_LINE),
        _stored("n/hadoop-hdfs-datanode-dn1.log", GOOD_LINE),
    ], method=0)


def gbk_log() -> bytes:
    text = ("2024-03-01 10:00:01,000 INFO TaskManager: 任务开始处理数据节点上的分区\n"
            "2024-03-01 10:00:02,000 ERROR TaskManager: 任务失败, 内存不足: java.lang.OutOfMemoryError: "
            "Java heap space\n"
            "\tat java.util.Arrays.copyOf(Arrays.java:3236)\n")
    return text.encode("gbk")


GBK_TEXT = "内存不足"


def invalid_utf8_log() -> bytes:
    return (b"2024-03-01 10:00:01,000 INFO ok \xff\xfe\x80 broken bytes\n"
            + "2024-03-01 10:00:01,500 INFO 数据节点 utf-8 text\n".encode()
            + "2024-03-01 10:00:01,700 INFO 数据节点 gbk text\n".encode("gbk")
            + GOOD_LINE)


def utf16_log() -> bytes:
    return "\ufeff".encode("utf-16-le") + GOOD_LINE.decode().encode("utf-16-le")


def long_line_log(size: int = 50 * 1024 * 1024) -> bytes:
    tail = b" java.io.IOException: No space left on device\n"
    return b"2024-03-01 10:00:02,000 ERROR DataNode: " + b"x" * (size - len(tail) - 40) + tail


ELF = b"\x7fELF\x02\x01\x01\x00" + bytes(8) + b"\x02\x00\x3e\x00" + os.urandom(4000)
PNG = b"\x89PNG\r\n\x1a\n" + bytes(4) + b"IHDR" + os.urandom(3000)


def binaries_tgz() -> bytes:
    jar = _zip([("META-INF/MANIFEST.MF", b"Manifest-Version: 1.0\n")])
    return _tar([
        _file("dn1/core.12345", ELF),
        _file("dn1/screenshot.png", PNG),
        _file("dn1/random.bin", os.urandom(8000)),
        _file("dn1/lib/hadoop-common.jar", jar),
        _file("dn1/hadoop-hdfs-datanode-dn1.log", GOOD_LINE),
    ])


HTML_LOG = (b"<!doctype html><html><body><script>alert(3)</script>\n"
            b"2024-03-01 10:00:02,000 ERROR x: <img src=x onerror=alert(4)> No space left on device\n"
            b"</body></html>\n")
