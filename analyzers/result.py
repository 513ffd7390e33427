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
    explained_by: NotRequired[str | None]  # the finding this one is a consequence of (runbook leads_to, as: cause)
    rank_reason: NotRequired[str]          # why it ranks where it does: "consequence of X: ...", "trigger of Y: ..."


class RuledOut(TypedDict):
    """A runbook some symptom of which was seen, that is no finding, and why not."""
    runbook: str                # slug
    title: str
    kind: str                   # excluded | missing-required | condition (the first rule that failed)
    reason: str                 # every rule that failed, naming the symptoms: "required X (title) not seen"
    symptoms: list[str]         # its symptoms seen in the bundle, whatever their role


class MissingSymptom(TypedDict):
    symptom: str                # id
    title: str


class Candidate(TypedDict):
    """When there is no finding: a runbook the seen symptoms point at, and what would decide it."""
    runbook: str
    title: str
    score: float                # the weights of its symptoms and relations seen so far
    found: list[str]            # its symptom ids seen (where conditions holding)
    missing: list[MissingSymptom]  # required symptoms not seen (a group's alternatives all listed)
    next_step: str              # what would confirm or rule it out
    where: str | None           # the file or command that would show the missing symptom


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
    ruled_out: NotRequired[list[RuledOut]]    # considered runbooks that are no finding
    candidates: NotRequired[list[Candidate]]  # ranked, only when there is no finding
    symptoms: list[Symptom]
    unmatched: list[Unmatched]
    timeline: list[TimelineItem]
    versions: list[Version]
    config: list[ConfigValue]
    files: list[File]
    skipped: list[Skipped]
    notes: list[str]
    stats: Stats
