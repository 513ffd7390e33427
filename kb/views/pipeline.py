"""Web side of the pipeline: upload a bundle to an incident, watch its analysis.

    GET/POST /incidents/<id>/upload/        the form; a POST stores the bundle and queues an analysis
    POST     /incidents/<id>/upload/uri/    a team admin names a bundle by URI instead (kb.services.bundle_uris)
    GET      /analyses/<id>/progress/       the progress partial htmx polls every second until done
    POST     /analyses/<id>/reanalyze/      a fresh analysis of the same bundle (after runbooks changed)

The page works without JavaScript (a plain multipart POST, then a redirect);
static/kb-upload.js sends the same POST with XMLHttpRequest to show a real
upload progress bar.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from analyzers.model import BundleError
from kb.access import get_visible_or_404, team_is_admin, visible
from kb.forms import BundleUploadForm
from kb.models import Analysis, Incident
from kb.services import analyses
from kb.services.bundle_uris import UriRefused, analysis_from_uri, uris_enabled
from kb.services.storage import QuotaExceeded
from kb.services.upload_files import upload_as_one
from kb.uploads import human_bytes, upload_refusal


def _progress_page(incident: Incident, analysis: Analysis) -> str:
    return f"{reverse('incident_upload', args=[incident.id])}?analysis={analysis.id}"


def _is_xhr(request: HttpRequest) -> bool:
    return request.headers.get("X-Requested-With") == "XMLHttpRequest"


@require_http_methods(["GET", "POST"])
def incident_upload(request: HttpRequest, incident_id: int) -> HttpResponse:
    incident = get_visible_or_404(Incident.objects.select_related("team"), request.user, id=incident_id)
    form, error, status, quota_status = BundleUploadForm(), "", 200, None
    if request.method == "POST":
        form = BundleUploadForm(request.POST, request.FILES)   # parses the body: the handler may refuse it
        refusal = upload_refusal(request)
        if not refusal and form.is_valid():
            uploaded = upload_as_one(files=form.cleaned_data["file"], paths=request.POST.getlist("path"))
            try:
                analysis = analyses.analysis_upload(incident=incident, user=request.user, uploaded_file=uploaded,
                                                    healthy=form.cleaned_data["healthy"])
            except QuotaExceeded as exc:      # the team's storage (413) or analyses per hour (429)
                refusal, quota_status = str(exc), exc.status
            else:
                page = _progress_page(incident, analysis)
                if _is_xhr(request):
                    return JsonResponse({"analysis": analysis.id, "redirect": page})
                return redirect(page)
        status = quota_status if refusal and quota_status else 413 if refusal else 400
        error = refusal or "; ".join(e for errors in form.errors.values() for e in errors)
        if _is_xhr(request):
            return JsonResponse({"error": error}, status=status)
    return _upload_page(request, incident, form, error, status)


def _upload_page(request: HttpRequest, incident: Incident, form: BundleUploadForm, error: str, status: int,
                 uri_error: str = "") -> HttpResponse:
    analysis = None
    if request.GET.get("analysis", "").isdigit():
        analysis = (visible(Analysis.objects.select_related("bundle"), request.user)
                    .filter(id=int(request.GET["analysis"]), bundle__incident=incident).first())
    ctx = {
        "incident": incident,
        "incident_url": reverse("incident_detail", args=[incident.id]),
        "form": form,
        "error": error,
        "max_bytes": settings.UPLOAD_MAX_BYTES,
        "max_human": human_bytes(settings.UPLOAD_MAX_BYTES),
        # The URI field only for the team's admins, and only where KB_BUNDLE_URI_ROOTS lists roots.
        "uri_form": uris_enabled() and team_is_admin(request.user, incident.team),
        "uri_error": uri_error,
        "uri": request.POST.get("uri", "") if uri_error else "",
    }
    if analysis is not None:
        ctx.update(progress_context(analysis))
    return render(request, "kb/upload.html", ctx, status=status)


@require_POST
def incident_upload_uri(request: HttpRequest, incident_id: int) -> HttpResponse:
    incident = get_visible_or_404(Incident.objects.select_related("team"), request.user, id=incident_id)
    try:
        analysis = analysis_from_uri(user=request.user, incident=incident, uri=request.POST.get("uri", ""))
    except (UriRefused, QuotaExceeded) as exc:   # said on the upload page; nothing was stored
        return _upload_page(request, incident, BundleUploadForm(), "", exc.status, uri_error=str(exc))
    return redirect(_progress_page(incident, analysis))


def progress_context(analysis: Analysis) -> dict:
    """What the progress partial (_analysis_progress.html) expects; the incident and analysis pages too."""
    return {
        "analysis": analysis,
        "waiting": analyses.analysis_is_waiting(analysis),
        "detail_url": reverse("analysis_detail", args=[analysis.id]),
        "finding_count": analysis.findings.count() if analysis.status == Analysis.Status.DONE else 0,
    }


@require_GET
def analysis_progress(request: HttpRequest, analysis_id: int) -> HttpResponse:
    analysis = get_visible_or_404(Analysis.objects.select_related("bundle"), request.user, id=analysis_id)
    return render(request, "kb/_analysis_progress.html", progress_context(analysis))


@require_POST
def analysis_reanalyze(request: HttpRequest, analysis_id: int) -> HttpResponse:
    old = get_visible_or_404(Analysis.objects.select_related("bundle__incident"), request.user, id=analysis_id)
    try:
        new = analyses.analysis_reanalyze(analysis=old)
    except (QuotaExceeded, BundleError) as exc:   # the hourly limit, or a pruned bundle: said on the page
        messages.error(request, str(exc))
        return redirect("incident_detail", pk=old.bundle.incident_id)
    return redirect(_progress_page(old.bundle.incident, new))
