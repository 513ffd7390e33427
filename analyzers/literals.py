"""The literal strings a regex cannot match without: the keys of the candidate-line prefilter.

`required_literals(pattern)` returns a set of strings such that every line the
pattern matches contains at least one of them (or None when no such set is
found). The matcher (analyzers/signatures.py) looks for these strings only,
with Hyperscan's pure-literal compiler, and `re` decides every candidate line.

Why not compile the regexes themselves into one Hyperscan database: the
hyperscan wheel (0.9.x) bundles Vectorscan 5.4.12, whose multi-pattern block
databases drop matches (tests/analyzers/test_prefilter.py has two two-pattern
reproducers; Intel Hyperscan 5.4.0 reports the lines, Vectorscan 5.4.9 and 5.4.12 do
not, and upstream has several such reports, e.g. VectorCamp/vectorscan#358).
A pure-literal database has none of the automata that carry the regexes' prefixes
and anchors, where these reports point; it is still a database of Vectorscan's,
so the same tests hold it to `re` (every example line, shuffled buffers, and
random patterns in tests/analyzers/test_literals.py).

The analysis is conservative: an item it does not understand (a class of many
characters, an optional part, a look-around) only ends a run of literal text;
it never adds a string that a match could lack.
"""

from __future__ import annotations

import re

try:  # Python 3.11+: the parser moved; sre_parse still imports, with a DeprecationWarning
    from re import _constants as sre, _parser as sre_parse
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_constants as sre  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

MAX_STRINGS = 128       # alternatives kept per set (a cross product grows fast)
MAX_CLASS = 6           # a class of more characters than this is not spelled out...
# ...but \s is, as re has it for str patterns (tests/analyzers/test_literals.py checks the list):
# "Bucket" then \s or $ need not find every "Buckets".
WHITESPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
              "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
# $ ends a line: the scanned bytes have "\n" there, or "\r" (re sees lines without their \r).
# While sets are built it is this mark (zero-width, so "$$" is one line end); a string with
# text after it can never match and is dropped, a trailing one becomes each of LINE_END.
END_MARK = "\ue000"
LINE_END = ("\n", "\r")
_SPACE = (sre.CATEGORY_SPACE, sre.CATEGORY_UNI_SPACE)
_ENDS = (sre.AT_END, sre.AT_END_STRING)
MAX_FIXED_REPEAT = 8    # x{n} spelled out up to this n
_REPEATS = tuple(op for op in (sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", None)) if op)


def required_literals(pattern: str) -> frozenset[str] | None:
    """Strings one of which every match of `pattern` contains; None if none are known."""
    found = required_literal_sets(pattern)
    return found[0] if found else None


def required_literal_sets(pattern: str) -> list[frozenset[str]]:
    """The most selective such set, and a second one when it is the same text with whitespace
    or a line end on its other side: a match holds a string of each, so a candidate line needs
    both (for a space, then Bucket, then a space or the line's end, a log line's " Bucket"
    followed by "s" is no candidate)."""
    if END_MARK in pattern:    # the mark would be ambiguous: no literals, re tries every line
        return []
    found = [s for s in map(_line_ends, _required_sets(sre_parse.parse(pattern))) if s]
    found.sort(key=_selectivity, reverse=True)
    if not found:
        return []
    best = _minimal(found[0])
    # Only the same text bounded on its other side: a second set of other text costs a hit
    # on each of its (maybe common) strings wherever it is, and rarely narrows the first.
    core = _core(best)
    second = [_minimal(s) for s in found[1:] if _core(s) == core and not all(any(t in b for t in s) for b in best)]
    return [best] + second[:1]


def _core(strings) -> set[str]:
    return {s.strip(WHITESPACE) for s in strings}


def _line_ends(strings: set[str]) -> set[str]:
    """END_MARK made bytes: "$$" is one line end, and text after a line end never matches."""
    out = set()
    for s in strings:
        while END_MARK * 2 in s:
            s = s.replace(END_MARK * 2, END_MARK)
        if END_MARK not in s:
            out.add(s)
        elif s.index(END_MARK) == len(s) - 1:
            out.update(s[:-1] + end for end in LINE_END)
    return out if len(out) <= MAX_STRINGS else set()


def _minimal(strings: set[str]) -> frozenset[str]:
    # A string holding another of the set adds nothing: the shorter one is found wherever it is.
    return frozenset(s for s in strings if not any(t != s and t in s for t in strings))


def is_caseless(pattern: str) -> bool:
    """Whether any part of the pattern ignores case (then all its literals are matched caseless).

    Hyperscan folds ASCII case only: a caseless pattern's literal "sk" would not find the
    "ſK" (long s, Kelvin sign) that Python's re also takes for it. No shipped pattern is caseless."""
    parsed = sre_parse.parse(pattern)
    return bool(parsed.state.flags & re.IGNORECASE) or _scoped_ignorecase(parsed)


def _scoped_ignorecase(items) -> bool:
    """A (?i:...) group anywhere inside."""
    for op, av in items:
        if op is sre.SUBPATTERN and av[1] & re.IGNORECASE:
            return True
        for part in av if isinstance(av, (list, tuple)) else ():
            if isinstance(part, sre_parse.SubPattern) and _scoped_ignorecase(part):
                return True
            if isinstance(part, list) and any(isinstance(b, sre_parse.SubPattern) and _scoped_ignorecase(b) for b in part):
                return True
    return False


def _product(left: set[str], right: set[str]) -> set[str] | None:
    out = {a + b for a in left for b in right}
    return out if len(out) <= MAX_STRINGS else None


def _exact(item) -> set[str] | None:
    """All the strings the item can match, when they are few; else None."""
    op, av = item
    if op is sre.LITERAL:
        return {chr(av)}
    if op is sre.IN:
        chars: set[str] = set()
        limit = MAX_CLASS
        for kind, value in av:
            if kind is sre.LITERAL:
                chars.add(chr(value))
            elif kind is sre.RANGE and value[1] - value[0] < MAX_CLASS:
                chars.update(map(chr, range(value[0], value[1] + 1)))
            elif kind is sre.CATEGORY and value in _SPACE:
                chars.update(WHITESPACE)
                limit = MAX_CLASS + len(WHITESPACE)
            else:   # NEGATE, other categories (\d, \w, ...), wide ranges
                return None
        return chars if 0 < len(chars) <= limit else None
    if op is sre.SUBPATTERN:
        return _exact_sequence(av[-1])
    if op is sre.BRANCH:
        out: set[str] = set()
        for branch in av[1]:
            strings = _exact_sequence(branch)
            if strings is None:
                return None
            out |= strings
        return out if len(out) <= MAX_STRINGS else None
    if op is sre.AT:        # zero-width: ^ and \b join the text on both sides; $ is a line end
        return {END_MARK} if av in _ENDS else {""}
    if op in _REPEATS and (av[0], av[1]) == (0, 1):   # x? is "" or x
        body = _exact_sequence(av[2])
        return body | {""} if body is not None and len(body) < MAX_STRINGS else None
    if op in _REPEATS and av[0] == av[1] <= MAX_FIXED_REPEAT:
        body = _exact_sequence(av[2])
        out = {""}
        for _ in range(av[0]):
            if body is None or (out := _product(out, body)) is None:
                return None
        return out
    return None


def _exact_sequence(items) -> set[str] | None:
    out: set[str] | None = {""}
    for item in items:
        strings = _exact(item)
        if strings is None or (out := _product(out, strings)) is None:
            return None
    return out


def _selectivity(strings: set[str]) -> tuple[int, int]:
    """Longer shortest string first (fewer chance hits), then fewer strings."""
    return (min(map(len, strings)), -len(strings))


def _required(items) -> set[str] | None:
    """The most selective set among the runs of literal text and the required sub-parts."""
    found = _required_sets(items)
    return max(found, key=_selectivity) if found else None


def _required_sets(items) -> list[set[str]]:
    """Every set of this sequence that a match needs one string of, each on its own."""
    found: list[set[str]] = []

    def consider(strings: set[str] | None) -> None:
        if strings and "" not in strings and strings not in found:
            found.append(strings)

    run: set[str] = {""}   # the literal text since the last item that is not literal...
    parts: list[set[str]] = []   # ...item by item, so that a run too wide can drop its head
    for item in items:
        strings = _exact(item)
        if strings is not None:
            longer = _product(run, strings)
            if longer is None:
                consider(run)
                # Keep as much of the run's tail as still fits ("\sName" full: "Name\s").
                while parts and longer is None:
                    parts.pop(0)
                    longer = _product(_product_all(parts), strings)
                longer = strings if longer is None else longer
            run = longer
            parts.append(strings)
            continue
        # The item's own first and last literal text joins the runs around it.
        starts, ends = _edges(item)
        consider(_product(run, starts) or run)
        consider(_required_inside(item))
        run, parts = ends, [ends]
    consider(run)
    return found


def _product_all(parts: list[set[str]]) -> set[str]:
    out: set[str] | None = {""}
    for strings in parts:
        out = _product(out, strings) if out is not None else None
    return out if out is not None else {""}


def _wrapped(item):
    """The sequence a group, an atomic group or a repeat of at least once wraps: every match
    of `item` is one or more matches of it, so it holds what they require and starts and ends as they do."""
    op, av = item
    if op is sre.SUBPATTERN:
        return av[-1]
    if op is getattr(sre, "ATOMIC_GROUP", None):
        return av
    if op in _REPEATS and av[0] >= 1:
        return av[2]
    return None


def _edges(item) -> tuple[set[str], set[str]]:
    """Strings every match of the item starts with, and ends with ({""} when none are known)."""
    inner = _wrapped(item)
    if inner is not None:
        return _sequence_edges(inner)
    op, av = item
    if op is sre.BRANCH:
        edges = [_sequence_edges(branch) for branch in av[1]]
        starts, ends = set().union(*(e[0] for e in edges)), set().union(*(e[1] for e in edges))
        return (starts if len(starts) <= MAX_STRINGS else {""}), (ends if len(ends) <= MAX_STRINGS else {""})
    return {""}, {""}


def _sequence_edges(items) -> tuple[set[str], set[str]]:
    return _leading(list(items)), {s[::-1] for s in _leading(list(reversed(items)), reverse=True)}


def _leading(items, reverse: bool = False) -> set[str]:
    """The literal text every match of the sequence starts with (or, reversed, ends with)."""
    out: set[str] = {""}
    for item in items:
        strings = _exact(item)
        if strings is None:
            starts, ends = _edges(item)
            edge = {s[::-1] for s in ends} if reverse else starts
            return _product(out, edge) or out
        strings = {s[::-1] for s in strings} if reverse else strings
        longer = _product(out, strings)
        if longer is None:
            return out
        out = longer
    return out


def _required_inside(item) -> set[str] | None:
    inner = _wrapped(item)
    if inner is not None:
        return _required(inner)
    op, av = item
    if op is sre.BRANCH:
        per_branch = [_required(branch) for branch in av[1]]
        if all(per_branch):
            union = set().union(*per_branch)
            return union if len(union) <= MAX_STRINGS else None
    return None   # optional parts, look-arounds, anchors, classes: nothing required
