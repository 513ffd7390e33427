"""HotSpot thread dumps (jstack, jcmd Thread.print, kill -3 into a .out/.log) -> jstack.thread.

A thread is a header line '"name" #id daemon prio=5 ... nid=0x... <status> [0x...]',
then "java.lang.Thread.State: ..." for Java threads, then "\tat" frames and
"- locked <...>" lines, up to a blank line. Inside a log file (strict mode)
headers count only after a "Full thread dump" line, so a log message that
happens to start with a quote cannot become a thread.
"""

from __future__ import annotations

import re

from analyzers.facts._util import iso, iter_lines, make_fact
from analyzers.model import BundleFile, Fact

MARKER = "Full thread dump"
# nid is printed for every HotSpot thread (Java and VM), from JDK 6 to 21.
HEADER_RE = re.compile(r'^"(?P<name>.*)"\s+(?P<rest>.*\bnid=(?P<nid>0x[0-9a-fA-F]+|\d+).*)$')
_STATUS_RE = re.compile(r"\bnid=\S+\s+(.*?)\s*(?:\[0x[0-9a-fA-F]+\])?\s*$")
_STATE_RE = re.compile(r"^\s*java\.lang\.Thread\.State:\s*(\S+)\s*(.*)$")
_FRAME_RE = re.compile(r"^\s+at\s+(.*\S)")
_LOCK_RE = re.compile(r"^\s+(- .*\S)")
_DUMP_DATE_RE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s*$")


class _Thread:
    def __init__(self, line: int, text: str, m: re.Match, timestamp: str | None) -> None:
        self.line, self.text, self.timestamp = line, text, timestamp
        self.name = m.group("name")
        self.daemon = " daemon " in f" {m.group('rest')} "
        self.nid = m.group("nid")
        status = _STATUS_RE.search(m.group("rest"))
        self.status = status.group(1) if status else ""
        self.state = ""
        self.state_detail = ""
        self.frames: list[str] = []
        self.locks: list[str] = []

    def fact(self, file: BundleFile) -> Fact:
        captures = {"value": self.name, "state": self.state, "frames": "\n".join(self.frames),
                    "locks": "\n".join(self.locks), "status": self.status,
                    "daemon": self.daemon, "nid": self.nid}
        if self.state_detail:
            captures["state_detail"] = self.state_detail
        return make_fact(file, "jstack.thread", self.line, self.text, captures, self.timestamp)


def parse(file: BundleFile, notes: list[str] | None = None, strict: bool = False) -> list[Fact]:
    """strict: only threads after a "Full thread dump" line (dumps embedded in logs)."""
    facts: list[Fact] = []
    in_dump = not strict
    prev = ""                 # jstack prints the dump's date on the line before the marker
    timestamp: str | None = None
    cur: _Thread | None = None
    for n, line in iter_lines(file, notes):
        if MARKER in line:
            in_dump = True
            timestamp = iso(prev) if _DUMP_DATE_RE.match(prev) else iso(line)
            cur = _close(cur, file, facts)
        elif in_dump:
            m = HEADER_RE.match(line)
            if m:
                _close(cur, file, facts)
                cur = _Thread(n, line, m, timestamp)
            elif cur is not None:
                if not line.strip():
                    cur = _close(cur, file, facts)
                elif (s := _STATE_RE.match(line)):
                    cur.state, cur.state_detail = s.group(1), s.group(2).strip("() ")
                elif (f := _FRAME_RE.match(line)):
                    cur.frames.append(f.group(1))
                elif (k := _LOCK_RE.match(line)):
                    cur.locks.append(k.group(1))
                else:
                    cur = _close(cur, file, facts)   # anything else ends the stack
        prev = line
    _close(cur, file, facts)
    return facts


def _close(cur: _Thread | None, file: BundleFile, facts: list[Fact]) -> None:
    if cur is not None:
        facts.append(cur.fact(file))
    return None
