"""The token HTTP API (docs/contract.md §3), mounted at /api/v1/ by kb/urls_pipeline.py.

    POST /api/v1/analyses          multipart file=<bundle>[, incident=<id> | team=<slug>] -> 202 {"id", "url"}
    POST /api/v1/analyses/uri      uri=<file://, hdfs://, s3a://>[, incident=<id> | team=<slug>] (team admins) -> 202
    GET  /api/v1/analyses/{id}     -> {"id", "status", "progress", "error", "result"}
    GET  /api/v1/openapi.json      the OpenAPI document (public)

`Authorization: Bearer <token>` only (a token in the query string is ignored);
no valid token -> 401; another team's analysis or incident -> 404.
"""

from __future__ import annotations

from functools import wraps
from typing import Any, Literal, Optional

from django.http import HttpRequest, JsonResponse
from django.urls import URLPattern, path, reverse
from ninja import File, Form, NinjaAPI, Schema, Status
from ninja.files import UploadedFile
from ninja.security import HttpBearer
from pydantic import TypeAdapter

from analyzers.result import Result
from kb.access import get_visible_or_404
from kb.models import Analysis, Incident, Team
from kb.services.analyses import analysis_upload
from kb.services.bundle_uris import UriRefused, analysis_from_uri
from kb.services.bundles import NoTeam, bundle_default_team
from kb.services.storage import QuotaExceeded
from kb.services.tokens import token_authenticate
from kb.services.upload_files import upload_as_one
from kb.uploads import upload_refusal


class BearerToken(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str):
        if not hasattr(request, "_kb_api_user"):
            request._kb_api_user = token_authenticate(secret=token)
        return request._kb_api_user


def _token_first(view):
    """Authenticate before anything else, so that a request without a valid
    token gets 401 whatever it asks (no 405 or 404 that would tell what exists)."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs):
        if BearerToken()(request) is None:
            return JsonResponse({"detail": "Unauthorized"}, status=401)
        return view(request, *args, **kwargs)

    wrapped.csrf_exempt = True   # token auth: no cookies, no CSRF
    return wrapped


# Errors any operation can answer, all JSON {"detail": ...} (kb.middleware.ApiJsonErrorsMiddleware).
COMMON_ERRORS = {
    "400": "bad request (e.g. too many file parts, a form field over 2.5 MB)", "401": "no valid token",
    "404": "no such object, or another team's", "405": "method not allowed",
    "413": "upload too large, or the team's storage quota (KB_TEAM_STORAGE_BYTES) is full",
    "429": "too many requests: login attempts, or the team's analyses per hour (KB_TEAM_ANALYSES_PER_HOUR; "
           "Retry-After says when)", "500": "server error",
    "503": "database busy (locked): retry after the Retry-After header's seconds",
}


class KbAPI(NinjaAPI):
    def get_openapi_schema(self, **kwargs):
        """The document, with `result` described by analyzers/result.py (the typed
        result classes) rather than as any object. The response itself is not
        validated against them: it is the stored result, byte for byte."""
        schema = super().get_openapi_schema(**kwargs)
        described = TypeAdapter(Result).json_schema(ref_template="#/components/schemas/{model}")
        components = schema["components"]["schemas"]
        components.update(described.pop("$defs"))
        components["Result"] = described
        result = components["AnalysisOut"]["properties"]["result"]
        result.clear()
        result.update({"anyOf": [{"$ref": "#/components/schemas/Result"}, {"type": "null"}],
                       "description": "the result (docs/contract.md §2), when done"})
        # Every operation lists the JSON errors it can answer (kb.middleware.ApiJsonErrorsMiddleware).
        body = {"application/json": {"schema": {"type": "object", "properties": {"detail": {"type": "string"}},
                                                "required": ["detail"]}}}
        for operations in schema["paths"].values():
            for operation in operations.values():
                for code, description in COMMON_ERRORS.items():
                    operation["responses"].setdefault(code, {"description": description, "content": body})
        return schema

    def _get_urls(self):
        # django-ninja's root view is a bare 404; ours lists the endpoints.
        urls = [u for u in super()._get_urls() if u.name != "api-root"] + [path("", api_root, name="api-root")]
        return [u if u.name == "openapi-json" else URLPattern(u.pattern, _token_first(u.callback), u.default_args,
                                                              u.name)
                for u in urls]


api = KbAPI(
    title="kb API",
    version="1",
    description="Upload a log bundle, then poll its analysis. Authorization: Bearer <token> "
                "(`python manage.py createtoken USERNAME`).",
    urls_namespace="api-v1",
    docs_url=None,   # the Swagger page loads scripts from a CDN, which the CSP refuses
    auth=BearerToken(),
)


class Message(Schema):
    detail: str


class AnalysisCreated(Schema):
    id: int
    url: str


class AnalysisOut(Schema):
    id: int
    status: Literal["queued", "running", "done", "failed"]
    progress: int
    error: Optional[str]
    result: Optional[dict[str, Any]]


def analysis_url(analysis_id: int) -> str:
    return f"{reverse('api-v1:api-root')}analyses/{analysis_id}"


def api_root(request: HttpRequest) -> JsonResponse:
    root = reverse("api-v1:api-root")
    return JsonResponse({"analyses": f"{root}analyses", "openapi": f"{root}openapi.json"})


@api.post(
    "/analyses",
    response={202: AnalysisCreated, 400: Message, 403: Message, 404: Message, 413: Message, 429: Message},
    summary="Upload a bundle and start its analysis",
    # `file` is optional in the signature only so that a refused upload gets 413, not 422.
    openapi_extra={"requestBody": {"content": {"multipart/form-data": {"schema": {"required": ["file"]}}}}},
)
def analysis_create(request: HttpRequest, file: File[UploadedFile] = None, incident: Form[int] = None,
                    team: Form[str] = None):
    """`file`: an archive (.zip, .tar, .tar.gz/.tgz, .tar.bz2, .tar.xz, .gz) or a log file;
    repeat `file` to send several, which become one bundle (optional `path` fields, one per
    file in the same order, give each file's path in a folder).
    `incident`: the incident to attach it to; without it, a new incident titled after
    the file is opened in `team` (a team's slug; 403 unless you are a member) or your first
    team. Poll the returned `url`."""
    refusal = upload_refusal(request)
    if refusal:
        return Status(413, {"detail": refusal})
    if file is None:
        return Status(400, {"detail": "send the bundle as the multipart form field `file`"})
    user = request.auth
    # Reads before the transaction, writes inside it (see bundle_store on SQLite locks).
    target, team, refused = _where_to_open(user, incident, team)
    if refused:
        return refused
    uploaded = upload_as_one(files=request.FILES.getlist("file") or [file], paths=request.POST.getlist("path"))
    try:
        analysis = analysis_upload(user=user, uploaded_file=uploaded, incident=target, team=team)
    except QuotaExceeded as exc:   # the team's storage (413) or analyses per hour (429): nothing stored
        headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after else {}
        return JsonResponse({"detail": str(exc)}, status=exc.status, headers=headers)
    return Status(202, {"id": analysis.id, "url": analysis_url(analysis.id)})


@api.post("/analyses/uri", response={202: AnalysisCreated, 400: Message, 403: Message, 404: Message, 429: Message},
          summary="Start the analysis of a bundle where it already is (team admins)")
def analysis_create_from_uri(request: HttpRequest, uri: Form[str], incident: Form[int] = None,
                             team: Form[str] = None):
    """`uri`: file:///path, hdfs://namenode/path or s3a://bucket/path, under the roots the
    server allows (KB_BUNDLE_URI_ROOTS); read where it is, never uploaded. Only an admin of
    the team may name one. `incident`, `team`: as for an upload."""
    user = request.auth
    target, team, refused = _where_to_open(user, incident, team)
    if refused:
        return refused
    try:
        analysis = analysis_from_uri(user=user, uri=uri, incident=target, team=team)
    except (UriRefused, QuotaExceeded) as exc:   # nothing stored
        headers = {"Retry-After": str(exc.retry_after)} if getattr(exc, "retry_after", None) else {}
        return JsonResponse({"detail": str(exc)}, status=exc.status, headers=headers)
    return Status(202, {"id": analysis.id, "url": analysis_url(analysis.id)})


def _where_to_open(user, incident: int | None, team_slug: str | None):
    """(incident, team, refusal) for a new analysis: the visible incident named, else a new
    incident in the named team (403 unless a member; the same answer for a team that does not
    exist, so no existence leak), else in the user's first team."""
    if incident is not None:
        return get_visible_or_404(Incident.objects, user, id=incident), None, None
    if team_slug is not None:
        team = Team.objects.filter(slug=team_slug, memberships__user=user).first()
        if team is None:
            return None, None, Status(403, {"detail": "you are not a member of that team"})
        return None, team, None
    try:
        return None, bundle_default_team(user=user), None
    except NoTeam:
        return None, None, Status(403, {"detail": "you belong to no team: ask an admin to add you to one"})


@api.get("/analyses/{analysis_id}", response={200: AnalysisOut, 404: Message},
         summary="An analysis: status, progress 0-100, error, and the result when done")
def analysis_get(request: HttpRequest, analysis_id: int):
    analysis = get_visible_or_404(Analysis.objects.all(), request.auth, id=analysis_id)
    done = analysis.status == Analysis.Status.DONE
    return {
        "id": analysis.id,
        "status": analysis.status,
        "progress": analysis.progress,
        "error": analysis.error or None,
        "result": analysis.result if done else None,
    }
