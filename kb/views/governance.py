"""Runbook governance pages (kb.services.governance): a team's new runbook,
publishing it (maintainers), dropping a team's overlay, and the proposals
maintainers accept or decline with the diff shown (for runbooks and library symptoms)."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from analyzers.runbooks import RunbookError
from kb.access import admin_team_ids, is_maintainer, team_ids
from kb.current_team import current_team
from kb.forms import TeamRunbookForm
from kb.models import Runbook, RunbookProposal, SymptomProposal, Team
from kb.selectors.catalog import catalog_runbook_or_404, unpublished_team_runbooks
from kb.services import governance
from kb.services.symptom_proposals import symptom_proposal_decide, symptom_proposal_diff


@require_http_methods(["GET", "POST"])
def runbook_new(request: HttpRequest) -> HttpResponse:
    teams = Team.objects.filter(pk__in=admin_team_ids(request.user))
    if not teams.exists():
        raise PermissionDenied("Only team admins write their team's runbooks.")
    current = current_team(request)
    form = TeamRunbookForm(request.POST or None, teams=teams,
                           initial={"team": current.pk} if current and current in teams else None)
    if request.method == "POST" and form.is_valid():
        try:
            runbook = governance.team_runbook_create(team=form.cleaned_data["team"], text=form.cleaned_data["text"],
                                                     author=request.user)
        except RunbookError as exc:
            form.add_error("text", str(exc))
        else:
            messages.success(request, f"Created {runbook.slug}: your team sees it; a maintainer may publish it.")
            return redirect("runbook_detail", slug=runbook.slug)
    return render(request, "kb/runbook_new.html", {"form": form}, status=400 if form.errors else 200)


@require_POST
def runbook_publish(request: HttpRequest, slug: str) -> HttpResponse:
    if not is_maintainer(request.user):
        raise PermissionDenied("Only maintainers publish runbooks.")
    runbook = Runbook.objects.filter(slug=slug, overlay_of__isnull=True, team__isnull=False).first()
    if runbook is None:
        raise Http404("No such team runbook.")
    published = request.POST.get("published", "1") == "1"
    governance.runbook_publish(runbook=runbook, user=request.user, published=published)
    messages.success(request, f"{slug} is {'now seen by every team' if published else 'seen by its team only'}.")
    return redirect("runbook_detail", slug=slug)


@require_POST
def runbook_overlay_drop(request: HttpRequest, slug: str) -> HttpResponse:
    runbook = catalog_runbook_or_404(team=current_team(request), slug=slug)
    if runbook.overlay_of_id is None:
        raise Http404("Your team has no version of its own of this runbook.")
    governance.runbook_overlay_drop(overlay=runbook, user=request.user)
    messages.success(request, "Your team sees the shipped runbook again.")
    return redirect("runbook_detail", slug=slug)


def _proposals_for(user, model=RunbookProposal):
    """A maintainer sees every proposal, anyone else their teams' (another team's: 404)."""
    qs = model.objects.select_related("team", "author")
    return qs if is_maintainer(user) else qs.filter(team_id__in=team_ids(user))


@require_GET
def proposal_list(request: HttpRequest) -> HttpResponse:
    proposals, symptom_proposals = _proposals_for(request.user), _proposals_for(request.user, SymptomProposal)
    return render(request, "kb/proposal_list.html", {
        "open": proposals.filter(status=RunbookProposal.Status.OPEN)[:200],
        "decided": proposals.exclude(status=RunbookProposal.Status.OPEN)[:50],
        "symptom_open": symptom_proposals.filter(status=RunbookProposal.Status.OPEN)[:200],
        "symptom_decided": symptom_proposals.exclude(status=RunbookProposal.Status.OPEN)[:50],
        "maintainer": is_maintainer(request.user),
        "unpublished": unpublished_team_runbooks()[:200] if is_maintainer(request.user) else []})


@require_http_methods(["GET", "POST"])
def proposal_detail(request: HttpRequest, pk: int) -> HttpResponse:
    proposal = _proposals_for(request.user).filter(pk=pk).first()
    return _proposal_page(request, proposal, decide=governance.proposal_decide, diff=governance.proposal_diff,
                          subject=lambda p: p.runbook.slug, url_name="proposal_detail")


@require_http_methods(["GET", "POST"])
def symptom_proposal_detail(request: HttpRequest, pk: int) -> HttpResponse:
    proposal = _proposals_for(request.user, SymptomProposal).filter(pk=pk).first()
    return _proposal_page(request, proposal, decide=symptom_proposal_decide, diff=symptom_proposal_diff,
                          subject=lambda p: f"symptom {p.symptom_id}", url_name="symptom_proposal_detail")


def _proposal_page(request, proposal, *, decide, diff, subject, url_name) -> HttpResponse:
    """A proposal with its diff; a maintainer's POST accepts or declines it (runbooks and symptoms alike)."""
    if proposal is None:
        raise Http404("No such proposal.")
    if request.method == "POST":
        accept = request.POST.get("decision") == "accept"
        try:
            revision = decide(proposal=proposal, user=request.user, accept=accept)
        except RunbookError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, f"Accepted: revision {revision.number} of {subject(proposal)}, for "
                             "every team." if revision else "Declined." if not accept else "Accepted (no change).")
        return redirect(url_name, pk=proposal.pk)
    return render(request, "kb/proposal_detail.html", {
        "proposal": proposal, "diff": diff(proposal=proposal),
        "symptom": isinstance(proposal, SymptomProposal), "maintainer": is_maintainer(request.user)})
