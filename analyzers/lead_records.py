"""What makes a line a lead candidate, and where the record it belongs to starts and ends.

The scan (analyzers/scan.py) hands every line the error pattern (signatures.ERROR_LINE)
or the lead pattern (LEAD_LINE, here) matched to `RecordCollector`, which turns it into
a whole record: a Java stack trace (`\\tat`, `Caused by:`, `... N more` lines), a Python
traceback (from `Traceback (most recent call last):` to its final `XError: msg` line) or
a single line. Records are kept per range, bounded (MAX_LEAD_KEYS records, the first of
each template key, and counts for all of them), and ranked on the driver
(analyzers/leads.py).

Formats the lead pattern adds to ERROR_LINE's level words and qualified exceptions
(provenance of a real example of each: tests/fixtures/README.md, leads-formats/):
failures logged at INFO/WARN (state transitions to FAILED/UNHEALTHY/LOST/SUSPENDED,
refusals), exceptions mid-line and short class names, Python tracebacks, fluentd
`[error]`/`[warn]`, librdkafka `%3|...|FAIL|`, Go `panic:`, `level=error`, klog
`E1124 ...`, kernel reports (hung tasks, BUG, Oops, call traces, soft lockups, the OOM
killer), and the lines that say a process stops (`Shutting down`, `ABORTING`, exit
codes, signals).
"""

from __future__ import annotations

import re

# Hyperscan prefilters with this, `re` confirms (analyzers/signatures.py). Alternatives by kind.
_KINDS: list[tuple[str, str]] = [
    ("panic", r"^panic: |\bpanic: |^fatal error: |\blevel=panic\b"),
    ("kernel", r"INFO: task \S+ blocked for more than|\bBUG: |\bOops\b|Call Trace:|soft lockup"
               r"|hard LOCKUP|[Oo]ut of memory: Kill|invoked oom-killer|Kernel panic|\bsegfault at\b"
               r"|Unable to handle kernel|general protection fault"
               # A WARN() block: "------------[ cut here ]------------" then "WARNING: CPU: 0 PID: 7 at
               # file:line function" (since 3.x; "WARNING: at file:line" before), its message, a backtrace.
               r"|cut here \]|WARNING: CPU: \d+ PID: \d+ at |WARNING: at \S+:\d+ "
               r"|\bI/O error\b|EXT4-fs error|hung_task"),
    ("traceback", r"^Traceback \(most recent call last\):"),
    # Exceptions after a blank or a delimiter (mid-line), or short names at a line start: a
    # qualified name at a line start is the error pattern's already (signatures.ERROR_LINE).
    ("exception", r"Exception in thread \"|(?:^|[\s:(\[=,'\"])[A-Z][\w$]*(?:Exception|Error)\b:"
                  r"|[\s:(\[=,'\"](?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error|Throwable)\b"),
    ("state", r"(?:\bto|->|=>|State change:|\bstate(?: is)?:?|\bbecame|\bis now|\breported)"
              r" +(?:FAILED|FAILING|UNHEALTHY|LOST|SUSPENDED|KILLED|DEAD|UNAVAILABLE|OFFLINE)\b"),
    # Not "terminating": HDFS says "PacketResponder ... terminating" for every block.
    ("stop", r"\b(?:Shutting down|shutting down|SHUTDOWN_MSG|ABORTING|[Aa]borting|[Ee]xiting"
             r"|SIG(?:TERM|KILL|INT|SEGV|ABRT|BUS)|exit code|exitCode=|exit status"
             r"|RECEIVED SIGNAL|System\.exit|Halting)\b"
             # docker compose's note when a service's container stops: "namenode exited with code 1"
             r"|^[\w.\-]+ exited with code [1-9]\d*$"),
    # librdkafka's "%3|1581234567.123|FAIL|" and klog's "E1124 10:00:00.123456 1 file.go:42]" are
    # written with a literal of four characters or more (a prefilter on "|" or " " would make
    # every line a candidate): the epoch seconds start with 1 until 2033; klog names a .go file.
    ("error", r"\[(?:error|warn)\]|(?:%0\|1|%1\|1|%2\|1|%3\|1|%4\|1)\d+\.\d+\|[A-Z_]+\|"
              r"|\blevel=(?:error|fatal|crit)\b"
              r"|\"level\": ?\"(?:error|fatal)\"|^[EF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [\w.-]+\.go:\d+\]"
              # "Failed to connect", "failed: ...", refusals; not counters ("Failed Shuffles=0")
              r"|\b(?:[Ff]ailed|FAILED) (?:to|with|because|due)\b|\b(?:[Ff]ailed|[Ff]ailure)[:!]"
              r"|\b(?:[Rr]efused|[Rr]efusing|[Dd]enied|[Rr]ejected|[Rr]ejecting)\b"
              # Hadoop's and HBase's IPC clients log a server they cannot reach at INFO, one line a
              # retry ("Retrying connect to server: 0.0.0.0/0.0.0.0:8031. Already tried 0 time(s)...")
              r"|\bRetrying connect to server\b"
              # Go's standard `log` ("2024/12/23 12:37:28 msg", "[sarama] " before it from log.New) has no level word: an error it prints
              # says so in words ("got error from broker -1 ...: unexpected EOF"); lines that do carry
              # a level after the date are left to the level rules.
              r"|^(?:\[[\w.\-]+\] )?\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d+)? (?!\[?(?:DEBUG|INFO|NOTICE|TRACE|debug|info|notice|trace)\b)"
              r"[^\n]*?\b(?:[Ee]rror|unexpected EOF)\b"),
]
# The lead pattern is searched anywhere in a line: only its head, so that a megabyte-long
# line costs what a normal one does (the pattern's open repetitions are quadratic on one word).
LEAD_CONFIRM_CHARS = 4096
LEAD_LINE = "|".join(f"(?:{p})" for _, p in _KINDS)


def _top_level_alternatives(pattern: str) -> list[str]:
    """`a|(?:b|c)|d` -> [`a`, `(?:b|c)`, `d`]: the pattern's alternatives outside groups and classes."""
    parts, depth, in_class, start, i = [], 0, False, 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 1
        elif in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if pattern[i + 1:i + 2] == "]":
                i += 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    return parts + [pattern[start:]]


# One signature per alternative of each kind (analyzers/signatures.py): Hyperscan says which
# alternatives a line may match by their literals, and `re` confirms only those. A whole kind
# costs `re` 10-25 us a line (it tries every alternative at every position), one alternative ~1-3.
# Not the exception kind: its alternatives share their literals ("Exception", "Error"), so split
# they would be two candidates (and two confirmations) for every such line.
LEAD_PATTERNS = [alt for kind, p in _KINDS for alt in ([p] if kind == "exception" else _top_level_alternatives(p))]
_KIND_RES = [(kind, re.compile(p)) for kind, p in _KINDS]
_LEVEL_ERROR = re.compile(r"\b(?:ERROR|FATAL|SEVERE|CRITICAL)\b")

# A line that continues the record above it (a stack trace, a traceback's frames).
_CONTINUES = re.compile(
    r"^(?:[ \t]+\S|Caused by:|Suppressed:|\.\.\. \d+ (?:more|common frames omitted)"
    r"|(?:[a-zA-Z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error|Throwable)\b)")
_TRACEBACK = "Traceback (most recent call last):"
# The last line of a Python traceback, right under its indented frames: "ValueError: msg",
# "kafka.errors.NoBrokersAvailable" (a dotted name, alone or before ": ")
_PY_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(?:: |:?$)")
_CAUSED_BY = "Caused by:"
# The compose demuxer files "<svc> exited with code N" under that service (analyzers/layouts/prefixed.py):
# it belongs to the service's last record, which is then "the last record before the process stopped".
_COMPOSE_EXIT = re.compile(r"^[\w.\-]+ exited with code [1-9]\d*$")
_CUT_HERE = "[ cut here ]"
# A kernel report (a soft lockup: modules, registers, "Call Trace:", frames) is many syslog
# lines, each with its own prefix: a line continues the report above when it has the same
# prefix (same second, host, "kernel:") and does not start a report of its own.
# dmesg's uptime stamp ("[   91.139253] ") counts as such a prefix up to its whole seconds.
_SYSLOG_KERNEL = re.compile(r"^(?:<\d+>)?[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ kernel: "
                            r"|^\[ *\d+\.(?=\d{6}\] )")
_KERNEL_REPORT_START = re.compile(
    r"INFO: task \S+ blocked for more than|\bBUG: |Unable to handle kernel|soft lockup|hard LOCKUP"
    r"|[Oo]ut of memory: Kill|invoked oom-killer|Kernel panic|\bsegfault at\b|cut here \]"
    r"|general protection fault")

MAX_RECORD_LINES = 400          # lines of one record, up or down from a candidate line
MAX_RECORD_SCAN = 64 * 1024     # bytes read to find a record's end (and its deepest Caused by)
MAX_RECORD_TEXT = 8 * 1024      # characters of a record kept for display


def kind_of(text: str) -> str:
    """The first kind (in _KINDS order: most telling first) any line of the record shows."""
    for kind, rx in _KIND_RES:
        if rx.search(text):
            return kind
    if _COMPOSE_EXIT.match(text[text.rfind("\n") + 1:]):
        return "stop"                         # a service's last record, then compose's note that it exited
    return "error" if _LEVEL_ERROR.search(text) else "exception"


def is_stop(line: str) -> bool:
    return _KIND_RES[5][1].search(line) is not None


def starts_record(line: str, is_record_start) -> bool:
    """Does `line` start a record whatever the line above it is (continues() is False)?"""
    return bool(is_record_start(line)) and not _SYSLOG_KERNEL.match(line)


def continues(line: str, above: str, is_record_start) -> bool:
    """Does `line` belong to the record of the line `above` it?"""
    if line[:1] in (" ", "\t"):
        return bool(line.strip())             # a frame, an indented message line (no layout starts so)
    m = _SYSLOG_KERNEL.match(line)
    if m:
        return above.startswith(m.group(0)) and not _KERNEL_REPORT_START.search(line, m.end())
    if not line or is_record_start(line):
        return False
    if _COMPOSE_EXIT.match(line):
        return bool(above.strip())
    if _CONTINUES.match(line):
        return True
    if line.startswith(_TRACEBACK):
        return bool(above) and is_record_start(above)   # a logged exception: the header above owns it
    return bool(_PY_EXCEPTION.match(line)) and above[:1] in (" ", "\t")


def headline(lines: list[str]) -> str:
    """What to show first: the deepest "Caused by", a traceback's final exception, else line one."""
    deepest = None
    in_traceback = False
    for ln in lines:
        if ln.startswith(_CAUSED_BY):
            deepest = ln
        elif ln.startswith(_TRACEBACK):
            in_traceback = True
        elif in_traceback and _PY_EXCEPTION.match(ln):
            deepest, in_traceback = ln, False
    if deepest is None and len(lines) > 1 and _CUT_HERE in lines[0]:
        deepest = lines[1]                    # the kernel's WARN() marker says nothing; the WARNING line does
    return (deepest or lines[0]).strip()
