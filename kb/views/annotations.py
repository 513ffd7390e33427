"""Annotations: notes on an incident, on one finding, or on one log line.

    GET/POST /incidents/<id>/annotations/                  notes on an incident (the panel partial)
    GET/POST /analyses/<id>/annotations/?slug=|?path=&line= notes on a finding or on one log line
    GET      /annotations/<id>/                            permalink (htmx: the item partial)
    GET/POST /annotations/<id>/edit/   POST /annotations/<id>/delete/

Partials answer htmx requests; a plain request (no JavaScript) gets a redirect
to the page the partial lives on. Every object comes through kb.access, so
another team's ids are 404s; CSRF applies to every POST.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from kb.access import admin_team_ids, annotation_can_edit, authored_can_edit, get_visible_or_404
from kb.forms import AnnotationForm
from kb.lib.timeline import evidence_anchor
from kb.models import Analysis, Annotation, Incident
from kb.selectors.collab import annotation_for_finding, annotation_list, annotation_target_label
from kb.services import collab
from kb.views.collab import analysis_or_404, back_to, form_errors, incident_or_404, note_edit_form

MAX_LINE_NUMBER = 10**9


def _annotation(request: HttpRequest, pk: int) -> Annotation:
    return get_visible_or_404(
        Annotation.objects.select_related("author", "incident", "analysis", "team"), request.user, pk=pk
    )


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


def _decorate(annotations, user) -> list[Annotation]:
    admin_of = admin_team_ids(user)
    out = []
    for a in annotations:
        a.can_edit = authored_can_edit(a, user, admin_of)
        a.label = annotation_target_label(a)
        a.permalink = annotation_url(a)
        if a.kind == "evidence":
            a.context_url = (reverse("analysis_context", args=[a.analysis_id])
                             + "?" + _query(path=a.evidence_path, line=a.evidence_line))
        out.append(a)
    return out


def _query(**params: Any) -> str:
    return urlencode(params)


def _panel(request: HttpRequest, *, incident: Incident, analysis: Analysis | None = None, slug: str = "",
           path: str = "", line: int | None = None, form: AnnotationForm | None = None,
           errors: list[str] | None = None) -> dict[str, Any]:
    """Context of the annotation panel (_annotations.html) for one target."""
    if analysis is None:
        annotations = annotation_list(incident=incident)
        key, title = f"notes-incident-{incident.pk}", "Everything noted on this incident"
        post_url = reverse("incident_annotations", args=[incident.pk])
    elif path:
        annotations = annotation_list(analysis=analysis, evidence_path=path, evidence_line=line)
        key, title = f"notes-a{analysis.pk}-{evidence_anchor(path, line)}", f"Notes on {path}:{line}"
        post_url = reverse("analysis_annotations", args=[analysis.pk]) + "?" + _query(path=path, line=line)
    else:
        annotations = annotation_for_finding(analysis=analysis, slug=slug)
        key, title = _finding_key(analysis.pk, slug), "Notes on this finding"
        post_url = reverse("analysis_annotations", args=[analysis.pk]) + "?" + _query(slug=slug)
    ctx = {
        "panel": {"key": key, "title": title, "post_url": post_url, "incident": incident, "analysis": analysis,
                  "slug": slug, "path": path, "line": line,
                  "anchor": evidence_anchor(path, line) if path else ""},
        "annotations": _decorate(annotations, request.user),
        "form": form or AnnotationForm(),
        "errors": errors or [],
    }
    if path:
        ctx["panel"]["context_url"] = reverse("analysis_context", args=[analysis.pk]) + "?" + _query(
            path=path, line=line)
    return ctx


@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def incident_annotations(request: HttpRequest, incident_id: int) -> HttpResponse:
    incident = incident_or_404(request, incident_id)
    return _annotations(request, incident=incident)


@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def analysis_annotations(request: HttpRequest, analysis_id: int) -> HttpResponse:
    analysis = analysis_or_404(request, analysis_id)
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
            errors = form_errors(exc)
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
        return back_to(request, reverse("incident_detail", args=[incident.pk]))
    messages.success(request, "Note added.")
    return redirect(annotation_url(annotation))


@require_GET
@vary_on_headers("HX-Request")
def annotation_permalink(request: HttpRequest, pk: int) -> HttpResponse:
    annotation = _annotation(request, pk)
    if request.htmx:   # "Cancel" of an edit: the item again
        return render(request, "kb/_annotation.html",
                      {"a": _decorate([annotation], request.user)[0]})
    return redirect(annotation_url(annotation))


@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def annotation_edit(request: HttpRequest, pk: int) -> HttpResponse:
    annotation = _annotation(request, pk)
    if not annotation_can_edit(annotation=annotation, user=request.user):
        raise PermissionDenied("Only the author or a team admin edits an annotation.")

    def saved() -> HttpResponse:
        if request.htmx:
            return render(request, "kb/_annotation.html", {"a": _decorate([annotation], request.user)[0]})
        messages.success(request, "Note saved.")
        return redirect(annotation_url(annotation))

    return note_edit_form(
        request, annotation, saved=saved,
        save=lambda body: collab.annotation_edit(annotation=annotation, user=request.user, body=body),
        action=reverse("annotation_edit", args=[annotation.pk]))


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
    return back_to(request, back)
