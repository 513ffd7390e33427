from __future__ import annotations

from typing import Any, Callable

from django.conf import settings
from django.contrib.auth.middleware import LoginRequiredMiddleware as DjangoLoginRequiredMiddleware
from django.db import OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError


class LoginRequiredMiddleware(DjangoLoginRequiredMiddleware):
    """Django's LoginRequiredMiddleware (every view needs a session login
    unless decorated with @login_not_required), plus path prefixes that
    authenticate themselves: the token API answers 401, never a redirect
    to the login page (settings.LOGIN_EXEMPT_PREFIXES)."""

    def process_view(
        self, request: HttpRequest, view_func: Callable[..., Any], view_args: Any, view_kwargs: Any
    ) -> HttpResponse | None:
        if request.path_info.startswith(tuple(settings.LOGIN_EXEMPT_PREFIXES)):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)


class ContentSecurityPolicyMiddleware:
    """A CSP header on every response (defence in depth behind the Markdown
    sanitiser and autoescaping): scripts only from our own static files.
    Styles allow inline because htmx injects its indicator style."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if settings.CONTENT_SECURITY_POLICY:
            response.headers.setdefault("Content-Security-Policy", settings.CONTENT_SECURITY_POLICY)
        return response


class ServerHeaderMiddleware:
    """`Server: kb` on every response the app makes: the development server (`make run`)
    would otherwise name its Python version (WSGIServer/0.2 CPython/3.x.y). gunicorn
    sends its own `Server: gunicorn` instead, which names no version."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers["Server"] = "kb"
        return response


class ApiJsonErrorsMiddleware:
    """Every error under /api/ answers JSON `{"detail": ...}`, whoever made it: Django's
    own 400 (too many file parts, a field over DATA_UPLOAD_MAX_MEMORY_SIZE), 404 of an
    unknown path, 405, 500; and a database that stays locked past its timeout (SQLite
    "database is locked", PostgreSQL lock timeout) is 503 with Retry-After, as it passes."""

    RETRY_AFTER_SECONDS = 5

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (request.path_info.startswith("/api/") and response.status_code >= 400
                and not response.get("Content-Type", "").startswith("application/json")):
            json_response = JsonResponse({"detail": response.reason_phrase}, status=response.status_code)
            for header in ("Allow", "Retry-After", "WWW-Authenticate"):
                if header in response:
                    json_response[header] = response[header]
            return json_response
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not request.path_info.startswith("/api/"):
            return None
        if isinstance(exception, MultiPartParserError):
            # Django would answer a bare 400; say what could not be read (nothing was stored).
            return JsonResponse({"detail": f"the multipart body could not be read: {exception} (a part's "
                                           "headers, such as a file name, are too long, or the body is "
                                           "malformed); nothing was stored"}, status=400)
        if isinstance(exception, OperationalError) and "lock" in str(exception).lower():
            response = JsonResponse({"detail": "the database is busy: retry later"}, status=503)
            response["Retry-After"] = str(self.RETRY_AFTER_SECONDS)
            return response
        return None
