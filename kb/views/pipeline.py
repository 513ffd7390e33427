"""Web side of the pipeline: upload a bundle to an incident, watch its analysis.

    GET/POST /incidents/<id>/upload/        the form; a POST stores the bundle and queues an analysis
    GET      /analyses/<id>/progress/       the progress partial htmx polls every second until done
    POST     /analyses/<id>/reanalyse/      a fresh analysis of the same bundle (after runbooks changed)

The page works without JavaScript (a plain multipart POST, then a redirect);
static/kb-upload.js sends the same POST with XMLHttpRequest to show a real
upload progress bar.
"""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from kb.access import get_visible_or_404, visible
from kb.models import Analysis, Incident
from kb.services.analyses import analysis_is_waiting, analysis_reanalyse as analysis_reanalyse_service
from kb.services.analyses import analysis_start
from kb.services.bundles import bundle_store
from kb.services.upload_files import upload_as_one
from kb.uploads import human_bytes, upload_refusal


class _MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class _MultipleFileField(forms.FileField):
    """Every file of an <input type=file multiple> (Django's documented recipe)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", _MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        one = super().clean
        if isinstance(data, (list, tuple)) and data:
            return [one(d, initial) for d in data]
        return [one(data or None, initial)]            # nothing sent: "This field is required"


class BundleUploadForm(forms.Form):
    file = _MultipleFileField(
        label="Log bundle",
        help_text="An archive (.zip, .tar, .tar.gz, .tgz, .tar.bz2, .tar.xz, .gz), a log file, several "
                  "files, or a folder dropped here: several become one bundle of several hosts.",
    )


def _url_or(name: str, args: list, fallback: str) -> str:
    """A page another module may provide; a plain path until it does."""
    try:
        return reverse(name, args=args)
    except NoReverseMatch:
        return fallback


def _progress_page(incident: Incident, analysis: Analysis) -> str:
    return f"{reverse('incident_upload', args=[incident.id])}?analysis={analysis.id}"


def _is_xhr(request: HttpRequest) -> bool:
    return request.headers.get("X-Requested-With") == "XMLHttpRequest"


@require_http_methods(["GET", "POST"])
def incident_upload(request: HttpRequest, incident_id: int) -> HttpResponse:
    incident = get_visible_or_404(Incident.objects.select_related("team"), request.user, id=incident_id)
    form, error, status = BundleUploadForm(), "", 200
    if request.method == "POST":
        form = BundleUploadForm(request.POST, request.FILES)   # parses the body: the handler may refuse it
        refusal = upload_refusal(request)
        if not refusal and form.is_valid():
            with transaction.atomic():
                uploaded = upload_as_one(files=form.cleaned_data["file"], paths=request.POST.getlist("path"))
                bundle = bundle_store(incident=incident, user=request.user, uploaded_file=uploaded)
                analysis = analysis_start(bundle=bundle)
            page = _progress_page(incident, analysis)
            if _is_xhr(request):
                return JsonResponse({"analysis": analysis.id, "redirect": page})
            return redirect(page)
        status = 413 if refusal else 400
        error = refusal or "; ".join(e for errors in form.errors.values() for e in errors)
        if _is_xhr(request):
            return JsonResponse({"error": error}, status=status)
    analysis = None
    if request.GET.get("analysis", "").isdigit():
        analysis = (visible(Analysis.objects.select_related("bundle"), request.user)
                    .filter(id=int(request.GET["analysis"]), bundle__incident=incident).first())
    ctx = {
        "incident": incident,
        "incident_url": _url_or("incident_detail", [incident.id], f"/incidents/{incident.id}/"),
        "form": form,
        "error": error,
        "max_bytes": settings.UPLOAD_MAX_BYTES,
        "max_human": human_bytes(settings.UPLOAD_MAX_BYTES),
    }
    if analysis is not None:
        ctx.update(_progress_context(analysis))
    return render(request, "kb/upload.html", ctx, status=status)


def _progress_context(analysis: Analysis) -> dict:
    return {
        "analysis": analysis,
        "waiting": analysis_is_waiting(analysis),
        "detail_url": _url_or("analysis_detail", [analysis.id], f"/analyses/{analysis.id}/"),
        "finding_count": analysis.findings.count() if analysis.status == Analysis.Status.DONE else 0,
    }


@require_GET
def analysis_progress(request: HttpRequest, analysis_id: int) -> HttpResponse:
    analysis = get_visible_or_404(Analysis.objects.select_related("bundle"), request.user, id=analysis_id)
    return render(request, "kb/_analysis_progress.html", _progress_context(analysis))


@require_POST
def analysis_reanalyse(request: HttpRequest, analysis_id: int) -> HttpResponse:
    old = get_visible_or_404(Analysis.objects.select_related("bundle__incident"), request.user, id=analysis_id)
    new = analysis_reanalyse_service(analysis=old)
    return redirect(_progress_page(old.bundle.incident, new))
