"""scan_range: the same hits and line numbers whether a file is one range or many."""

import random
import re

import pytest

from analyzers.scan import plan_ranges, scan_range
from analyzers.signatures import ERROR_KEY, Signature, matcher_for

SIGS = [
    Signature("zk-client-session-timeout",
              r"Client session timed out, have not heard from server in (?P<silence_ms>\d+)ms for session ?id 0x(?P<session>[0-9a-fA-F]+)"),
    Signature("hdfs-close-interrupted", r"Interrupted while waiting for data to be acknowledged by pipeline"),
    Signature("jvm-pause-no-gcs", r"^\s*No GCs detected\s*$"),
    Signature(ERROR_KEY, r"\b(?:ERROR|FATAL)\b"),
]
HEADER = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")


def is_start(line: str) -> bool:
    return bool(HEADER.match(line))


LINES = [
    "2020-10-16 17:05:05,939 WARN org.apache.zookeeper.ClientCnxn - Client session timed out, have not heard from server in 29068ms for sessionid 0x30135fa8005449f",
    "2019-04-23 17:38:05,591 ERROR StreamTask - Error during disposal of stream operator.",
    "java.io.InterruptedIOException: Interrupted while waiting for data to be acknowledged by pipeline",
    "\tat org.apache.hadoop.hdfs.DFSOutputStream.waitForAckedSeqno(DFSOutputStream.java:2022)",
    "2021-01-01 00:00:00,000 INFO JvmPauseMonitor - Detected pause in JVM or host machine (eg GC): pause of approximately 30000ms",
    "No GCs detected",
    "2021-01-01 00:00:01,000 INFO noise line with nothing in it",
]


def _write_bundle_file(tmp_path, n=3000, seed=7, crlf=False):
    rnd = random.Random(seed)
    body = [rnd.choice(LINES) for _ in range(n)]
    sep = "\r\n" if crlf else "\n"
    p = tmp_path / "a.log"
    p.write_bytes(sep.join(body).encode())
    return p, body


def _hits(p, ranges, max_line=1 << 20):
    m = matcher_for(SIGS)
    out, offset, errors = [], 0, 0
    for s, e in ranges:
        r = scan_range("a.log", str(p), s, e, m, max_line, is_start)
        out += [(h.key, offset + h.line_in_range, h.text, tuple(sorted(h.captures.items())), h.header) for h in r.all_hits()]
        errors += r.error_count
        offset += r.lines
    return out, offset, errors


@pytest.mark.parametrize("crlf", [False, True])
def test_it_numbers_lines_the_same_across_ranges(tmp_path, crlf):
    p, body = _write_bundle_file(tmp_path, crlf=crlf)
    size = p.stat().st_size
    whole, n_whole, err_whole = _hits(p, [(0, size)])
    split, n_split, err_split = _hits(p, plan_ranges(size, 997))
    assert n_whole == n_split == len(body)
    assert whole == split
    assert err_whole == err_split == sum(1 for line in body if " ERROR " in line)
    expected = [i + 1 for i, line in enumerate(body) if "Interrupted while waiting" in line]
    assert [ln for key, ln, *_ in whole if key == "hdfs-close-interrupted"] == expected


def test_it_finds_the_record_header_of_a_stack_trace_line(tmp_path):
    p = tmp_path / "a.log"
    p.write_text("\n".join(LINES[1:4]) + "\n")
    (hit,), _, _ = _hits(p, [(0, p.stat().st_size)])
    assert hit[0] == "hdfs-close-interrupted" and hit[1] == 2
    assert hit[4].startswith("2019-04-23 17:38:05,591 ERROR")


def test_it_types_nothing_but_captures_named_groups(tmp_path):
    p = tmp_path / "a.log"
    p.write_text(LINES[0] + "\n")
    (hit,), _, _ = _hits(p, [(0, p.stat().st_size)])
    assert dict(hit[3]) == {"silence_ms": "29068", "session": "30135fa8005449f"}


def test_it_finds_a_signature_at_the_end_of_a_50_mb_line(tmp_path):
    p = tmp_path / "long.log"
    with open(p, "wb") as fh:
        fh.write(b"2019-04-23 17:38:05,591 WARN x " + b"y" * (50 * 1024 * 1024))
        fh.write(b" Interrupted while waiting for data to be acknowledged by pipeline\nnext line\n")
    hits, n, _ = _hits(p, [(0, p.stat().st_size)], max_line=64 * 1024 * 1024)
    assert [h[:2] for h in hits] == [("hdfs-close-interrupted", 1)]
    assert n == 2


def test_it_reports_a_line_cut_at_the_limit(tmp_path):
    p = tmp_path / "long.log"
    p.write_bytes(b"Interrupted while waiting for data to be acknowledged by pipeline " + b"z" * 200_000 + b"\nNo GCs detected\n")
    m = matcher_for(SIGS)
    r = scan_range("long.log", str(p), 0, p.stat().st_size, m, 100_000, is_start)
    assert [(h.key, h.line_in_range) for h in r.hits] == [("hdfs-close-interrupted", 1), ("jvm-pause-no-gcs", 2)]
    assert r.cut_lines == [(1, 100_000)]
    assert r.lines == 2
