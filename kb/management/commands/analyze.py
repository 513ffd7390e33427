"""python manage.py analyze PATH [PATH ...] --format json [--engine local|spark] [--baseline HEALTHY_PATH]

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
        parser.add_argument("--baseline", metavar="HEALTHY_PATH",
                            help="a healthy bundle of the same cluster: its templates drop out of leads and unmatched")

    def handle(self, *args, **opts):
        try:
            catalog = load_runbooks(opts["runbooks"])
        except RunbookError as exc:
            self._fail(str(exc))
        runbooks = [rb.meta for rb in catalog.runbooks.values()]
        try:
            result = run_analysis(opts["paths"], runbooks, opts["engine"], bundle_limits(), opts["baseline"])
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


def run_analysis(paths, runbooks, engine: str, limits: Limits, baseline: str | None = None) -> dict:
    from analyzers.engine import analyze_paths
    from analyzers.runners import make_runner

    runner = make_runner(engine, master=settings.SPARK_MASTER)
    return analyze_paths(paths, runbooks, engine=runner.engine, limits=limits, runner=runner.run,
                         range_bytes=runner.range_bytes, startup_seconds=runner.startup_seconds,
                         baseline=baseline)


def render_text(result: dict) -> str:
    lines = []
    for f in result["findings"]:
        lines.append(f"{f['confidence']:.2f}  {f['runbook']}  {f['title']}")
        for ev in f["evidence"][:5]:
            lines.append(f"      {ev['host'] or '-'} {ev['path']}:{ev['line']} {ev['text'][:120]}")
    for s in result["symptoms"]:
        lines.append(f"symptom {s['id']} x{s['count']} -> candidates: {', '.join(s['candidate_runbooks'])}")
    if result.get("leads"):
        lines.append("Leads")
        for lead in result["leads"][:5]:
            lines.append(f"  {lead['rank']}. {lead['host'] or '-'}:{lead['path']}:{lead['line']}  {lead['headline'][:160]}")
            lines.append(f"      {lead['reason']}")
    if "baseline" in result:
        b = result["baseline"]
        lines.append(f"baseline {b['path']}: {b['templates']} templates, {b['dropped']} of this bundle's dropped")
    st = result["stats"]
    lines.append(f"{st['files']} files, {st['lines']} lines, {st['bytes']} bytes in {st['seconds']} s ({st['engine']})")
    return "\n".join(lines)
