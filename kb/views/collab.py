"""Team work pages and partials: annotations, finding feedback, the activity
stream, follows, runbook field notes and notifications.

    GET/POST /incidents/<id>/annotations/                  notes on an incident (the panel partial)
    GET/POST /analyses/<id>/annotations/?slug=|?path=&line= notes on a finding or on one log line
    GET      /annotations/<id>/                            permalink (htmx: the item partial)
    GET/POST /annotations/<id>/edit/   POST /annotations/<id>/delete/
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

from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from kb.access import get_visible_or_404
from kb.models import Analysis, Annotation, FindingFeedback, Incident, Runbook, RunbookNote, Team
from kb.services import collab
from kb.services.notifications import notification_list as notification_list_service
from kb.services.notifications import notification_mark_read, notification_open
from kb.timeline import evidence_anchor

MAX_LINE_NUMBER = 10**9


class AnnotationForm(forms.Form):
    body = forms.CharField(max_length=collab.MAX_BODY, strip=False, widget=forms.Textarea(attrs={
        "rows": 3, "placeholder": "Markdown. @name notifies a teammate."}))


class FeedbackForm(forms.Form):
    verdict = forms.ChoiceField(choices=FindingFeedback.Verdict.choices + [("clear", "Withdraw")])
    reason = forms.CharField(max_length=collab.MAX_REASON, required=False)


class RunbookNoteForm(forms.Form):
    body = forms.CharField(max_length=collab.MAX_BODY, strip=False, widget=forms.Textarea(attrs={
        "rows": 3, "placeholder": "What your team learned using this runbook (Markdown)."}))
    team = forms.ModelChoiceField(queryset=Team.objects.none(), empty_label=None)

    def __init__(self, *args, teams, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams
        self.only_team = teams[0] if len(teams) == 1 else None
        if self.only_team is not None:   # one team: no choice to make
            self.fields["team"].initial = self.only_team.pk
            self.fields["team"].required = False
            self.fields["team"].widget = forms.HiddenInput()

    def clean_team(self) -> Team | None:
        return self.cleaned_data.get("team") or self.only_team


# ---------------------------------------------------------------- helpers


def _incident(request: HttpRequest, pk: int) -> Incident:
    return get_visible_or_404(Incident.objects.select_related("team", "owner"), request.user, pk=pk)


def _analysis(request: HttpRequest, pk: int) -> Analysis:
    return get_visible_or_404(Analysis.objects.select_related("bundle__incident__team"), request.user, pk=pk)


def _annotation(request: HttpRequest, pk: int) -> Annotation:
    return get_visible_or_404(
        Annotation.objects.select_related("author", "incident", "analysis", "team"), request.user, pk=pk
    )


def _note(request: HttpRequest, pk: int) -> RunbookNote:
    return get_visible_or_404(RunbookNote.objects.select_related("author", "team", "runbook"), request.user, pk=pk)


def _errors(exc: ValidationError) -> list[str]:
    return [m for ms in (exc.message_dict.values() if hasattr(exc, "error_dict") else [exc.messages])
            for m in ms]


def _line(value: str | None) -> int:
    try:
        line = int(value or "")
    except ValueError:
        raise Http404("No such line.") from None
    if not 1 <= line <= MAX_LINE_NUMBER:
        raise Http404("No such line.")
    return line


def annotation_url(annotation: Annotation) -> str:
    """Where an annotation shows: its line or finding on the analysis page, else the incident page."""
    if annotation.kind == "evidence":
        return reverse("analysis_detail", args=[annotation.analysis_id]) + "#" + annotation.evidence_anchor
    if annotation.kind == "finding":
        return reverse("analysis_detail", args=[annotation.analysis_id]) + "#" + _finding_key(
            annotation.analysis_id, annotation.finding_slug)
    return reverse("incident_detail", args=[annotation.incident_id]) + f"#annotation-{annotation.pk}"


def _finding_key(analysis_id: int, slug: str) -> str:
    return f"notes-a{analysis_id}-{slug}"


def _decorate(annotations, user, team_admin: bool) -> list[Annotation]:
    out = []
    for a in annotations:
        a.can_edit = a.author_id == user.pk or team_admin
        a.label = collab.annotation_target_label(a)
        a.permalink = annotation_url(a)
        if a.kind == "evidence":
            a.context_url = (reverse("analysis_context", args=[a.analysis_id])
                             + "?" + _query(path=a.evidence_path, line=a.evidence_line))
        out.append(a)
    return out


def _query(**params: Any) -> str:
    from urllib.parse import urlencode

    return urlencode(params)


def _panel(request: HttpRequest, *, incident: Incident, analysis: Analysis | None = None, slug: str = "",
           path: str = "", line: int | None = None, form: AnnotationForm | None = None,
           errors: list[str] | None = None) -> dict[str, Any]:
    """Context of the annotation panel (_annotations.html) for one target."""
    admin = collab.is_admin(request.user, incident.team_id)
    if analysis is None:
        annotations = collab.annotation_list(incident=incident)
        key, title = f"notes-incident-{incident.pk}", "Everything noted on this incident"
        post_url = reverse("incident_annotations", args=[incident.pk])
    elif path:
        annotations = collab.annotation_list(analysis=analysis, evidence_path=path, evidence_line=line)
        key, title = f"notes-a{analysis.pk}-{evidence_anchor(path, line)}", f"Notes on {path}:{line}"
        post_url = reverse("analysis_annotations", args=[analysis.pk]) + "?" + _query(path=path, line=line)
    else:
        annotations = collab.annotation_for_finding(analysis=analysis, slug=slug)
        key, title = _finding_key(analysis.pk, slug), "Notes on this finding"
        post_url = reverse("analysis_annotations", args=[analysis.pk]) + "?" + _query(slug=slug)
    ctx = {
        "panel": {"key": key, "title": title, "post_url": post_url, "incident": incident, "analysis": analysis,
                  "slug": slug, "path": path, "line": line,
                  "anchor": evidence_anchor(path, line) if path else ""},
        "annotations": _decorate(annotations, request.user, admin),
        "form": form or AnnotationForm(),
        "errors": errors or [],
    }
    if path:
        ctx["panel"]["context_url"] = reverse("analysis_context", args=[analysis.pk]) + "?" + _query(
            path=path, line=line)
    return ctx


def _back(request: HttpRequest, fallback: str) -> HttpResponse:
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                                   require_https=request.is_secure()):
        return redirect(target)
    return redirect(fallback)


# ---------------------------------------------------------------- annotations


@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def incident_annotations(request: HttpRequest, incident_id: int) -> HttpResponse:
    incident = _incident(request, incident_id)
    return _annotations(request, incident=incident)


@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def analysis_annotations(request: HttpRequest, analysis_id: int) -> HttpResponse:
    analysis = _analysis(request, analysis_id)
    incident = analysis.bundle.incident
    slug = request.GET.get("slug", "")
    path = request.GET.get("path", "")
    line = _line(request.GET.get("line")) if path else None
    if not slug and not path:
        raise Http404("Name a finding (slug) or a line (path and line).")
    return _annotations(request, incident=incident, analysis=analysis, slug=slug, path=path, line=line)


def _annotations(request: HttpRequest, *, incident: Incident, analysis: Analysis | None = None,
                 slug: str = "", path: str = "", line: int | None = None) -> HttpResponse:
    target = {"incident": incident, "analysis": analysis, "slug": slug, "path": path, "line": line}
    if request.method == "GET":
        if not request.htmx:
            # A plain visit: the page the panel lives on.
            if analysis is None:
                return redirect(reverse("incident_detail", args=[incident.pk]) + "#notes")
            anchor = evidence_anchor(path, line) if path else _finding_key(analysis.pk, slug)
            return redirect(reverse("analysis_detail", args=[analysis.pk]) + "#" + anchor)
        return render(request, "kb/_annotations.html", _panel(request, **target))
    form = AnnotationForm(request.POST)
    errors: list[str] = []
    annotation = None
    if form.is_valid():
        try:
            annotation = collab.annotation_create(
                incident=incident, author=request.user, body=form.cleaned_data["body"], analysis=analysis,
                finding_slug=slug, evidence_path=path, evidence_line=line,
            )
        except ValidationError as exc:
            errors = _errors(exc)
        except PermissionDenied:
            raise Http404("No such incident.") from None
    else:
        errors = [e for es in form.errors.values() for e in es]
    if request.htmx:
        ctx = _panel(request, **target, form=form if errors else None, errors=errors)
        return render(request, "kb/_annotations.html", ctx)
    if errors:
        for e in errors:
            messages.error(request, e)
        return _back(request, reverse("incident_detail", args=[incident.pk]))
    messages.success(request, "Note added.")
    return redirect(annotation_url(annotation))


@require_GET
@vary_on_headers("HX-Request")
def annotation_permalink(request: HttpRequest, pk: int) -> HttpResponse:
    annotation = _annotation(request, pk)
    if request.htmx:   # "Cancel" of an edit: the item again
        admin = collab.is_admin(request.user, annotation.team_id)
        return render(request, "kb/_annotation.html",
                      {"a": _decorate([annotation], request.user, admin)[0]})
    return redirect(annotation_url(annotation))


@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def annotation_edit(request: HttpRequest, pk: int) -> HttpResponse:
    annotation = _annotation(request, pk)
    if not collab.annotation_can_edit(annotation=annotation, user=request.user):
        raise PermissionDenied("Only the author or a team admin edits an annotation.")
    errors: list[str] = []
    if request.method == "POST":
        form = AnnotationForm(request.POST)
        if form.is_valid():
            try:
                collab.annotation_edit(annotation=annotation, user=request.user, body=form.cleaned_data["body"])
            except ValidationError as exc:
                errors = _errors(exc)
            else:
                if request.htmx:
                    return render(request, "kb/_annotation.html",
                                  {"a": _decorate([annotation], request.user, True)[0]})
                messages.success(request, "Note saved.")
                return redirect(annotation_url(annotation))
        else:
            errors = [e for es in form.errors.values() for e in es]
    else:
        form = AnnotationForm(initial={"body": annotation.body})
    ctx = {"a": annotation, "form": form, "errors": errors,
           "action": reverse("annotation_edit", args=[annotation.pk])}
    if request.htmx:
        return render(request, "kb/_annotation_form.html", ctx)
    return render(request, "kb/_annotation_edit_page.html", ctx, status=400 if errors else 200)


@require_POST
@vary_on_headers("HX-Request")
def annotation_delete(request: HttpRequest, pk: int) -> HttpResponse:
    annotation = _annotation(request, pk)
    back = (reverse("incident_detail", args=[annotation.incident_id]) if annotation.analysis_id is None
            else reverse("analysis_detail", args=[annotation.analysis_id]))
    collab.annotation_delete(annotation=annotation, user=request.user)
    if request.htmx:
        return HttpResponse("")   # the item is swapped out
    messages.success(request, "Note deleted.")
    return _back(request, back)


# ---------------------------------------------------------------- feedback


def _feedback_ctx(request: HttpRequest, analysis: Analysis, slug: str, errors: list[str] | None = None,
                  reason: str = "") -> dict[str, Any]:
    data = collab.feedback_for_finding(analysis=analysis, slug=slug, user=request.user)
    return {"analysis": analysis, "slug": slug, "fb": data, "errors": errors or [],
            "key": f"feedback-a{analysis.pk}-{slug}",
            "reason": reason if errors else (data["mine"].reason if data["mine"] else ""),
            "runbook_exists": Runbook.objects.filter(slug=slug).exists()}


@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def finding_feedback(request: HttpRequest, analysis_id: int, slug: str) -> HttpResponse:
    analysis = _analysis(request, analysis_id)
    if slug not in collab.finding_slugs(analysis=analysis):
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
                errors = _errors(exc)
        else:
            errors = [e for es in form.errors.values() for e in es]
        if not request.htmx:
            for e in errors:
                messages.error(request, e)
            if not errors:
                messages.success(request, "Feedback saved.")
            return _back(request, reverse("analysis_detail", args=[analysis.pk]) + f"#feedback-a{analysis.pk}-{slug}")
    elif not request.htmx:
        return redirect(reverse("analysis_detail", args=[analysis.pk]) + f"#feedback-a{analysis.pk}-{slug}")
    return render(request, "kb/_feedback.html", _feedback_ctx(request, analysis, slug, errors, reason))


# ---------------------------------------------------------------- activity, follows, similar


@require_GET
@vary_on_headers("HX-Request")
def incident_activity(request: HttpRequest, incident_id: int) -> HttpResponse:
    incident = _incident(request, incident_id)
    if not request.htmx:
        return redirect(reverse("incident_detail", args=[incident.pk]) + "#activity")
    return render(request, "kb/_activity.html", _activity_ctx(request, incident))


def _activity_ctx(request: HttpRequest, incident: Incident) -> dict[str, Any]:
    return {"incident": incident, "activities": collab.activity_list(incident=incident),
            "following": collab.is_following(incident=incident, user=request.user),
            "is_owner": incident.owner_id == request.user.pk}


@require_POST
@vary_on_headers("HX-Request")
def incident_follow(request: HttpRequest, incident_id: int) -> HttpResponse:
    incident = _incident(request, incident_id)
    collab.follow_set(incident=incident, user=request.user, follow=request.POST.get("follow") != "0")
    if request.htmx:
        return render(request, "kb/_activity.html", _activity_ctx(request, incident))
    return redirect(reverse("incident_detail", args=[incident.pk]) + "#activity")


@require_GET
@vary_on_headers("HX-Request")
def incident_similar(request: HttpRequest, incident_id: int) -> HttpResponse:
    incident = _incident(request, incident_id)
    if not request.htmx:
        return redirect(reverse("incident_detail", args=[incident.pk]) + "#similar")
    ctx = {"incident": incident, "similar": collab.incident_similar(incident=incident, user=request.user),
           "causes": collab.incident_root_causes(incident=incident)}
    return render(request, "kb/_activity_similar.html", ctx)


# ---------------------------------------------------------------- runbook field notes


def _user_teams(user) -> Any:
    return Team.objects.filter(memberships__user=user).order_by("name").distinct()


def _notes_ctx(request: HttpRequest, runbook: Runbook, form: RunbookNoteForm | None = None,
               errors: list[str] | None = None) -> dict[str, Any]:
    teams = _user_teams(request.user)
    admin_of = set(Team.objects.filter(memberships__user=request.user, memberships__role="admin")
                   .values_list("pk", flat=True))
    notes = list(collab.runbook_note_list(runbook=runbook, user=request.user))
    for n in notes:
        n.can_edit = n.author_id == request.user.pk or n.team_id in admin_of
    return {"runbook": runbook, "notes": notes, "teams": list(teams),
            "form": form or RunbookNoteForm(teams=teams), "errors": errors or [],
            "stats": collab.runbook_feedback_stats(slug=runbook.slug, user=request.user)}


@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def runbook_notes(request: HttpRequest, slug: str) -> HttpResponse:
    runbook = get_object_or_404(Runbook, slug=slug)   # runbooks are shared; notes are per team
    if request.method == "GET":
        if not request.htmx:
            return redirect(reverse("runbook_detail", args=[runbook.slug]) + "#field-notes")
        return render(request, "kb/_field_notes.html", _notes_ctx(request, runbook))
    form = RunbookNoteForm(request.POST, teams=_user_teams(request.user))
    errors: list[str] = []
    if form.is_valid():
        try:
            collab.runbook_note_create(runbook=runbook, team=form.cleaned_data["team"], author=request.user,
                                       body=form.cleaned_data["body"])
        except ValidationError as exc:
            errors = _errors(exc)
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
    if not collab.runbook_note_can_edit(note=note, user=request.user):
        raise PermissionDenied("Only the author or a team admin edits a note.")
    errors: list[str] = []
    if request.method == "POST":
        form = AnnotationForm(request.POST)
        if form.is_valid():
            try:
                collab.runbook_note_edit(note=note, user=request.user, body=form.cleaned_data["body"])
            except ValidationError as exc:
                errors = _errors(exc)
            else:
                if request.htmx:
                    return render(request, "kb/_field_notes.html", _notes_ctx(request, note.runbook))
                return redirect(reverse("runbook_detail", args=[note.runbook.slug]) + "#field-notes")
        else:
            errors = [e for es in form.errors.values() for e in es]
    else:
        form = AnnotationForm(initial={"body": note.body})
    ctx = {"a": note, "form": form, "errors": errors, "action": reverse("runbook_note_edit", args=[note.pk]),
           "note": True, "cancel_url": reverse("runbook_notes", args=[note.runbook.slug])}
    if request.htmx:
        return render(request, "kb/_annotation_form.html", ctx)
    return render(request, "kb/_annotation_edit_page.html", ctx, status=400 if errors else 200)


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


# ---------------------------------------------------------------- notifications


@require_GET
def notification_list(request: HttpRequest) -> HttpResponse:
    ctx = {"notifications": notification_list_service(user=request.user)}
    return render(request, "kb/notifications.html", ctx)


@require_POST
def notification_read(request: HttpRequest) -> HttpResponse:
    ids = [int(i) for i in request.POST.getlist("id") if i.isdigit()] or None
    notification_mark_read(user=request.user, ids=ids)
    return redirect("notification_list")


@require_GET
def notification_go(request: HttpRequest, pk: int) -> HttpResponse:
    url = notification_open(user=request.user, pk=pk)
    if url is None:
        raise Http404("No such notification.")
    if not url_has_allowed_host_and_scheme(url, allowed_hosts=set()):
        url = reverse("notification_list")
    return redirect(url)
