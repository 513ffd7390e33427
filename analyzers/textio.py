"""Is it text, in which encoding, and a streamed copy of it as UTF-8 (docs/reliability.md C4).

sniff() looks at the first 64 KiB only:

    b"\\xff\\xfe2\\x000\\x001\\x009\\x00"          -> "utf-16-le"   (BOM first: UTF-16 is full of NULs)
    b"\\x7fELF\\x02\\x01..."                       -> None          (binary)
    "2019-04-23 数据节点".encode("utf-8")           -> "utf-8"
    "2019-04-23 数据节点".encode("gbk")             -> "gb18030"     (only after strict UTF-8 failed:
                                                                    UTF-8 bytes decode as GB18030 mojibake)
    b"ok \\xff\\xfe\\x80 ok"                          -> "utf-8-replace" (neither: invalid bytes become U+FFFD)
"""

from __future__ import annotations

import codecs
from typing import BinaryIO, Protocol

CHUNK = 1 << 20
SAMPLE_BYTES = 64 * 1024
BINARY_WINDOW = 8192            # git looks at the first 8000 bytes for a NUL
CONTROL_SHARE = 0.10
# ELF, PNG, Java class, GIF, JPEG, 7z, RAR: formats that are never logs.
BINARY_MAGIC = (b"\x7fELF", b"\x89PNG", b"\xca\xfe\xba\xbe", b"GIF8", b"\xff\xd8\xff", b"7z\xbc\xaf", b"Rar!")
# C0 controls that do not occur in text; TAB, LF, FF, CR and ESC (ANSI colours) do.
_CONTROL = frozenset(set(range(0x20)) - {0x09, 0x0A, 0x0C, 0x0D, 0x1B}) | {0x7F}
# Decoder for each result of sniff(); all but plain UTF-8 are rewritten while staging.
CODECS = {"utf-8-sig": "utf-8-sig", "utf-16-le": "utf-16", "utf-16-be": "utf-16",
          "gb18030": "gb18030", "utf-8-replace": "utf-8"}


class Readable(Protocol):
    def read(self, n: int = -1) -> bytes: ...


def read_head(src: Readable, n: int = SAMPLE_BYTES) -> bytes:
    """Up to n bytes; fewer only at the end of the stream (streams may return short reads)."""
    parts, got = [], 0
    while got < n:
        chunk = src.read(n - got)
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def sniff(head: bytes, at_eof: bool) -> str | None:
    """The encoding of a file from its first bytes, or None when it is binary."""
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if head.startswith(codecs.BOM_UTF16_LE):
        return "utf-16-le"
    if head.startswith(codecs.BOM_UTF16_BE):
        return "utf-16-be"
    if is_binary(head[:BINARY_WINDOW]):
        return None
    for enc in ("utf-8", "gb18030"):
        if _decodes(head, enc, at_eof):
            return enc
    return "utf-8-replace"


def archive_format(head: bytes, tar_named: bool = False) -> str | None:
    """gzip | zip | bz2 | xz | tar | None, from the first bytes (never from the name).

    An empty tar is only its end marker, zero blocks with no magic: trusted when the name says tar.
    """
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "zip"
    if head.startswith(b"BZh") and head[3:4].isdigit():
        return "bz2"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "xz"
    if head[257:262] == b"ustar" or (tar_named and len(head) >= 1024 and not head.strip(b"\0")):
        return "tar"
    return None


def describe(head: bytes) -> str:
    """What a file that should have been an archive looks like, for the error message."""
    if not head:
        return "empty file"
    if sniff(head, at_eof=True) is not None:
        return "it looks like text"
    return "starts with " + head[:8].hex(" ")


def is_binary(window: bytes) -> bool:
    if b"\0" in window or window.startswith(BINARY_MAGIC):
        return True
    controls = sum(1 for b in window if b in _CONTROL)
    return bool(window) and controls / len(window) > CONTROL_SHARE


def _decodes(head: bytes, encoding: str, at_eof: bool) -> bool:
    # An incremental decoder keeps a multibyte character cut at the sample's end pending
    # instead of calling it invalid; only at the real end of the file must it be complete.
    try:
        codecs.getincrementaldecoder(encoding)("strict").decode(head, final=at_eof)
        return True
    except UnicodeDecodeError:
        return False


def copy_utf8(head: bytes, src: Readable, dst: BinaryIO, encoding: str) -> int:
    """Write head + the rest of src to dst as UTF-8, CHUNK by CHUNK; returns bytes written.

    Plain UTF-8 is copied as is (only its sample was checked, so readers still decode with
    errors="replace"); everything else goes through an incremental decoder with
    errors="replace", so a bad byte late in a GB18030 file costs one U+FFFD, not the file.
    """
    if encoding == "utf-8":
        written = dst.write(head)
        while chunk := src.read(CHUNK):
            written += dst.write(chunk)
        return written
    decoder = codecs.getincrementaldecoder(CODECS[encoding])(errors="replace")
    written = dst.write(decoder.decode(head).encode("utf-8", "replace"))
    while chunk := src.read(CHUNK):
        written += dst.write(decoder.decode(chunk).encode("utf-8", "replace"))
    return written + dst.write(decoder.decode(b"", final=True).encode("utf-8", "replace"))


class Prefixed:
    """src with `head` (already read from it) put back in front."""

    def __init__(self, head: bytes, src: Readable):
        self.head, self.pos, self.src = head, 0, src

    def read(self, n: int = -1) -> bytes:
        n = CHUNK if n is None or n < 0 else n
        if self.pos < len(self.head):
            out = self.head[self.pos:self.pos + n]
            self.pos += len(out)
            return out
        return self.src.read(n)


class Counted:
    """Counts the bytes read through it: the compressed side of a decompressor."""

    def __init__(self, src):
        self.src, self.count = src, 0

    def read(self, n: int = -1) -> bytes:
        data = self.src.read(CHUNK if n is None or n < 0 else n)
        self.count += len(data)
        return data

    # zipfile needs these; only a file on disk is seekable.
    def seek(self, *args) -> int:
        return self.src.seek(*args)

    def tell(self) -> int:
        return self.src.tell()

    def seekable(self) -> bool:
        return self.src.seekable()
