from __future__ import annotations

from django.urls import path

from kb.views import baselines, drafts, incidents

urlpatterns = [
    path("incidents/", incidents.incident_list, name="incident_list"),
    path("incidents/new/", incidents.incident_create, name="incident_create"),
    path("incidents/<int:pk>/", incidents.incident_detail, name="incident_detail"),
    path("incidents/<int:pk>/update/", incidents.incident_update, name="incident_update"),
    path("incidents/<int:pk>/status/", incidents.incident_quick_status, name="incident_quick_status"),
    path("analyses/<int:pk>/", incidents.analysis_detail, name="analysis_detail"),
    path("analyses/<int:pk>/context/", incidents.analysis_context, name="analysis_context"),
    path("analyses/<int:pk>/leads/<int:rank>/draft/", drafts.lead_draft_edit, name="lead_draft"),
    path("analyses/<int:pk>/healthy/", baselines.analysis_healthy, name="analysis_healthy"),
    path("analyses/<int:pk>/reanalyze-baseline/", baselines.analysis_reanalyze_baseline,
         name="analysis_reanalyze_baseline"),
]
