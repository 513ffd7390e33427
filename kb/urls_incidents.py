from __future__ import annotations

from django.urls import path

from kb.views import incidents

urlpatterns = [
    path("incidents/", incidents.incident_list, name="incident_list"),
    path("incidents/new/", incidents.incident_create, name="incident_create"),
    path("incidents/<int:pk>/", incidents.incident_detail, name="incident_detail"),
    path("incidents/<int:pk>/update/", incidents.incident_update, name="incident_update"),
    path("incidents/<int:pk>/status/", incidents.incident_quick_status, name="incident_quick_status"),
    path("analyses/<int:pk>/", incidents.analysis_detail, name="analysis_detail"),
    path("analyses/<int:pk>/context/", incidents.analysis_context, name="analysis_context"),
]
