"""Every pattern against adversarial values of what it captures.

Real ids are not polite: region names with commas and brackets, pod names
with unicode, container ids 200 characters long, paths with parentheses. For
each example line of each library symptom, every value a pattern captures is
replaced by adversarial values of the same type; the symptom must still match
the line (through `re`, as the engine confirms), and no pattern may take
long on a line with a 16 KiB token (catastrophic backtracking stalls a scan).
"""

from __future__ import annotations

import re
import time

import pytest

from tests.helpers import catalog

# Per capture type: values real clusters print that the example lines do not
# (operator and job names with parentheses and brackets, unicode table and
# topic names, very long ids). Numbers, block ids and enumerations are what
# their pattern says they are, so only open-ended captures are varied.
ADVERSARIAL = {
    "str": ["Sink: Writer (1/4)#0", "a(b(c))d", "x[1][2]", "ünï-名前-✓", "A" * 4096],
    "host": ["ip-10-0-0-1.ec2.internal", "h" * 253],
    "path": ["/data/a(b)/c[1]/ü.log", "/" + "d/" * 600 + "f"],
}
OPEN_ENDED = re.compile(r"\\S|\.|\[\^")
LONG_TOKEN = "x" * 16384
SLOW_SECONDS = 0.25


def _cases():
    for sid, definition in sorted(catalog().symptoms.items()):
        if definition.get("patterns"):
            yield pytest.param(sid, definition, id=sid)


def _group_source(pattern: str, name: str) -> str:
    """The text of the named group `name` in `pattern`, up to its closing parenthesis."""
    start = pattern.index(f"(?P<{name}>") + len(f"(?P<{name}>")
    depth, i = 1, start
    while depth:
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern[i] == "[":  # a class: its parentheses are characters
            i += 2 if pattern[i + 1] != "^" else 3
            while pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
        depth += {"(": 1, ")": -1}.get(pattern[i], 0)
        i += 1
    return pattern[start:i - 1]


def _variants(line: str, compiled: list[re.Pattern], captures: dict[str, str]):
    """(description, line) pairs: each open-ended captured value replaced by
    each adversarial value of its type."""
    for pat in compiled:
        m = pat.search(line)
        if not m:
            continue
        for name, value in m.groupdict().items():
            group = _group_source(pat.pattern, name)
            if value is None or not value.strip() or not OPEN_ENDED.search(group):
                continue
            # A value the group itself accepts: what is tested is that the rest of the
            # pattern (delimiters, lazy ends, what follows) still finds its place.
            for bad in (b for b in ADVERSARIAL.get(captures.get(name, "str"), []) if re.fullmatch(group, b)):
                start, end = m.span(name)
                yield f"{name}={bad[:20]}{'...' if len(bad) > 20 else ''}", line[:start] + bad + line[end:]


@pytest.mark.parametrize("sid,definition", list(_cases()))
def test_adversarial_captured_values_still_match(sid, definition):
    compiled = [re.compile(p) for p in definition["patterns"]]
    captures = definition.get("captures") or {}
    misses = []
    for example in definition.get("examples") or []:
        for what, variant in _variants(example, compiled, captures):
            if not any(p.search(variant) for p in compiled):
                misses.append(f"{what} in {example[:120]!r}")
    assert misses == [], f"{sid}: {len(misses)} variant(s) not matched:\n" + "\n".join(misses[:10])


@pytest.mark.parametrize("sid,definition", list(_cases()))
def test_no_pattern_is_slow_on_a_long_token(sid, definition):
    slow = []
    for pattern in definition["patterns"]:
        compiled = re.compile(pattern)
        for example in definition.get("examples") or [""]:
            # The token after the first word sits where captures start; a pattern that begins
            # with an unbounded capture retries it from every offset (quadratic).
            for line in (example.replace(" ", " " + LONG_TOKEN + " ", 1), LONG_TOKEN + " " + example):
                t0 = time.perf_counter()
                compiled.search(line)
                took = time.perf_counter() - t0
                if took > SLOW_SECONDS:
                    slow.append(f"{pattern[:80]!r}: {took:.2f} s")
    assert slow == [], f"{sid}: slow on a 16 KiB token:\n" + "\n".join(slow[:5])


def test_the_fuzz_reaches_the_open_ended_captures():
    # Guards the filters above: a change that skipped every capture would pass vacuously.
    reached = 0
    for param in _cases():
        sid, definition = param.values
        compiled = [re.compile(p) for p in definition["patterns"]]
        examples = definition.get("examples") or []
        reached += any(True for ex in examples for _ in _variants(ex, compiled, definition.get("captures") or {}))
    assert reached >= 40
