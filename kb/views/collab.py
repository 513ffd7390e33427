"""Team work pages and partials: finding feedback, the activity stream, follows,
similar incidents, runbook field notes and notifications (annotations:
kb/views/annotations.py).

    GET/POST /analyses/<id>/findings/<slug>/feedback/      confirm / reject a finding
    GET      /incidents/<id>/activity/   POST /incidents/<id>/follow/
    GET      /incidents/<id>/similar/                      incidents with the same root causes
    GET/POST /runbooks/<slug>/notes/                       field notes + feedback counts
    GET/POST /runbook-notes/<id>/edit/  POST /runbook-notes/<id>/delete/
    GET      /notifications/   POST /notifications/read/   GET /notifications/<id>/

Partials answer htmx requests; a plain request (no JavaScript) gets a redirect
to the page the partial lives on. Every object comes through kb.access, so
another team's ids are 404s; CSRF applies to every POST.
"""

from __future__ import annotations

from typing import Any, Callable

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from kb.access import admin_team_ids, authored_can_edit, get_visible_or_404, runbook_note_can_edit
from kb.current_team import current_team
from kb.forms import AnnotationForm, FeedbackForm, RunbookNoteForm
from kb.models import Analysis, Annotation, Incident, Runbook, RunbookNote
from kb.selectors.collab import (
    activity_list,
    feedback_for_finding,
    finding_slugs,
    incident_root_causes,
    is_following,
    runbook_feedback_stats,
    runbook_note_list,
    similar_incidents,
)
from kb.selectors.catalog import catalog_runbook_or_404, runbook_catalog
from kb.selectors.incidents import user_teams
from kb.services import collab, notifications


def incident_or_404(request: HttpRequest, pk: int) -> Incident:
    return get_visible_or_404(Incident.objects.select_related("team", "owner"), request.user, pk=pk)


def analysis_or_404(request: HttpRequest, pk: int) -> Analysis:
    return get_visible_or_404(Analysis.objects.select_related("bundle__incident__team"), request.user, pk=pk)


def _note(request: HttpRequest, pk: int) -> RunbookNote:
    return get_visible_or_404(RunbookNote.objects.select_related("author", "team", "runbook"), request.user, pk=pk)


def form_errors(exc: ValidationError) -> list[str]:
    return [m for ms in (exc.message_dict.values() if hasattr(exc, "error_dict") else [exc.messages])
            for m in ms]


def back_to(request: HttpRequest, fallback: str) -> HttpResponse:
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                                   require_https=request.is_secure()):
        return redirect(target)
    return redirect(fallback)


def note_edit_form(request: HttpRequest, obj: Annotation | RunbookNote, *, save: Callable[[str], object],
                   saved: Callable[[], HttpResponse], **ctx: Any) -> HttpResponse:
    """The edit form of an annotation or a field note: a GET shows it, a valid POST
    saves the body through `save` and answers `saved()`, a refused one shows the
    form again with the reasons (400 without htmx). `ctx`: the template's action,
    and for a field note note/cancel_url."""
    errors: list[str] = []
    if request.method == "POST":
        form = AnnotationForm(request.POST)
        if form.is_valid():
            try:
                save(form.cleaned_data["body"])
            except ValidationError as exc:
                errors = form_errors(exc)
            else:
                return saved()
        else:
            errors = [e for es in form.errors.values() for e in es]
    else:
        form = AnnotationForm(initial={"body": obj.body})
    ctx = {"a": obj, "form": form, "errors": errors, **ctx}
    if request.htmx:
        return render(request, "kb/_annotation_form.html", ctx)
    return render(request, "kb/_annotation_edit_page.html", ctx, status=400 if errors else 200)


def _feedback_ctx(request: HttpRequest, analysis: Analysis, slug: str, errors: list[str] | None = None,
                  reason: str = "") -> dict[str, Any]:
    data = feedback_for_finding(analysis=analysis, slug=slug, user=request.user)
    return {"analysis": analysis, "slug": slug, "fb": data, "errors": errors or [],
            "key": f"feedback-a{analysis.pk}-{slug}",
            "reason": reason if errors else (data["mine"].reason if data["mine"] else ""),
            "runbook_exists": runbook_catalog(team=analysis.team_id).filter(slug=slug).exists()}


@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def finding_feedback(request: HttpRequest, analysis_id: int, slug: str) -> HttpResponse:
    analysis = analysis_or_404(request, analysis_id)
    if slug not in finding_slugs(analysis=analysis):
        raise Http404("No such finding.")
    errors: list[str] = []
    reason = ""
    if request.method == "POST":
        form = FeedbackForm(request.POST)
        reason = request.POST.get("reason", "")
        if form.is_valid():
            try:
                if form.cleaned_data["verdict"] == "clear":
                    collab.feedback_clear(analysis=analysis, slug=slug, user=request.user)
                else:
                    collab.feedback_set(analysis=analysis, slug=slug, user=request.user,
                                        verdict=form.cleaned_data["verdict"], reason=form.cleaned_data["reason"])
            except ValidationError as exc:
                errors = form_errors(exc)
        else:
            errors = [e for es in form.errors.values() for e in es]
        if not request.htmx:
            for e in errors:
                messages.error(request, e)
            if not errors:
                messages.success(request, "Feedback saved.")
            return back_to(request, reverse("analysis_detail", args=[analysis.pk]) + f"#feedback-a{analysis.pk}-{slug}")
    elif not request.htmx:
        return redirect(reverse("analysis_detail", args=[analysis.pk]) + f"#feedback-a{analysis.pk}-{slug}")
    return render(request, "kb/_feedback.html", _feedback_ctx(request, analysis, slug, errors, reason))


@require_GET
@vary_on_headers("HX-Request")
def incident_activity(request: HttpRequest, incident_id: int) -> HttpResponse:
    incident = incident_or_404(request, incident_id)
    if not request.htmx:
        return redirect(reverse("incident_detail", args=[incident.pk]) + "#activity")
    return render(request, "kb/_activity.html", _activity_ctx(request, incident))


def _activity_ctx(request: HttpRequest, incident: Incident) -> dict[str, Any]:
    return {"incident": incident, "activities": activity_list(incident=incident),
            "following": is_following(incident=incident, user=request.user),
            "is_owner": incident.owner_id == request.user.pk}


@require_POST
@vary_on_headers("HX-Request")
def incident_follow(request: HttpRequest, incident_id: int) -> HttpResponse:
    incident = incident_or_404(request, incident_id)
    collab.follow_set(incident=incident, user=request.user, follow=request.POST.get("follow") != "0")
    if request.htmx:
        return render(request, "kb/_activity.html", _activity_ctx(request, incident))
    return redirect(reverse("incident_detail", args=[incident.pk]) + "#activity")


@require_GET
@vary_on_headers("HX-Request")
def incident_similar(request: HttpRequest, incident_id: int) -> HttpResponse:
    incident = incident_or_404(request, incident_id)
    if not request.htmx:
        return redirect(reverse("incident_detail", args=[incident.pk]) + "#similar")
    ctx = {"incident": incident, "similar": similar_incidents(incident=incident, user=request.user),
           "causes": incident_root_causes(incident=incident)}
    return render(request, "kb/_activity_similar.html", ctx)


def _notes_ctx(request: HttpRequest, runbook: Runbook, form: RunbookNoteForm | None = None,
               errors: list[str] | None = None) -> dict[str, Any]:
    teams = user_teams(user=request.user)
    admin_of = admin_team_ids(request.user)
    notes = list(runbook_note_list(runbook=runbook, user=request.user))
    for n in notes:
        n.can_edit = authored_can_edit(n, request.user, admin_of)
    return {"runbook": runbook, "notes": notes, "teams": list(teams),
            "form": form or RunbookNoteForm(teams=teams), "errors": errors or [],
            "stats": runbook_feedback_stats(slug=runbook.slug, user=request.user)}


@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def runbook_notes(request: HttpRequest, slug: str) -> HttpResponse:
    # Notes are per team, on the runbook the user's team sees; on an overlay, on its shipped row
    # (so they outlive the overlay).
    seen = catalog_runbook_or_404(team=current_team(request), slug=slug)
    runbook = seen.overlay_of or seen
    if request.method == "GET":
        if not request.htmx:
            return redirect(reverse("runbook_detail", args=[runbook.slug]) + "#field-notes")
        return render(request, "kb/_field_notes.html", _notes_ctx(request, runbook))
    form = RunbookNoteForm(request.POST, teams=user_teams(user=request.user))
    errors: list[str] = []
    if form.is_valid():
        try:
            collab.runbook_note_create(runbook=runbook, team=form.cleaned_data["team"], author=request.user,
                                       body=form.cleaned_data["body"])
        except ValidationError as exc:
            errors = form_errors(exc)
    else:
        errors = [e for es in form.errors.values() for e in es]
    if request.htmx:
        return render(request, "kb/_field_notes.html",
                      _notes_ctx(request, runbook, form if errors else None, errors))
    for e in errors:
        messages.error(request, e)
    if not errors:
        messages.success(request, "Field note added.")
    return redirect(reverse("runbook_detail", args=[runbook.slug]) + "#field-notes")


@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def runbook_note_edit(request: HttpRequest, pk: int) -> HttpResponse:
    note = _note(request, pk)
    if not runbook_note_can_edit(note=note, user=request.user):
        raise PermissionDenied("Only the author or a team admin edits a note.")

    def saved() -> HttpResponse:
        if request.htmx:
            return render(request, "kb/_field_notes.html", _notes_ctx(request, note.runbook))
        return redirect(reverse("runbook_detail", args=[note.runbook.slug]) + "#field-notes")

    return note_edit_form(
        request, note, saved=saved,
        save=lambda body: collab.runbook_note_edit(note=note, user=request.user, body=body),
        action=reverse("runbook_note_edit", args=[note.pk]),
        note=True, cancel_url=reverse("runbook_notes", args=[note.runbook.slug]))


@require_POST
@vary_on_headers("HX-Request")
def runbook_note_delete(request: HttpRequest, pk: int) -> HttpResponse:
    note = _note(request, pk)
    runbook = note.runbook
    collab.runbook_note_delete(note=note, user=request.user)
    if request.htmx:
        return render(request, "kb/_field_notes.html", _notes_ctx(request, runbook))
    messages.success(request, "Field note deleted.")
    return redirect(reverse("runbook_detail", args=[runbook.slug]) + "#field-notes")


@require_GET
def notification_list(request: HttpRequest) -> HttpResponse:
    ctx = {"notifications": notifications.notification_list(user=request.user)}
    return render(request, "kb/notifications.html", ctx)


@require_POST
def notification_read(request: HttpRequest) -> HttpResponse:
    ids = [int(i) for i in request.POST.getlist("id") if i.isdigit()] or None
    notifications.notification_mark_read(user=request.user, ids=ids)
    return redirect("notification_list")


@require_GET
def notification_go(request: HttpRequest, pk: int) -> HttpResponse:
    url = notifications.notification_open(user=request.user, pk=pk)
    if url is None:
        raise Http404("No such notification.")
    if not url_has_allowed_host_and_scheme(url, allowed_hosts=set()):
        url = reverse("notification_list")
    return redirect(url)
