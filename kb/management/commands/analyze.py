"""python manage.py analyze PATH [PATH ...] --format json [--engine local|spark]

Runs the engine on files, directories or archives; needs no database, Redis
or web server (runbooks are read from RUNBOOKS_DIR). Exit 0 on success, 2 on
unusable input with one line on stderr naming the file.
"""

from __future__ import annotations

import json
import sys

from django.conf import settings
from django.core.management.base import BaseCommand

from analyzers.model import BundleError, Limits
from analyzers.runbooks import RunbookError, load_runbooks
from kb.services.bundles import bundle_limits


class Command(BaseCommand):
    help = "Analyze log bundles and print ranked root causes as JSON."
    # The CLI needs no database, broker or upload directories: skip the system checks about them.
    requires_system_checks: list = []

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", metavar="PATH")
        parser.add_argument("--format", choices=["json", "text"], default="json")
        parser.add_argument("--engine", choices=["local", "spark"], default="local")
        parser.add_argument("--runbooks", default=str(settings.RUNBOOKS_DIR), help="runbook directory")

    def handle(self, *args, **opts):
        try:
            catalog = load_runbooks(opts["runbooks"])
        except RunbookError as exc:
            self._fail(str(exc))
        runbooks = [rb.spec for rb in catalog.runbooks.values()]   # typed at load
        try:
            result = run_analysis(opts["paths"], runbooks, opts["engine"], bundle_limits())
        except BundleError as exc:
            self._fail(str(exc))
        except OSError as exc:
            self._fail(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "))
        if opts["format"] == "json":
            self.stdout.write(json.dumps(result, indent=2, ensure_ascii=False))
        else:
            self.stdout.write(render_text(result))

    def _fail(self, message: str) -> None:
        sys.stderr.write(f"analyze: {message}\n")
        sys.exit(2)


def run_analysis(paths, runbooks, engine: str, limits: Limits) -> dict:
    from analyzers.engine import analyze_paths
    from analyzers.runners import make_runner

    runner = make_runner(engine, master=settings.SPARK_MASTER)
    return analyze_paths(paths, runbooks, engine=runner.engine, limits=limits, runner=runner.run,
                         range_bytes=runner.range_bytes, startup_seconds=runner.startup_seconds)


def render_text(result: dict) -> str:
    lines = []
    for f in result["findings"]:
        lines.append(f"{f['confidence']:.2f}  {f['runbook']}  {f['title']}")
        if f.get("explained_by") or not (f.get("rank_reason") or "confidence").startswith("confidence"):
            lines.append(f"      ranked here: {f['rank_reason']}")
        for ev in f["evidence"][:5]:
            lines.append(f"      {ev['host'] or '-'} {ev['path']}:{ev['line']} {ev['text'][:120]}")
    if not result["findings"] and result.get("candidates"):
        lines.append("no finding; candidate root causes, most likely first:")
    for c in result.get("candidates") or []:
        lines.append(f"{c['score']:.2f}? {c['runbook']}  {c['title']}")
        lines.append(f"      found: {', '.join(c['found'])}")
        if c["missing"]:
            lines.append(f"      missing: {', '.join(m['symptom'] for m in c['missing'])}")
        lines.append(f"      next step: {c['next_step']}")
        if c["where"]:
            lines.append(f"      where: {c['where']}")
    for s in result["symptoms"]:
        lines.append(f"symptom {s['id']} x{s['count']} -> candidates: {', '.join(s['candidate_runbooks'])}")
    st = result["stats"]
    lines.append(f"{st['files']} files, {st['lines']} lines, {st['bytes']} bytes in {st['seconds']} s ({st['engine']})")
    return "\n".join(lines)
