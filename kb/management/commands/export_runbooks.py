from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from kb.services.drafts import fixture_export
from kb.services.export import runbook_export


class Command(BaseCommand):
    help = "Write the database runbooks back to DIR/<slug>.md and their symptoms to DIR/symptoms/<id>.yaml."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dir", required=True, help="directory to write into")
        parser.add_argument("--slug", action="append", dest="slugs", help="only this runbook (repeatable)")
        parser.add_argument(
            "--canonical", action="store_true",
            help="rebuild every file from the stored front matter (drops YAML comments)",
        )
        parser.add_argument("--fixtures", metavar="CASES_DIR",
                            help="also copy the positive fixtures of runbooks drafted from a lead to "
                                 "CASES_DIR/<slug>/positive/ (as tests/fixtures/cases/)")

    def handle(self, *args: Any, **options: Any) -> str:
        written, symptoms = runbook_export(
            directory=options["dir"], slugs=options["slugs"], canonical=options["canonical"]
        )
        said = f"{len(written)} runbooks and {len(symptoms)} symptoms written to {options['dir']}"
        if options["fixtures"]:
            copied = [p for p in (fixture_export(slug=path.stem, cases_dir=options["fixtures"]) for path in written) if p]
            said += f"; {len(copied)} drafted fixtures to {options['fixtures']}"
        return said
