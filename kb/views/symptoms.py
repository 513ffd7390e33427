"""The symptom library in the app: one page per symptom with the runbooks
that share it, its editor and its history. A team admin's edit is the team's
own version of the symptom (kb.services.symptom_overlays); a maintainer's
changes the library. A symptom a team drafted is that team's (and a maintainer's, to
review it) until published: another team gets a 404 (kb.selectors.catalog.symptom_catalog)."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from kb.access import is_maintainer, symptom_can_edit, symptom_team_edits_row
from kb.current_team import current_team
from kb.forms import SymptomEditForm
from kb.lib.revisions import revision_diff
from kb.models import RunbookSymptom, Symptom, SymptomOverlay, Team
from kb.selectors.catalog import catalog_symptom_or_404, runbook_catalog
from kb.services.symptom_overlays import symptom_as_seen, symptom_edit_save, symptom_overlay_drop
from kb.services.symptoms import symptom_text
from kb.views.editing import file_edit


def _int_or_none(value: str | None) -> int | None:
    try:
        return int(value) if value else None
    except ValueError:
        return None


def _uses(symptom: Symptom, team: Team | None) -> list[RunbookSymptom]:
    return list(symptom.uses.filter(runbook__in=runbook_catalog(team=team))
                .select_related("runbook").order_by("runbook__slug"))


def _revisions(symptom: Symptom, overlay: SymptomOverlay | None):
    return (overlay or symptom).revisions.select_related("author").order_by("-number")


@require_GET
def symptom_detail(request: HttpRequest, symptom: str) -> HttpResponse:
    team = current_team(request)
    symptom = catalog_symptom_or_404(team=team, symptom_id=symptom, maintainer=is_maintainer(request.user))
    seen = symptom_as_seen(symptom=symptom, team=team)
    revisions = list(_revisions(symptom, seen.overlay))
    b = _int_or_none(request.GET.get("b"))
    new = next((r for r in revisions if r.number == b), revisions[0] if revisions else None)
    a = _int_or_none(request.GET.get("a"))
    older = [r for r in revisions if new and r.number < new.number]
    old = next((r for r in revisions if r.number == a), older[0] if older else None)
    diff = revision_diff(old=old.text, new=new.text, old_label=f"r{old.number}",
                         new_label=f"r{new.number}") if old and new else []
    ctx = {
        "symptom": seen, "uses": _uses(symptom, team), "revisions": revisions, "old": old, "new": new,
        "diff": diff, "can_edit": symptom_can_edit(user=request.user, symptom=symptom, team=team),
        "viewer_team": team,
    }
    return render(request, "kb/symptom_detail.html", ctx)


@require_http_methods(["GET", "POST"])
def symptom_edit(request: HttpRequest, symptom: str) -> HttpResponse:
    team = current_team(request)
    symptom = catalog_symptom_or_404(team=team, symptom_id=symptom, maintainer=is_maintainer(request.user))
    if not symptom_can_edit(user=request.user, symptom=symptom, team=team):
        raise PermissionDenied("Only maintainers change the symptom library, and team admins their team's version.")
    seen = symptom_as_seen(symptom=symptom, team=team)
    own = seen.overlay if not is_maintainer(request.user) else None
    # The team's own unpublished symptom: saving changes the row itself, seen by the team alone.
    team_own = symptom_team_edits_row(symptom=symptom, team=team)
    uses = _uses(symptom, team)

    def save(*, text: str, author, message: str, base_revision: int | None):
        return symptom_edit_save(symptom=symptom, team=team, user=author, text=text, message=message,
                                 base_revision=base_revision, propose=bool(request.POST.get("propose")))

    form, response = file_edit(
        request, SymptomEditForm,
        text=lambda: own.revisions.order_by("-number").first().text if own else symptom_text(symptom=symptom),
        last=_revisions(symptom, own).first(), save=save,
        done=reverse("symptom_detail", args=[symptom.id]), saved_note=f" {len(uses)} runbook(s) use it.")
    if response is not None:
        return response
    return render(request, "kb/symptom_edit.html", {"symptom": seen, "form": form, "uses": uses,
                                                    "for_everyone": is_maintainer(request.user), "team_own": team_own,
                                                    "viewer_team": team})


@require_POST
def symptom_overlay_drop_view(request: HttpRequest, symptom: str) -> HttpResponse:
    team = current_team(request)
    overlay = (SymptomOverlay.objects.filter(symptom_id=symptom, team=team, dropped__isnull=True).first()
               if team else None)
    if overlay is None:
        raise Http404("Your team has no version of its own of this symptom.")
    symptom_overlay_drop(overlay=overlay, user=request.user)
    messages.success(request, "Your team uses the library's symptom again.")
    return redirect("symptom_detail", symptom=symptom)
