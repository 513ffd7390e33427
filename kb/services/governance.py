"""Runbook governance (kb/README.md "Runbook governance"): who changes what
each team sees.

- A maintainer's (staff) edit of a shipped runbook is its next revision, for everyone.
- A team admin's edit of a shipped runbook is the team's overlay (a Runbook row
  with overlay_of set), seen by that team alone: its pages, search and
  analyses (kb.selectors.catalog). With `propose`, the text is also filed as a
  RunbookProposal that a maintainer accepts (with the diff) or declines.
- team_runbook_create: a runbook of the team, seen by others once a maintainer
  publishes it (runbook_publish), which publishes the team's own symptoms it uses.

Every save is a RunbookRevision with its author (kb.services.runbooks.runbook_save).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from analyzers.runbooks import RunbookError
from kb.access import admin_team_ids, is_maintainer, runbook_can_edit
from kb.lib.revisions import DiffLine, revision_diff
from kb.models import Runbook, RunbookProposal, RunbookRevision, Symptom, Team
from kb.services.runbooks import runbook_file_path, runbook_parse_edit, runbook_save, runbook_update
from kb.services.symptoms import revision_check_base


def runbook_edit_save(*, runbook: Runbook, team: Team | None, user: Any, text: str, message: str = "",
                      base_revision: int | None = None, propose: bool = False) -> RunbookRevision | None:
    """Save an edit of `runbook` as the user may: the row itself, or (a team
    admin editing a shipped runbook) `team`'s overlay, plus a proposal when asked."""
    if not runbook_can_edit(user=user, runbook=runbook, team=team):
        raise PermissionDenied("Only maintainers change the shipped runbooks, and team admins their team's.")
    if runbook.is_shipped and not is_maintainer(user):
        revision = runbook_overlay_save(base=runbook, team=team, user=user, text=text, message=message)
        if propose:
            proposal_create(runbook=runbook, team=team, user=user, text=text, message=message)
        return revision
    revision = runbook_update(runbook=runbook, text=text, author=user, message=message, base_revision=base_revision)
    if propose and runbook.overlay_of_id is not None:
        proposal_create(runbook=runbook.overlay_of, team=runbook.team, user=user, text=text, message=message)
    return revision


def runbook_overlay_save(*, base: Runbook, team: Team, user: Any, text: str,
                         message: str = "") -> RunbookRevision | None:
    """The team's overlay of shipped runbook `base` now says `text` (created on
    its first save). None when nothing changed (or the text is the shipped one)."""
    parsed, text = runbook_parse_edit(text=text, slug=base.slug, team_id=team.pk)
    with transaction.atomic():
        row = Runbook.objects.select_for_update().filter(overlay_of=base, team=team).first()
        if row is None or row.overlay_dropped is not None:
            shipped = base.revisions.order_by("-number").first()
            if shipped is not None and shipped.text == text:
                return None
            row = row or Runbook(slug=base.slug, team=team, overlay_of=base)
            row.overlay_dropped = None    # a dropped overlay comes back, its history with it
        before = revision_check_base(last=row.revisions.order_by("-number").first() if row.pk else None,
                                     base_revision=None, path=runbook_file_path(base.slug))
        saved, _ = runbook_save(parsed=parsed, text=text, author=user, message=message, row=row)
        return saved.revisions.filter(number__gt=before).order_by("-number").first()


def runbook_overlay_drop(*, overlay: Runbook, user: Any) -> Runbook:
    """The team sees the shipped runbook again; returns it. The overlay row stays,
    dropped, with a last revision (by `user`) holding the shipped file, so its
    history says who went back and when; a later edit revives it."""
    from kb.services.export import runbook_text

    if overlay.overlay_of_id is None or overlay.team_id not in admin_team_ids(user):
        raise PermissionDenied("Only the team's admins drop its overlay.")
    base = overlay.overlay_of
    parsed, text = runbook_parse_edit(text=runbook_text(runbook=base), slug=base.slug, team_id=overlay.team_id)
    with transaction.atomic():
        row = Runbook.objects.select_for_update().get(pk=overlay.pk)
        runbook_save(parsed=parsed, text=text, author=user, message="back to the shipped runbook", row=row)
        Runbook.objects.filter(pk=row.pk).update(overlay_dropped=timezone.now())
    return base


def team_runbook_create(*, team: Team, text: str, author: Any, message: str = "") -> Runbook:
    """A new runbook owned by `team` from a whole runbook file (its slug is in
    the file): validated like a file, revision 1 by `author`, seen by the
    team only until a maintainer publishes it. Raises RunbookError."""
    parsed, text = runbook_parse_edit(text=text, slug=None, team_id=team.pk)
    path = runbook_file_path(parsed.slug)
    if Runbook.objects.filter(slug=parsed.slug, overlay_of__isnull=True).exists():
        raise RunbookError(f"{path}: a runbook named '{parsed.slug}' exists already; choose another slug")
    try:
        with transaction.atomic():
            runbook, _ = runbook_save(parsed=parsed, text=text, author=author, message=message or "created",
                                      row=Runbook(slug=parsed.slug, team=team))
    except IntegrityError:   # created meanwhile by someone else
        raise RunbookError(f"{path}: a runbook named '{parsed.slug}' exists already; choose another slug") from None
    return runbook


def runbook_publish(*, runbook: Runbook, user: Any, published: bool = True) -> Runbook:
    """A maintainer shows a team's runbook to every team (or stops showing it), with the
    team's own symptoms it uses: a published runbook's symptoms are every team's to read
    and match. Unpublishing keeps a symptom published while a runbook another team sees uses it."""
    if not is_maintainer(user):
        raise PermissionDenied("Only maintainers publish runbooks.")
    if runbook.team_id is None or runbook.overlay_of_id is not None:
        raise RunbookError(f"{runbook_file_path(runbook.slug)}: only a team's own runbook is published")
    with transaction.atomic():
        Runbook.objects.filter(pk=runbook.pk).update(published=published)
        symptoms = Symptom.objects.filter(team_id=runbook.team_id, uses__runbook=runbook)
        if not published:
            seen_elsewhere = Q(team__isnull=True) | Q(published=True) | ~Q(team_id=runbook.team_id)
            symptoms = symptoms.exclude(uses__runbook__in=Runbook.objects.filter(seen_elsewhere).exclude(pk=runbook.pk))
        Symptom.objects.filter(pk__in=list(symptoms.values_list("pk", flat=True))).update(published=published)
    runbook.published = published
    return runbook


def proposal_create(*, runbook: Runbook, team: Team, user: Any, text: str, message: str = "") -> RunbookProposal:
    """File `text` as a change of shipped `runbook` for the maintainers to review."""
    if not runbook.is_shipped:
        raise RunbookError(f"{runbook_file_path(runbook.slug)}: only a shipped runbook takes proposals")
    if team.pk not in admin_team_ids(user):
        raise PermissionDenied("Only a team's admins propose changes in its name.")
    _, text = runbook_parse_edit(text=text, slug=runbook.slug, team_id=None)
    last = runbook.revisions.order_by("-number").first()
    return RunbookProposal.objects.create(runbook=runbook, team=team, author=user, text=text,
                                          message=message[:200], base_revision=last.number if last else 0)


def proposal_diff(*, proposal: RunbookProposal) -> list[DiffLine]:
    """The shipped runbook as it is now against the proposed file."""
    from kb.services.export import runbook_text

    last = proposal.runbook.revisions.order_by("-number").first()
    return revision_diff(old=runbook_text(runbook=proposal.runbook), new=proposal.text,
                         old_label=f"r{last.number if last else 0} (shipped)", new_label=f"proposal {proposal.pk}")


def proposal_decide(*, proposal: RunbookProposal, user: Any, accept: bool) -> RunbookRevision | None:
    """A maintainer accepts (the shipped runbook's next revision, authored by
    the maintainer, naming the proposer) or declines an open proposal."""
    return proposal_settle(proposal=proposal, user=user, accept=accept,
                           apply=lambda **kw: runbook_update(runbook=proposal.runbook, **kw))


def proposal_settle(*, proposal: Any, user: Any, accept: bool, apply: Any) -> Any:
    """Decide an open proposal of any kind: accepted, `apply(text=, author=, message=)` writes the
    shipped file's next revision (authored by the maintainer, naming the proposer) in the same
    transaction as the decision; declined, only the decision is kept."""
    if not is_maintainer(user):
        raise PermissionDenied("Only maintainers decide proposals.")
    if proposal.status != proposal.Status.OPEN:
        raise RunbookError(f"proposal {proposal.pk} was {proposal.status} already")
    revision = None
    with transaction.atomic():
        if accept:
            who = proposal.author.get_username() if proposal.author_id else "someone"
            note = f"proposal {proposal.pk} by {who} of {proposal.team.name}"
            revision = apply(text=proposal.text, author=user,
                             message=f"{note}: {proposal.message}" if proposal.message else note)
        proposal.status = proposal.Status.ACCEPTED if accept else proposal.Status.DECLINED
        proposal.decided_by, proposal.decided = user, timezone.now()
        proposal.save(update_fields=["status", "decided_by", "decided"])
    return revision
