"""Runbooks as the engine reads them: typed, with durations already parsed.

The loader (analyzers/runbooks.py) validates a runbook file and resolves its
symptoms into `meta`, a dict that also travels as JSON (the app stores it);
`runbook_spec(meta)` turns that into these frozen dataclasses once, and the
engine, the matcher and diagnose read nothing else. `within` is parsed here,
not each time a relation is evaluated; a fix has one shape (`Fix`), from which
the result's `fixes` lines and `fix_steps` both come.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from analyzers.runbook_vocabulary import parse_duration_ms


@dataclass(frozen=True)
class Condition:
    capture: str
    op: str
    value: Any


@dataclass(frozen=True)
class Burst:
    """`burst` on a usage: `count` occurrences within `within` (analyzers/burst.py)."""
    count: int
    within_s: float                   # seconds
    within: str                       # as the runbook wrote it ("30s"), for explanations
    hosts: str = "any"                # any | same (all on one host)


@dataclass(frozen=True)
class SymptomUse:
    """A symptom as one runbook uses it: the library definition plus this runbook's role."""
    id: str
    role: str
    title: str
    weight: float = 0.0
    group: str | None = None
    where: tuple[Condition, ...] = ()
    veto: bool = True
    patterns: tuple[str, ...] = ()
    fact: str | None = None
    captures: Mapping[str, str] = field(default_factory=dict)
    look_in: str | None = None        # where the line would be found (for candidates' next step)
    burst: Burst | None = None        # present only when this many occurrences come this close together


@dataclass(frozen=True)
class Relation:
    first: str
    then: str
    within_s: float | None = None     # seconds; None: no time limit
    within: str | None = None         # as the runbook wrote it ("1m"), for explanations
    order: str = "after"
    hosts: str = "any"
    role: str = "supporting"
    weight: float = 0.0
    why: str | None = None


@dataclass(frozen=True)
class Link:
    """`leads_to`: this runbook's cause explains (`cause`) or only set off (`trigger`) another's finding."""
    slug: str
    kind: str                          # cause | trigger (the file's `as`)
    why: str
    hosts: str = "any"
    within_s: float | None = None


@dataclass(frozen=True)
class Differential:
    slug: str
    how: str


@dataclass(frozen=True)
class AffectedVersion:
    component: str
    range: str


@dataclass(frozen=True)
class Knob:
    key: str
    default: Any
    recommended: Any
    why: str
    component: str | None = None
    file: str | None = None
    defaults: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Step:
    text: str
    command: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"text": self.text} if self.command is None else {"text": self.text, "command": self.command}


@dataclass(frozen=True)
class Fix:
    title: str
    kind: str
    steps: tuple[Step, ...] = ()

    def as_json(self) -> dict[str, Any]:
        """The result's `fix_steps` item (docs/contract.md §2)."""
        return {"title": self.title, "kind": self.kind, "steps": [s.as_json() for s in self.steps]}

    def line(self) -> str:
        """The result's `fixes` item: "kind: title — command; command"."""
        commands = [s.command for s in self.steps if s.command]
        text = f"{self.kind}: {self.title}"
        return text + (" — " + "; ".join(commands) if commands else "")


@dataclass(frozen=True)
class Ticket:
    id: str | None = None
    title: str | None = None
    status: str | None = None
    fixed_in: Any = None
    url: str | None = None


@dataclass(frozen=True)
class RunbookSpec:
    slug: str
    title: str
    symptoms: tuple[SymptomUse, ...]
    severity: str | None = None
    relations: tuple[Relation, ...] = ()
    affected_versions: tuple[AffectedVersion, ...] = ()
    chain: tuple[str, ...] = ()
    knobs: tuple[Knob, ...] = ()
    fixes: tuple[Fix, ...] = ()
    tickets: tuple[Ticket, ...] = ()
    leads_to: tuple[Link, ...] = ()
    differential: tuple[Differential, ...] = ()


def runbook_spec(meta: Mapping[str, Any]) -> RunbookSpec:
    """A validated, resolved runbook front matter (Runbook.meta) -> RunbookSpec."""
    return RunbookSpec(
        slug=meta["slug"],
        title=meta["title"],
        severity=meta.get("severity"),
        symptoms=tuple(_symptom_use(s) for s in meta.get("symptoms") or []),
        relations=tuple(_relation(r) for r in meta.get("relations") or []),
        affected_versions=tuple(AffectedVersion(a["component"], a["range"]) for a in meta.get("affected_versions") or []),
        chain=tuple(meta.get("chain") or []),
        knobs=tuple(Knob(key=k["key"], default=k["default"], recommended=k["recommended"], why=k["why"],
                         component=k.get("component"), file=k.get("file"), defaults=tuple(k.get("defaults") or []))
                    for k in meta.get("knobs") or []),
        fixes=tuple(Fix(f["title"], f["kind"], tuple(Step(st["text"], st.get("command")) for st in f.get("steps") or []))
                    for f in meta.get("fixes") or []),
        tickets=tuple(Ticket(**{k: t.get(k) for k in ("id", "title", "status", "fixed_in", "url")})
                      for t in meta.get("tickets") or []),
        leads_to=tuple(Link(slug=k["slug"], kind=k["as"], why=k["why"], hosts=k.get("hosts", "any"),
                            within_s=_seconds(k)) for k in meta.get("leads_to") or []),
        differential=tuple(Differential(d["slug"], d["how"]) for d in meta.get("differential") or []),
    )


def as_specs(runbooks: Iterable[RunbookSpec | Mapping[str, Any]]) -> list[RunbookSpec]:
    """The engine's entry points take specs, or metas (the app's stored JSON) parsed here once."""
    return [rb if isinstance(rb, RunbookSpec) else runbook_spec(rb) for rb in runbooks]


def _symptom_use(s: Mapping[str, Any]) -> SymptomUse:
    return SymptomUse(
        id=s["id"], role=s["role"], title=s.get("title", s["id"]), weight=float(s.get("weight", 0.0)),
        group=s.get("group") or None,
        where=tuple(Condition(c["capture"], c["op"], c["value"]) for c in s.get("where") or []),
        veto=s.get("veto", True), patterns=tuple(s.get("patterns") or []), fact=s.get("fact"),
        captures=dict(s.get("captures") or {}), look_in=s.get("look_in"),
        burst=_burst(s["burst"]) if s.get("burst") else None,
    )


def _burst(b: Mapping[str, Any]) -> Burst:
    return Burst(count=int(b["count"]), within_s=_seconds(b), within=str(b["within"]), hosts=b.get("hosts", "any"))


def _relation(r: Mapping[str, Any]) -> Relation:
    return Relation(
        first=r["first"], then=r["then"],
        within_s=_seconds(r), within=r.get("within"),
        order=r.get("order", "after"), hosts=r.get("hosts", "any"), role=r.get("role", "supporting"),
        weight=float(r.get("weight", 0.0)), why=r.get("why"),
    )


def _seconds(item: Mapping[str, Any]) -> float | None:
    """An item's `within` ("30s", "5m") in seconds; None: no time limit."""
    return parse_duration_ms(item["within"]) / 1000.0 if "within" in item else None
