"""The result of an analysis, typed: what analyzers.engine returns, what
`manage.py analyze` prints, what Analysis.result stores and the API returns
(docs/contract.md §2). The engine builds plain dicts of these shapes (TypedDicts
cost nothing at run time, so the JSON stays exactly what it was); the API's
OpenAPI document describes `result` from these classes (kb/api.py), and
tests/analyzers/test_result_schema.py checks every golden result against them,
extra keys refused.

Extend, never break: a new key is NotRequired until every stored result has it.
"""

# No `from __future__ import annotations` here: TypedDict reads NotRequired[...]
# from the evaluated annotations.
from typing_extensions import NotRequired, TypedDict


class Evidence(TypedDict):
    """One matched line."""
    path: str                   # as it sits in the bundle
    line: int                   # 1-based
    host: str | None
    timestamp: str | None       # ISO 8601 without zone, as written: "2019-04-23T17:38:05.586"
    symptom: str
    text: str


class ChainStep(Evidence):
    count: int                  # occurrences of the step's symptom


class TimelineItem(Evidence):
    component: str
    runbooks: list[str]         # the findings this line is evidence of


class KnobDefault(TypedDict):
    versions: str
    value: str


class Knob(TypedDict):
    key: str
    component: str | None
    file: str | None
    default: str
    defaults: list[KnobDefault]
    recommended: str
    why: str
    found: str | None           # the value in the bundle's config files


class FixStep(TypedDict):
    text: str
    command: NotRequired[str]


class Fix(TypedDict):
    title: str
    kind: str                   # diagnosis | mitigation | permanent
    steps: list[FixStep]


class Ticket(TypedDict):
    id: str
    title: str | None
    status: str | None
    fixed_in: list[str] | None
    url: str | None


class Reason(TypedDict):
    weight: float               # signed contribution to the confidence
    kind: str                   # symptom | relation | version
    text: str                   # the same words as the explanation line, without the weight
    symptom: NotRequired[str]   # kind symptom: its id, how often it was seen and its role here
    count: NotRequired[int]
    role: NotRequired[str]
    first: NotRequired[str]     # kind relation: the two symptom ids
    then: NotRequired[str]
    component: NotRequired[str]  # kind version: what was detected
    version: NotRequired[str]


class Finding(TypedDict):
    runbook: str                # slug
    title: str
    confidence: float           # 0.05-0.99
    severity: str | None
    explanation: list[str]      # "+0.60 <symptom> (1x, required)", one line per contribution
    reasons: list[Reason]       # the same contributions as data
    evidence: list[Evidence]
    chain: list[ChainStep]
    knobs: list[Knob]
    fixes: list[str]            # one line per fix: "<kind>: <title> — <commands>"
    fix_steps: list[Fix]
    tickets: list[Ticket]


class Symptom(TypedDict):
    id: str
    title: str
    count: int
    first_seen: str | None
    last_seen: str | None
    hosts: list[str]
    candidate_runbooks: list[str]
    example: Evidence


class UnmatchedExample(TypedDict):
    path: str
    line: int
    text: str


class Unmatched(TypedDict):
    template: str
    count: int
    example: UnmatchedExample


class Lead(TypedDict):
    """A record to look at first (analyzers/leads.py), best first."""
    rank: int                   # 1-based
    host: str | None
    path: str
    line: int                   # 1-based, the record's first line
    timestamp: str | None       # as Evidence.timestamp
    text: str                   # the whole record (a stack trace is one), lines joined by "\n", <= 8 KiB
    headline: str               # what to show first: the deepest "Caused by", else the first line
    template: str               # Drain3 template of the headline
    count: int                  # records of this template in the bundle
    kind: str                   # exception | error | traceback | state | stop | kernel | panic
    reason: str                 # one line: why it ranks here
    score: float


class BaselineSummary(TypedDict):
    path: str                   # the healthy bundle given with --baseline
    templates: int              # its templates
    dropped: int                # this bundle's lead templates it also has (gone from leads)


class Version(TypedDict):
    component: str
    version: str
    path: str
    line: int
    text: str


class ConfigValue(TypedDict):
    key: str
    value: str


class File(TypedDict):
    path: str
    host: str | None
    component: str
    kind: str                   # log | config | gc | jstack | netstat | ...
    encoding: str
    bytes: int


class Skipped(TypedDict):
    path: str
    reason: str


class Stats(TypedDict):
    files: int
    lines: int
    bytes: int
    error_lines: int
    error_lines_sampled: bool
    facts: int
    matcher: str                # hyperscan | python
    seconds: float              # the analysis itself
    startup_seconds: float      # starting the engine (a SparkSession); 0 when warm
    engine: str                 # local | spark


class Result(TypedDict):
    findings: list[Finding]     # best first
    symptoms: list[Symptom]
    unmatched: list[Unmatched]
    leads: NotRequired[list[Lead]]              # at most 10, ranked
    baseline: NotRequired[BaselineSummary]      # only when a baseline was given
    timeline: list[TimelineItem]
    versions: list[Version]
    config: list[ConfigValue]
    files: list[File]
    skipped: list[Skipped]
    notes: list[str]
    stats: Stats
