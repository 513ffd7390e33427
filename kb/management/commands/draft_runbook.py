"""python manage.py draft_runbook ANALYSIS_ID LEAD_RANK [--save --team NAME --user NAME]

Prints a runbook drafted from one lead of an analysis (its rank as the page shows it): the
new library symptom (runbooks/symptoms/<id>.yaml) and the runbook (runbooks/<slug>.md), whose
root cause, knobs and fixes are TODO for the author. With --save they are stored as a runbook
of the team (seen by that team until a maintainer publishes it). Exit 2 with one line on
stderr when the analysis, lead, team or user does not exist or the lead cannot be drafted.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from analyzers.draft import DraftError
from analyzers.runbooks import RunbookError
from kb.models import Analysis, Team
from kb.services.drafts import draft_save, lead_draft


class Command(BaseCommand):
    help = "Draft a runbook from a lead of an analysis; print it, or --save it as a team runbook."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("analysis_id", type=int)
        parser.add_argument("lead_rank", type=int, help="the lead's rank (1 = the first lead)")
        parser.add_argument("--save", action="store_true", help="store it as a runbook of --team")
        parser.add_argument("--team", help="team name (with --save)")
        parser.add_argument("--user", help="username of the author (with --save)")

    def handle(self, *args: Any, **opts: Any) -> str:
        analysis = Analysis.objects.select_related("bundle__incident").filter(pk=opts["analysis_id"]).first()
        if analysis is None:
            raise CommandError(f"no analysis {opts['analysis_id']}", returncode=2)
        try:
            draft = lead_draft(analysis=analysis, rank=opts["lead_rank"])
        except (DraftError, RunbookError) as exc:
            raise CommandError(str(exc), returncode=2) from None
        if not opts["save"]:
            return (f"# runbooks/symptoms/{draft.symptom_id}.yaml\n{draft.symptom_text}\n"
                    f"# runbooks/{draft.slug}.md\n{draft.runbook_text}")
        team = Team.objects.filter(name=opts["team"]).first() if opts["team"] else None
        user = get_user_model().objects.filter(username=opts["user"]).first() if opts["user"] else None
        if team is None or user is None:
            raise CommandError("--save needs an existing --team and --user", returncode=2)
        if analysis.team_id != team.pk:
            raise CommandError(f"analysis {analysis.pk} is not an analysis of {team.name}", returncode=2)
        if not user.memberships.filter(team=team).exists():
            raise CommandError(f"{user.get_username()} is not a member of {team.name}", returncode=2)
        try:
            runbook = draft_save(analysis=analysis, rank=opts["lead_rank"], team=team, author=user,
                                 runbook_text=draft.runbook_text, symptom_text=draft.symptom_text)
        except RunbookError as exc:
            raise CommandError(str(exc), returncode=2) from None
        return f"saved runbook {runbook.slug} of {team.name} (symptom {draft.symptom_id})"
