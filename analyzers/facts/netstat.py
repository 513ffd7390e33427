"""netstat / ss output -> netstat.time_wait facts (count of TCP sockets in TIME_WAIT).

Accepted per snapshot: socket rows (netstat -an/-ant, ss -tan/-an), or a
summary that already holds the count: "uniq -c" ("  89 TIME_WAIT"), the awk
"S[$NF]" form ("TIME_WAIT 89"), ss -s ("timewait 998/0") and
/proc/net/sockstat ("tw 998"). A summary wins over counting rows because rows
may have been cut by head/grep while the summary covers every socket.
Collection scripts often loop "date; netstat -an", so a line that is a bare
timestamp starts a new snapshot.
"""

from __future__ import annotations

import re

from analyzers.facts._util import iso, iter_lines, make_fact
from analyzers.model import BundleFile, Fact

_STATES = ("ESTABLISHED|ESTAB|SYN_SENT|SYN-SENT|SYN_RECV|SYN-RECV|SYN_RCVD|FIN_WAIT1|FIN-WAIT-1|"
           "FIN_WAIT_1|FIN_WAIT2|FIN-WAIT-2|FIN_WAIT_2|TIME_WAIT|TIME-WAIT|CLOSE|CLOSED|"
           "CLOSE_WAIT|CLOSE-WAIT|LAST_ACK|LAST-ACK|LISTEN|LISTENING|CLOSING|UNCONN|UNKNOWN")
# netstat (Linux, macOS "tcp4", Windows "TCP" without queues): state after two addresses.
_NETSTAT_ROW_RE = re.compile(
    rf"^\s*(?:tcp[46]*|TCP)\s+(?:\d+\s+\d+\s+)?\S+\s+\S+\s+({_STATES})\b")
# ss: state first (ss -t), or after the Netid column (ss -a).
_SS_ROW_RE = re.compile(rf"^\s*(?:tcp\s+)?({_STATES})\s+\d+\s+\d+\s+\S+\s+\S+")
# Per-state summaries; a summary that lists other states but not TIME_WAIT means 0.
_UNIQ_RE = re.compile(rf"^\s*(?P<n>\d+)\s+(?P<state>{_STATES})\s*$")
_AWK_RE = re.compile(rf"^\s*(?P<state>{_STATES})\s+(?P<n>\d+)\s*$")
_SS_SUMMARY_RE = re.compile(r"^\s*TCP:\s+\d+\s+\(.*\btimewait (?P<n>\d+)")
_SOCKSTAT_RE = re.compile(r"^\s*TCP:\s+inuse\s+\d+.*\btw\s+(?P<n>\d+)")
_DATE_LINE_RES = (
    re.compile(r"\d{4}-\d\d-\d\d[ T_]\d\d:\d\d:\d\d"),
    # date(1): "Tue Apr 23 17:39:19 CST 2019"
    re.compile(r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\s+(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
               r"\s+(\d{1,2})\s+(\d\d:\d\d:\d\d)\s+(?:[A-Z][A-Za-z+\-0-9]{1,5}\s+)?(\d{4})\b"),
)
_MONTHS = {m: i for i, m in enumerate("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(), 1)}


class _Snapshot:
    def __init__(self, line: int, text: str, timestamp: str | None) -> None:
        self.line, self.text, self.timestamp = line, text, timestamp
        self.rows = self.time_wait = 0
        self.first_tw: tuple[int, str] | None = None
        self.summary: tuple[int, int, str, str] | None = None   # (count, line, text, source)

    def fact(self, file: BundleFile) -> Fact | None:
        if self.summary and (self.summary[0] >= 0 or not self.rows):
            count, line, text, source = self.summary
            return make_fact(file, "netstat.time_wait", line, text,
                             {"value": max(count, 0), "source": source}, self.timestamp)
        if not self.rows:
            return None
        line, text = self.first_tw or (self.line, self.text)
        if self.timestamp:     # point at the snapshot's date line, the count is its own
            line, text = self.line, self.text
        return make_fact(file, "netstat.time_wait", line, text,
                         {"value": self.time_wait, "source": "rows", "tcp": self.rows},
                         self.timestamp)


def _date_line(line: str) -> str | None:
    m = _DATE_LINE_RES[0].search(line)
    if m:
        return iso(m.group(0).replace("_", " "))
    m = _DATE_LINE_RES[1].search(line)
    if m:
        mon, day, hms, year = m.groups()
        return f"{year}-{_MONTHS[mon]:02d}-{int(day):02d}T{hms}"
    return None


def parse(file: BundleFile, notes: list[str] | None = None) -> list[Fact]:
    snaps = [_Snapshot(1, "", None)]
    for n, line in iter_lines(file, notes):
        cur = snaps[-1]
        row = _NETSTAT_ROW_RE.match(line) or _SS_ROW_RE.match(line)
        if row:
            cur.rows += 1
            if row.group(1) in ("TIME_WAIT", "TIME-WAIT"):
                cur.time_wait += 1
                cur.first_tw = cur.first_tw or (n, line)
            continue
        for regex, source in ((_UNIQ_RE, "uniq -c"), (_AWK_RE, "awk"),
                              (_SS_SUMMARY_RE, "ss -s"), (_SOCKSTAT_RE, "sockstat")):
            m = regex.match(line)
            if m:
                state = m.groupdict().get("state")
                if state in (None, "TIME_WAIT", "TIME-WAIT"):
                    if cur.summary is None or cur.summary[0] == -1:
                        cur.summary = (int(m.group("n")), n, line, source)
                elif cur.summary is None:
                    cur.summary = (-1, n, line, source)    # states listed, TIME_WAIT not yet
                break
        else:
            ts = _date_line(line)
            if ts:
                snaps.append(_Snapshot(n, line, ts))
    return [f for f in (s.fact(file) for s in snaps) if f]
