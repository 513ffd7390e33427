from __future__ import annotations

from django.urls import path

from kb.api import api
from kb.views import pipeline

urlpatterns = [
    path("incidents/<int:incident_id>/upload/", pipeline.incident_upload, name="incident_upload"),
    path("incidents/<int:incident_id>/upload/uri/", pipeline.incident_upload_uri, name="incident_upload_uri"),
    path("analyses/<int:analysis_id>/progress/", pipeline.analysis_progress, name="analysis_progress"),
    path("analyses/<int:analysis_id>/reanalyze/", pipeline.analysis_reanalyze, name="analysis_reanalyze"),
    # The token API: authenticates itself (401), outside the login middleware (LOGIN_EXEMPT_PREFIXES).
    path("api/v1/", api.urls),
]
