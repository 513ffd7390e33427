"""The Hyperscan prefilter never loses a line that Python `re` matches.

The bundled Vectorscan (hyperscan wheel 0.9.x) drops matches of regexes
compiled together into one database; the matcher therefore gives Hyperscan
only the literals each pattern cannot match without (analyzers/literals.py).
These tests scan real example lines (runbooks/symptoms/*.yaml) with the
database the engine really uses, through scan_range, and compare every
(signature, line) pair it reports with `re` run on each line alone.
"""

from __future__ import annotations

import random
import re

import pytest

from analyzers import timestamps
from analyzers.literals import is_caseless, required_literals
from analyzers.scan import scan_range
from analyzers.signatures import ERROR_KEY, LEAD_KEY, VERSION_KEY_PREFIX, Matcher, Signature, matcher_for, signatures_from_runbooks
from tests.helpers import catalog, runbook_metas

# librdkafka's connect failure (runbooks/symptoms/kafka-client-node-connect-failed.yaml,
# the line from that symptom's examples) and the two patterns its symptom used to have.
# Compiled as regexes into one Vectorscan 5.4.12 database, the first is never reported
# on this line; compiled alone it is. Intel Hyperscan 5.4.0 reports it either way.
RDKAFKA_LINE = ("%3|1758357099.830|FAIL|rdkafka#consumer-2| [thrd:localhost:9092/1]: localhost:9092/1: "
                "Connect to ipv4#127.0.0.1:9092 failed: Connection refused (after 0ms in state CONNECT)")
DROPPED_TOGETHER = [r"/\d+: Connect to", r"/\d+: Failed to connect to broker at "]


# Two consecutive Hive stack frames (tests/fixtures/cases/hive-metastore-unreachable/positive/
# impala-1/catalogd.log, provenance in its SOURCE.md), the stack-frame symptom's pattern and an
# anchored JDBC pattern. Compiled together (HS_FLAG_MULTILINE alone suffices), Vectorscan
# reports the first frame only; Intel Hyperscan 5.4.0 reports both.
HIVE_FRAMES = ["\tat org.apache.hadoop.hive.metastore.HiveMetaStoreClient.open(HiveMetaStoreClient.java:512)",
               "\tat org.apache.hadoop.hive.metastore.HiveMetaStoreClient.<init>(HiveMetaStoreClient.java:244)"]
HIVE_DROPPED_TOGETHER = [r"^\s*at org\.apache\.hadoop\.hive\.\w",
                         r"^\s*Error: (Could not open client transport with JDBC Uri: .*)\s*$"]


def _example_lines() -> list[tuple[str, str]]:
    """(symptom, line) for every line of every example (a multi-line example gives each line)."""
    return [(sid, line) for sid, definition in sorted(catalog().symptoms.items())
            for example in definition.get("examples") or [] for line in example.split("\n")]


def _engine_matcher() -> Matcher:
    return matcher_for(signatures_from_runbooks(runbook_metas()))


def _scanned(matcher: Matcher, lines: list[str], tmp_path, leads: bool = False) -> set[tuple[str, int]]:
    """(signature key, 1-based line) for every confirmed match scan_range reports."""
    path = tmp_path / "mixed.log"
    path.write_bytes("\n".join(lines).encode("utf-8") + b"\n")
    result = scan_range("mixed.log", str(path), 0, path.stat().st_size, matcher, 1 << 20, timestamps.is_record_start)
    assert result.lines == len(lines) and not result.errors_sampled
    found = {(hit.key, hit.line_in_range) for hit in result.all_hits()}
    found |= {(ERROR_KEY, line) for line, _ in result.errors}
    found |= {(VERSION_KEY_PREFIX + comp, line) for comp, _, line, _ in result.versions}
    # A lead candidate (analyzers/lead_scan.py) is every line the error or a lead pattern takes;
    # records are kept one per template, so only a lone line compares one to one.
    if leads:
        found |= {(LEAD_KEY, record.line_in_range) for record in result.leads.values()}
    return found


def _by_re(matcher: Matcher, lines: list[str], leads: bool = False) -> set[tuple[str, int]]:
    found = {(sig.key, n) for n, line in enumerate(lines, 1)
             for sig, rx in zip(matcher.signatures, matcher.regexes)
             if sig.key != LEAD_KEY and rx.search(line.rstrip("\r"))}
    if leads:
        found |= {(LEAD_KEY, n) for n, line in enumerate(lines, 1) if matcher.is_lead_candidate(line.rstrip("\r"))}
    return found


def test_two_patterns_that_vectorscan_drops_together_both_find_their_line():
    matcher = Matcher([Signature("connect", DROPPED_TOGETHER[0]), Signature("failed", DROPPED_TOGETHER[1])])
    data = ("x " + RDKAFKA_LINE.split("]: ", 1)[1]).encode()
    found = {matcher.signatures[idx].key for idx, start, end in matcher.candidates(data)
             if matcher.confirm(idx, data[start:end].decode())}
    assert found == {"connect"}


def test_a_hive_stack_frame_after_another_is_found_beside_an_anchored_pattern():
    matcher = Matcher([Signature("frame", HIVE_DROPPED_TOGETHER[0]), Signature("jdbc", HIVE_DROPPED_TOGETHER[1])])
    data = "\n".join(HIVE_FRAMES).encode()
    found = {(matcher.signatures[idx].key, start) for idx, start, end in matcher.candidates(data)
             if matcher.confirm(idx, data[start:end].decode())}
    assert found == {("frame", 0), ("frame", len(HIVE_FRAMES[0]) + 1)}


def test_every_example_line_alone_matches_the_same_signatures_as_re(tmp_path):
    matcher = _engine_matcher()
    assert matcher.engine == "hyperscan"
    lines = [line for _, line in _example_lines()]
    differences = []
    for line in lines:
        scanned, expected = _scanned(matcher, [line], tmp_path, leads=True), _by_re(matcher, [line], leads=True)
        if scanned != expected:
            differences.append((line[:120], sorted(expected - scanned), sorted(scanned - expected)))
    assert differences == []


def test_each_example_is_matched_by_its_own_symptom(tmp_path):
    matcher = _engine_matcher()
    examples = _example_lines()
    found = _scanned(matcher, [line for _, line in examples], tmp_path)
    # A multi-line example needs only one of its lines matched.
    matched = {sid for n, (sid, _) in enumerate(examples, 1) if (sid, n) in found}
    assert matched == {sid for sid, _ in examples}


@pytest.mark.parametrize("seed", range(5))
def test_example_lines_of_many_symptoms_mixed_in_one_buffer_match_as_with_re(seed, tmp_path):
    matcher = _engine_matcher()
    rng = random.Random(seed)
    lines = [line for _, line in _example_lines()]
    mixed = rng.choices(lines, k=3000)
    # Windows line ends and lines glued to their neighbours' tails shift every offset.
    mixed = [line + "\r" if rng.random() < 0.1 else line for line in mixed]
    mixed += [a[len(a) // 2:] + b for a, b in zip(rng.sample(lines, 200), rng.sample(lines, 200))]
    rng.shuffle(mixed)
    assert _scanned(matcher, mixed, tmp_path) == _by_re(matcher, mixed)


def test_without_the_error_pattern_the_other_signatures_still_match_as_with_re():
    matcher = _engine_matcher()
    lines = [line for _, line in _example_lines()]
    data = "\n".join(lines).encode()
    starts = [0] + [m.end() for m in re.finditer(b"\n", data)]
    scanned = {(matcher.signatures[idx].key, starts.index(start) + 1) for idx, start, end in matcher.candidates(data, errors=False)
               if matcher.confirm(idx, data[start:end].decode().rstrip("\r"))}
    assert scanned == {pair for pair in _by_re(matcher, lines) if pair[0] != ERROR_KEY}


@pytest.mark.parametrize("pattern,literals", [
    (r"/\d+: (?:Connect to ipv[46]#|Failed to connect to broker at )",
     {": Connect to ipv4#", ": Connect to ipv6#", ": Failed to connect to broker at "}),
    (r"^\s*at org\.apache\.hadoop\.hive\.\w", {"at org.apache.hadoop.hive."}),
    (r"Kill(?:ed)? process (?P<pid>\d+)", {"Kill process ", "Killed process "}),
    (r"(?:xy)+z", {"xyz"}),                   # the last "xy" of the repeat joins the "z"
    (r"(?:^|\s)(?P<host>[\w.:-]+) *\t(?P<holder>DFSClient_\S+)", {"\tDFSClient_"}),
    (r"Slow BlockReceiver(?: write)?", {"Slow BlockReceiver"}),   # "... write" holds it
    (r"\bERROR\b|^\s*\w+(?:Exception|Error)\b", {"ERROR", "Exception", "Error"}),
    (r"ab?c", {"abc", "ac"}),
    (r"\w+\d|x", None),    # no literal is in every match: re tries every line
])
def test_the_required_literals_of_a_pattern(pattern, literals):
    assert required_literals(pattern) == (frozenset(literals) if literals else None)


def test_a_caseless_pattern_finds_its_line_in_any_case():
    assert is_caseless(r"(?i)broker down") and is_caseless(r"x(?i:broker down)") and not is_caseless("broker down")
    matcher = Matcher([Signature("down", r"(?i)broker down"), Signature("number", r"\d{3}")])
    data = b"BROKER DOWN now\n404\nnothing"
    found = {(matcher.signatures[idx].key, start) for idx, start, end in matcher.candidates(data)
             if matcher.confirm(idx, data[start:end].decode())}
    assert found == {("down", 0), ("number", 16)}


def test_every_shipped_pattern_has_a_literal_of_four_characters_or_more():
    # Not a correctness matter (a pattern without one is tried by `re` on every line) but a
    # speed one: a signature without a selective literal makes every line a candidate.
    weak = [s.pattern for s in signatures_from_runbooks(runbook_metas())
            if min(map(len, required_literals(s.pattern) or {""})) < 4]
    assert weak == []
