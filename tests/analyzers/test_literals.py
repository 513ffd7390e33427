"""analyzers/literals.py is sound: every line a pattern matches holds one of its literals.

Random patterns over a small grammar (literals, classes, anchors, groups,
alternations, greedy and lazy repeats) and random strings over a five-letter
alphabet, so that about half of them match; seeded, so a failure replays.
"""

from __future__ import annotations

import random
import re

import pytest

from analyzers.literals import required_literals
from analyzers.signatures import Matcher, Signature

ALPHABET = "ab1: "
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
def test_every_matching_line_holds_one_of_the_patterns_literals(seed):
    rng = random.Random(seed)
    unsound, matched = [], 0
    for pattern in _patterns(rng, 1500):
        rx, literals = re.compile(pattern), required_literals(pattern)
        for line in (random_line(rng) for _ in range(40)):
            if rx.search(line):
                matched += 1
                if literals is not None and not any(lit in line for lit in literals):
                    unsound.append((pattern, line, sorted(literals)))
    assert matched > 10_000 and unsound == []


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
