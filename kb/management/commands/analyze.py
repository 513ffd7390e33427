"""python manage.py analyze PATH|URI [PATH|URI ...] --format json [--engine local|spark]

Runs the engine on files, directories or archives; needs no database, Redis
or web server (runbooks are read from RUNBOOKS_DIR). A bundle may be named by
URI (analyzers/bundle_uri.py): file:// with either engine; hdfs://, s3a://
and any other Hadoop filesystem the Spark session's configuration provides
with --engine spark. Exit 0 on success, 2 on unusable input with one line on
stderr naming the file.
"""

from __future__ import annotations

import json
import sys
import tempfile

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
        runbooks = [rb.meta for rb in catalog.runbooks.values()]
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

    from analyzers.bundle_uri import LOCAL_SCHEMES, fetch_bundle, uri_scheme

    remote = [p for p in paths if uri_scheme(p) not in LOCAL_SCHEMES]
    if remote and engine != "spark":
        raise BundleError(f"{remote[0]}: a {uri_scheme(remote[0])}:// bundle is read through Spark's "
                          "Hadoop filesystems; use --engine spark")
    runner = make_runner(engine, master=settings.SPARK_MASTER)
    spark = runner.run.spark if remote else None
    with tempfile.TemporaryDirectory(prefix="kb-fetch-") as fetched:
        local = [fetch_bundle(p, fetched, spark) for p in paths]
        return analyze_paths(local, runbooks, engine=runner.engine, limits=limits, runner=runner.run,
                             range_bytes=runner.range_bytes, startup_seconds=runner.startup_seconds)


def render_text(result: dict) -> str:
    lines = []
    for f in result["findings"]:
        lines.append(f"{f['confidence']:.2f}  {f['runbook']}  {f['title']}")
        for ev in f["evidence"][:5]:
            lines.append(f"      {ev['host'] or '-'} {ev['path']}:{ev['line']} {ev['text'][:120]}")
    for s in result["symptoms"]:
        lines.append(f"symptom {s['id']} x{s['count']} -> candidates: {', '.join(s['candidate_runbooks'])}")
    st = result["stats"]
    lines.append(f"{st['files']} files, {st['lines']} lines, {st['bytes']} bytes in {st['seconds']} s ({st['engine']})")
    return "\n".join(lines)
