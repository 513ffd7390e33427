"""analyzers/literals.py is sound: every line a pattern matches holds a literal of each set.

Random patterns over a small grammar (literals, classes, anchors, groups,
alternations, greedy and lazy repeats) and random strings over a five-letter
alphabet, so that about half of them match; seeded, so a failure replays.
"""

from __future__ import annotations

import random
import re

import pytest

from analyzers.literals import WHITESPACE, required_literal_sets
from analyzers.signatures import Matcher, Signature

ALPHABET = "ab1: \t\u3000"
ATOMS = ["a", "b", "1", ":", " ", "ab", "a:", r"\d", r"\s", r"\w", ".", "[ab]", "[a1]", "[^a]", "[0-9]",
         r"\b", "^", "$"]
REPEATS = ["?", "*", "+", "{2}", "{1,3}", "{0,2}", "??", "+?"]


def random_pattern(rng: random.Random, depth: int = 0) -> str:
    k = rng.random()
    if depth > 3 or k < 0.35:
        return rng.choice(ATOMS)
    if k < 0.6:
        return "".join(random_pattern(rng, depth + 1) for _ in range(rng.randint(2, 4)))
    if k < 0.75:
        return "(?:" + "|".join(random_pattern(rng, depth + 1) for _ in range(rng.randint(2, 3))) + ")"
    if k < 0.9:
        return "(?:" + random_pattern(rng, depth + 1) + ")" + rng.choice(REPEATS)
    return f"(?P<g{rng.randrange(10**6)}>" + random_pattern(rng, depth + 1) + ")"


def random_line(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 10)))


def _patterns(rng: random.Random, n: int) -> list[str]:
    out = []
    while len(out) < n:
        pattern = random_pattern(rng)
        try:
            if re.compile(pattern).search(""):   # the loader refuses patterns that match nothing at all
                continue
        except re.error:                        # a repeated anchor, a duplicate group name
            continue
        out.append(pattern)
    return out


@pytest.mark.parametrize("seed", range(3))
def test_every_matching_line_holds_a_literal_of_each_of_the_patterns_sets(seed):
    rng = random.Random(seed)
    unsound, matched = [], 0
    for pattern in _patterns(rng, 1500):
        rx, sets = re.compile(pattern), required_literal_sets(pattern)
        for line in (random_line(rng) for _ in range(40)):
            if rx.search(line):
                matched += 1
                scanned = line + "\n"          # the matcher sees each line with its end ($)
                if not all(any(lit in scanned for lit in literals) for literals in sets):
                    unsound.append((pattern, line, [sorted(s) for s in sets]))
    assert matched > 10_000 and unsound == []


def test_whitespace_is_what_re_takes_for_backslash_s():
    assert set(WHITESPACE) == {chr(c) for c in range(0x110000) if re.match(r"\s", chr(c))}


@pytest.mark.parametrize("seed", range(3))
def test_the_matcher_on_random_patterns_finds_what_re_finds(seed):
    rng = random.Random(100 + seed)
    signatures = [Signature(f"s{i}", p) for i, p in enumerate(_patterns(rng, 200))]
    matcher = Matcher(signatures)
    lines = [random_line(rng) for _ in range(2000)]
    data = "\n".join(lines).encode()
    starts = {0: 1}
    starts.update({m.end(): n for n, m in enumerate(re.finditer(b"\n", data), 2)})
    found = {(idx, starts[start]) for idx, start, end in matcher.candidates(data)
             if matcher.confirm(idx, data[start:end].decode())}
    expected = {(idx, n) for n, line in enumerate(lines, 1) for idx, rx in enumerate(matcher.regexes) if rx.search(line)}
    assert found == expected


def test_a_line_end_is_the_newline_or_carriage_return_the_matcher_sees():
    assert required_literal_sets(r"done$") == [frozenset({"done\n", "done\r"})]
    assert required_literal_sets(r"done$$") == [frozenset({"done\n", "done\r"})]   # zero-width: one end
    assert required_literal_sets(r"(?:x$|y)z") == [frozenset({"yz"})]                 # text after $ never matches


BUCKET = r"(?:^|\s)\d+:\s+(?P<instances>\d+)\s+(?P<bytes>\d+)\s+org\.apache\.flink\.Bucket(?:\s|$)"


def test_text_between_spaces_or_line_ends_needs_both_of_its_sides():
    leading, trailing = required_literal_sets(BUCKET)
    assert {s.strip(WHITESPACE) for s in leading | trailing} == {"org.apache.flink.Bucket"}
    assert " org.apache.flink.Bucket" in leading and "org.apache.flink.Bucket\n" in trailing
    # A logger named ...Buckets has the one side only: it is no candidate; jmap's histogram line is.
    matcher = Matcher([Signature("bucket", BUCKET)])
    data = (b"2019-04-22 00:29:00,284 INFO  org.apache.flink.Buckets [] - Subtask 6 checkpointing\n"
            b"   1:        120000      5760000  org.apache.flink.Bucket\n"
            b"   2:        120000      5760000  org.apache.flink.Bucket")   # the last line has no newline
    lines = data.split(b"\n")
    assert [start for _, start, _ in matcher.candidates(data)] == [len(lines[0]) + 1, len(lines[0]) + len(lines[1]) + 2]
