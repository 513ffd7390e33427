"""journalctl exports: one line per journal entry, host and unit in every line.

    journalctl -o short-iso   2023-09-08T17:20:30+0200 tarta r710_fan_controller.sh[20911]: msg
    journalctl -o json        {"__REALTIME_TIMESTAMP": "1694186430655028", "_HOSTNAME": "tarta",
                               "SYSLOG_IDENTIFIER": "...", "_SYSTEMD_UNIT": "...", "MESSAGE": "..."}

Each entry goes to "<host>/<unit>.log" as "<timestamp> <message>": the time stays (journald
owns it), host and unit become the path. A message that starts its own record (a Java log
line with its own timestamp) or continues one (a stack frame, "Caused by:") is written alone,
so records and their stack traces read as they did in the process's own log.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone

from analyzers import timestamps
from analyzers.layouts.base import LEVEL_WORDS, Demuxer, Section, safe_part, share
from analyzers.paths import role_component

_SHORT_ISO_RE = re.compile(
    r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?) (\S+) ([^\s\[:]+)(?:\[\d+\])?: ?")
_JOURNAL_NOTE_RE = re.compile(r"^-- (Logs begin at|Journal begins at|Boot [0-9a-f]+ --|Reboot --|No entries --)")
_CONTINUATION_RE = re.compile(r"^(\s|Caused by:|\.\.\. \d+ more|Suppressed:)")


_DATE_RE = re.compile(r"^\d{4}-\d\d-\d\d$")


def _short_iso(line: str) -> re.Match | None:
    """"2023-09-08T17:20:30+0200 tarta unit[1]: msg"; "...Z WARN org.Foo: msg" is a log layout,
    and so is kubectl --timestamps' "...Z 2021-05-04 16:41:31,006 INFO ..." (a date is no host)."""
    m = _SHORT_ISO_RE.match(line)
    if not m or m.group(2).upper() in LEVEL_WORDS or _DATE_RE.match(m.group(2)):
        return None
    return m


def _entry_text(stamp: str, message: str) -> str:
    if _CONTINUATION_RE.match(message) or timestamps.is_record_start(message):
        return message
    return f"{stamp} {message}"


def _section(host: str, unit: str) -> Section:
    unit_name = unit[:-len(".service")] if unit.endswith(".service") else unit
    return Section(f"{safe_part(host)}/{safe_part(unit_name)}.log", host,
                   role_component(unit_name.lower()) or ("kernel" if unit_name == "kernel" else None))


class JournalShortIso(Demuxer):
    """Also takes rsyslog's high-precision files, which have the same shape: every line names
    its host and program, and splitting by them gives the same lanes."""

    label = "journalctl -o short-iso [-u UNIT] > journal.log"

    @classmethod
    def recognises(cls, lines: list[str]) -> bool:
        return share(lines, lambda ln: _short_iso(ln) or _JOURNAL_NOTE_RE.match(ln))

    def feed(self, line: str) -> list[tuple[Section, str]]:
        m = _short_iso(line)
        if not m:
            return [] if _JOURNAL_NOTE_RE.match(line) else self.other(line)
        stamp, host, unit = m.groups()
        self.current = self.section((host, unit), lambda: _section(host, unit))
        return [(self.current, _entry_text(stamp, line[m.end():]))]


class JournalJson(Demuxer):
    label = "journalctl -o json [-u UNIT] > journal.json"
    preamble = Section("journal-other.log", None)

    @classmethod
    def recognises(cls, lines: list[str]) -> bool:
        return share(lines, lambda ln: ln.startswith("{") and '"__REALTIME_TIMESTAMP"' in ln, at_least=1)

    def feed(self, line: str) -> list[tuple[Section, str]]:
        try:
            entry = json.loads(line)
            micros = int(entry["__REALTIME_TIMESTAMP"])
        except (ValueError, KeyError, TypeError):
            return self.other(line)
        if not isinstance(entry, dict):
            return self.other(line)
        host = str(entry.get("_HOSTNAME") or "unknown-host")
        unit = str(entry.get("_SYSTEMD_UNIT") or entry.get("SYSLOG_IDENTIFIER") or "journal")
        message = _message(entry.get("MESSAGE"))
        stamp = datetime.fromtimestamp(micros / 1e6, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]
        self.current = self.section((host, unit), lambda: _section(host, unit))
        lines = message.split("\n")
        text = "\n".join([_entry_text(stamp, lines[0])] + lines[1:])
        return [(self.current, text + "\n")]


def _message(value) -> str:
    """MESSAGE is a string, or a list of byte values when it was not valid UTF-8, or null."""
    if isinstance(value, list):
        return bytes(v for v in value if isinstance(v, int) and 0 <= v < 256).decode("utf-8", "replace")
    return "" if value is None else str(value)
