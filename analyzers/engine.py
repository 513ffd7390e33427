"""The analysis engine: a bundle (or pasted text) + runbooks -> the result of docs/contract.md §2.

    stage_logs     unpack safely, infer host/component, transcode to UTF-8 (staging.py)
    scan_range     every signature over every byte range (local: in process; spark: in tasks)
    assemble       line numbers, record timestamps, typed captures, facts, versions
    diagnose       differential diagnosis -> findings, symptoms, timeline, unmatched
"""

from __future__ import annotations

import itertools
import os
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from analyzers import timestamps
from analyzers.conditions import typed
from analyzers.considered import considered
from analyzers.diagnose import diagnose, evidence_item, symptom_summary
from analyzers.facts import effective_config, extract_facts
from analyzers.clock_skew import bundle_skew
from analyzers.heap import fix_mmap_threshold
from analyzers.leads import Baseline, collect, explained_keys, line_key, rank
from analyzers.model import BundleFile, Hit, Limits, Progress, StagedBundle
from analyzers.occurrences import MAX_IN_ORDER, Occurrences
from analyzers.result import Result
from analyzers.runbook_spec import RunbookSpec, as_specs
from analyzers.scan import RANGE_BYTES, RangeResult, packed_result, plan_ranges, scan_range
from analyzers.signatures import Signature, matcher_for, signatures_from_runbooks
from analyzers.staging import stage_logs
from analyzers.unmatched import MAX_LINES as MAX_UNMATCHED_LINES, unmatched_templates

MAX_TIMELINE = 500
SKEW_HITS_PER_HOST = 2000   # a host's first matched lines, enough ids for clock_skew (its own cap)


@dataclass(frozen=True)
class ByteRange:
    """[start, end) of one staged file: the unit a RangeRunner scans (analyzers/scan.py)."""
    path: str
    disk_path: str
    start: int
    end: int


# Typed runbooks (Runbook.spec), or their metas (the app's stored JSON), parsed once on entry.
Runbooks = Iterable[RunbookSpec | dict[str, Any]]
RangeRunner = Callable[[list[ByteRange], list[Signature], int], list[RangeResult]]


def run_ranges_local(ranges: list[ByteRange], signatures: list[Signature], max_line: int) -> list[RangeResult]:
    fix_mmap_threshold()   # RSS then does not grow with the blocks read (analyzers/heap.py)
    matcher = matcher_for(signatures)
    # Hits packed as each range is scanned: the process holds the hits of all ranges until assembly.
    return [packed_result(scan_range(r.path, r.disk_path, r.start, r.end, matcher, max_line,
                                     timestamps.is_record_start)) for r in ranges]


def plan_byte_ranges(files: Iterable[BundleFile], range_bytes: int = RANGE_BYTES) -> list[ByteRange]:
    return [ByteRange(f.path, f.disk_path, s, e) for f in files for s, e in plan_ranges(f.size, range_bytes)]


def analyze_paths(paths: list[str], runbooks: Runbooks, *, engine: str = "local",
                  limits: Limits = Limits(), runner: RangeRunner | None = None,
                  range_bytes: int = RANGE_BYTES, startup_seconds: float = 0.0,
                  progress: Progress | None = None,
                  workdir: str | None = None, baseline: str | Baseline | None = None) -> Result:
    """Analyze archives/directories/files. Raises model.BundleError for unusable input.

    With `workdir`, the staged (unpacked, UTF-8) files stay there afterwards, so
    the app can show the lines around a piece of evidence; otherwise a
    temporary directory is used and removed. `baseline`: a healthy bundle (a path,
    scanned the same way) or its templates (analyzers.baseline.baseline_of): what it
    also has drops out of the leads and the unmatched list.
    """
    t0 = time.monotonic()
    if isinstance(baseline, str):
        from analyzers.baseline import baseline_of

        baseline = baseline_of([baseline], runbooks, limits=limits, runner=runner, range_bytes=range_bytes)
    if workdir is not None:
        os.makedirs(workdir, exist_ok=True)
        return _analyze_in(paths, workdir, runbooks, engine, limits, runner, range_bytes, t0,
                           startup_seconds, progress, baseline)
    with tempfile.TemporaryDirectory(prefix="kb-stage-") as tmp:
        return _analyze_in(paths, tmp, runbooks, engine, limits, runner, range_bytes, t0,
                           startup_seconds, progress, baseline)


def _analyze_in(paths, workdir, runbooks, engine, limits, runner, range_bytes, t0, startup_seconds, progress,
                baseline):
    if progress:
        progress.stage("unpacking")
    staged = stage_logs(paths, workdir, limits)
    return analyze_staged(staged, runbooks, engine=engine, limits=limits, runner=runner,
                          range_bytes=range_bytes, started=t0, startup_seconds=startup_seconds,
                          progress=progress, baseline=baseline)


def analyze_text(text: str, runbooks: Runbooks) -> Result:
    """A pasted excerpt or stack trace, analyzed in process (well under a second)."""
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kb-paste-") as workdir:
        disk = os.path.join(workdir, "pasted.log")
        with open(disk, "w", encoding="utf-8") as fh:
            fh.write(text)
        f = BundleFile(path="pasted.log", disk_path=disk, size=os.path.getsize(disk), host=None,
                       component="unknown")
        return analyze_staged(StagedBundle(files=[f], total_bytes=f.size), runbooks, started=t0)


def analyze_staged(staged: StagedBundle, runbooks: Runbooks, *, engine: str = "local",
                   limits: Limits = Limits(), runner: RangeRunner | None = None,
                   range_bytes: int = RANGE_BYTES, started: float | None = None,
                   startup_seconds: float = 0.0,
                   progress: Progress | None = None, baseline: Baseline | None = None) -> Result:
    t0 = started if started is not None else time.monotonic()
    runbooks = as_specs(runbooks)
    signatures = signatures_from_runbooks(runbooks)
    results = scan_staged(staged, signatures, limits, runner, range_bytes, progress)
    if progress:
        progress.stage("scoring")
    result = assemble(staged, results, runbooks, matcher_for(signatures).engine, baseline)
    result["stats"].update({
        "seconds": round(time.monotonic() - t0, 3),
        "startup_seconds": round(startup_seconds, 3),
        "engine": engine,
    })
    return result


def scan_staged(staged: StagedBundle, signatures: list[Signature], limits: Limits, runner: RangeRunner | None,
                range_bytes: int, progress: Progress | None = None) -> list[RangeResult]:
    ranges = plan_byte_ranges(staged.files, range_bytes)
    if progress:
        progress.stage("scanning")
    return (runner or run_ranges_local)(ranges, signatures, limits.max_line_bytes)


def assemble(staged: StagedBundle, results: list[RangeResult], runbooks: list[RunbookSpec],
             matcher: str, baseline: Baseline | None = None) -> Result:
    files = {f.path: f for f in staged.files}
    types, titles, fact_symptoms = _symptom_tables(runbooks)
    by_file: dict[str, list[RangeResult]] = defaultdict(list)
    for r in results:
        by_file[r.path].append(r)
    default_year = _bundle_year(by_file)

    occurrences = Occurrences(runbooks)   # bounded summaries, not every hit (analyzers/occurrences.py)
    error_lines: list[tuple[str, int, str]] = []
    error_lines_unkept = 0   # past unmatched.MAX_LINES: counted, not kept (it groups no more)
    versions: dict[str, list[str]] = defaultdict(list)
    version_evidence: list[dict[str, Any]] = []
    notes = list(staged.notes)
    lines_total = bytes_total = error_total = 0
    errors_sampled = False
    skew_seen: dict[str | None, list] = defaultdict(list)
    for path in sorted(by_file):
        f = files[path]
        offset = 0
        ranges = sorted(by_file[path], key=lambda r: r.start)
        starts = itertools.accumulate((r.lines for r in ranges), initial=0)
        # The sampled error lines a hit takes out of the unmatched list (not every hit's line).
        erring = {start + ln for start, r in zip(starts, ranges) for ln, _ in r.errors}
        matched_lines: set[int] = set()
        file_errors: list[tuple[str, int, str]] = []
        for r in ranges:
            for h in r.all_hits():
                line = offset + h.line_in_range
                header = timestamps.parse_header(h.header, default_year) if h.header else None
                occurrences.add(hit := Hit(
                    symptom=h.key, path=path, line=line, text=h.text,
                    captures=typed(h.captures, types.get(h.key, {})),
                    timestamp=header.timestamp if header else None,
                    level=header.level if header else None,
                    host=f.host or (header.host if header else None), component=f.component,
                ))
                if len(skew_seen[hit.host]) < SKEW_HITS_PER_HOST:   # clock evidence, bounded like the rest
                    skew_seen[hit.host].append((hit.host, hit.timestamp, hit.text))
                if line in erring:
                    matched_lines.add(line)
            r.hits, r.packed = [], []   # summarised: the driver need not hold every hit of a big bundle
            file_errors.extend((path, offset + ln, text) for ln, text in r.errors)
            r.errors = []   # kept in file_errors, or dropped past MAX_UNMATCHED_LINES
            for comp, ver, ln, text in r.versions:
                if ver not in versions[comp]:
                    versions[comp].append(ver)
                    version_evidence.append({"component": comp, "version": ver, "path": path,
                                             "line": offset + ln, "text": text})
            for ln, kept in r.cut_lines:
                notes.append(f"{path}: line {offset + ln} is longer than {kept} bytes; only its first {kept} bytes were scanned")
            offset += r.lines
            lines_total += r.lines
            bytes_total += r.bytes
            error_total += r.error_count
            errors_sampled = errors_sampled or r.errors_sampled
        file_errors = [e for e in file_errors if e[1] not in matched_lines
                       and (baseline is None or line_key(e[2]) not in baseline.templates)]
        room = max(0, MAX_UNMATCHED_LINES - len(error_lines))
        error_lines.extend(file_errors[:room])
        error_lines_unkept += max(0, len(file_errors) - room)

    facts = [fact for f in staged.files for fact in extract_facts(f, notes)]
    config = effective_config(facts)
    for sid, fact_name in fact_symptoms.items():
        for fact in facts:
            if fact.name == fact_name:
                occurrences.add(Hit(
                    symptom=sid, path=fact.path, line=fact.line, text=fact.text,
                    captures=typed(dict(fact.captures), types.get(sid, {})), timestamp=fact.timestamp,
                    level=None, host=fact.host or files[fact.path].host if fact.path in files else fact.host,
                    component=fact.component,
                ))

    findings = diagnose(occurrences, runbooks, versions, config)
    ruled_out, candidates = considered(occurrences, runbooks, findings)
    supports = defaultdict(list)
    for f in findings:
        for ev in f["evidence"]:
            supports[(ev["path"], ev["line"])].append(f["runbook"])
    timeline = []
    for h in occurrences.earliest(MAX_TIMELINE):
        item = evidence_item(h)
        item["component"] = h.component
        item["runbooks"] = sorted(set(supports.get((h.path, h.line), [])))
        timeline.append(item)

    lead_records = collect(by_file, files, default_year)
    explained = _explained_hits(findings, occurrences)
    skew = bundle_skew(lead_records, error_lines, lambda p: files[p].host if p in files else None, default_year,
                       itertools.chain.from_iterable(skew_seen.values()))
    leads, dropped = rank(lead_records, explained_keys(lead_records, *explained), baseline, skew)
    result: Result = {
        "findings": findings,
        "ruled_out": ruled_out,
        "candidates": candidates,
        "symptoms": symptom_summary(occurrences, runbooks, titles),
        "unmatched": unmatched_templates(error_lines, more=error_lines_unkept),
        "leads": leads,
        "timeline": timeline,
        "versions": version_evidence,
        "config": [{"key": k, "value": v} for k, v in sorted(config.items())],
        "files": [{"path": f.path, "host": f.host, "component": f.component, "kind": f.kind,
                   "encoding": f.encoding, "bytes": f.size} for f in staged.files],
        "skipped": [{"path": s.path, "reason": s.reason} for s in staged.skipped],
        "notes": notes,
        "stats": {
            "files": len(staged.files), "lines": lines_total, "bytes": bytes_total,
            "error_lines": error_total, "error_lines_sampled": errors_sampled, "facts": len(facts),
            "matcher": matcher,
        },
    }
    if baseline is not None:
        result["baseline"] = {"path": baseline.path, "templates": len(baseline.templates), "dropped": dropped}
    return result


MAX_EXPLAINED_PER_SYMPTOM = MAX_IN_ORDER   # hits of a finding's symptom whose lines and templates leads skip


def _explained_hits(findings, occurrences) -> tuple[dict[str, set[int]], set[str]]:
    """The lines (per path) and texts of every hit of the findings' symptoms."""
    lines: dict[str, set[int]] = defaultdict(set)
    texts: set[str] = set()
    for sid in {ev["symptom"] for f in findings for ev in f["evidence"]}:
        symptom = occurrences.get(sid)
        for h in symptom.in_order[:MAX_EXPLAINED_PER_SYMPTOM] if symptom else []:
            lines[h.path].add(h.line)
            texts.add(h.text)
    return lines, texts


def _symptom_tables(runbooks: list[RunbookSpec]):
    types: dict[str, dict[str, str]] = {}
    titles: dict[str, str] = {}
    fact_symptoms: dict[str, str] = {}   # symptom id -> the fact it is
    for rb in runbooks:
        for s in rb.symptoms:
            types.setdefault(s.id, dict(s.captures))
            titles.setdefault(s.id, s.title)
            if s.fact is not None:
                fact_symptoms.setdefault(s.id, s.fact)
    return types, titles, fact_symptoms


def _bundle_year(by_file: dict[str, list[RangeResult]]) -> int | None:
    """Syslog lines carry no year: borrow the most common year of the bundle's full timestamps."""
    years: Counter[int] = Counter()
    for rs in by_file.values():
        for r in rs:
            for h in itertools.islice(r.all_hits(), 50):
                if h.header:
                    hdr = timestamps.parse_header(h.header, 0)  # 0: year-less lines come back as 0000 and are skipped
                    if hdr and hdr.timestamp and hdr.timestamp[:4].isdigit() and hdr.timestamp[:4] != "0000":
                        years[int(hdr.timestamp[:4])] += 1
    return years.most_common(1)[0][0] if years else None
