"""java.util.Properties files: Kafka *.properties, zoo.cfg, spark-defaults.conf.

ZooKeeper and Kafka both load these with java.util.Properties, so the same
rules apply: '#'/'!' comments, '=' ':' or whitespace separators, backslash
continuation lines and escapes. Values are trimmed because both read them
trimmed (QuorumPeerConfig, ConfigDef), so "10 " and "10" mean the same.
"""

from __future__ import annotations

import re

from analyzers.facts._util import make_fact
from analyzers.model import BundleFile, Fact

_ESC = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_UNICODE_RE = re.compile(r"u([0-9a-fA-F]{4})")


def _logical_lines(text: str):
    """(first physical line number, logical line) with continuations joined."""
    start, parts = 0, []
    for n, raw in enumerate(text.splitlines(), 1):
        if parts:
            line = raw.lstrip()   # leading blanks of a continuation line are dropped
        else:
            line = raw
            if not line.strip() or line.lstrip()[0] in "#!":
                continue
            start = n
        # An odd number of trailing backslashes continues the line.
        if (len(line) - len(line.rstrip("\\"))) % 2 == 1:
            parts.append(line[:-1])
            continue
        parts.append(line)
        yield start, "".join(parts)
        parts = []
    if parts:
        yield start, "".join(parts)


def _unescape(s: str) -> str:
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            nxt = s[i + 1]
            m = _UNICODE_RE.match(s, i + 1) if nxt == "u" else None
            if m:
                out.append(chr(int(m.group(1), 16)))
                i = m.end()
                continue
            out.append(_ESC.get(nxt, nxt))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _split(line: str) -> tuple[str, str]:
    """Key and value of one logical line, per Properties.load: the key ends at the
    first unescaped '=', ':' or whitespace; one '='/':' after it is skipped."""
    s = line.lstrip()
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c in "=:" or c.isspace():
            break
        i += 1
    key, rest = s[:i], s[i:].lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:]
    return _unescape(key), _unescape(rest.strip())


def parse(file: BundleFile, text: str) -> list[Fact]:
    facts = []
    for line_no, logical in _logical_lines(text):
        key, value = _split(logical)
        if key:
            facts.append(make_fact(file, "config", line_no, logical, {"key": key, "value": value}))
    return facts
