from __future__ import annotations

from django.urls import path

from kb.views import annotations, collab

urlpatterns = [
    path("incidents/<int:incident_id>/annotations/", annotations.incident_annotations, name="incident_annotations"),
    path("incidents/<int:incident_id>/activity/", collab.incident_activity, name="incident_activity"),
    path("incidents/<int:incident_id>/follow/", collab.incident_follow, name="incident_follow"),
    path("incidents/<int:incident_id>/similar/", collab.incident_similar, name="incident_similar"),
    path("analyses/<int:analysis_id>/annotations/", annotations.analysis_annotations, name="analysis_annotations"),
    path("analyses/<int:analysis_id>/findings/<slug:slug>/feedback/", collab.finding_feedback,
         name="finding_feedback"),
    path("annotations/<int:pk>/", annotations.annotation_permalink, name="annotation_permalink"),
    path("annotations/<int:pk>/edit/", annotations.annotation_edit, name="annotation_edit"),
    path("annotations/<int:pk>/delete/", annotations.annotation_delete, name="annotation_delete"),
    path("runbooks/<slug:slug>/notes/", collab.runbook_notes, name="runbook_notes"),
    path("runbook-notes/<int:pk>/edit/", collab.runbook_note_edit, name="runbook_note_edit"),
    path("runbook-notes/<int:pk>/delete/", collab.runbook_note_delete, name="runbook_note_delete"),
    path("notifications/", collab.notification_list, name="notification_list"),
    path("notifications/read/", collab.notification_read, name="notification_read"),
    path("notifications/<int:pk>/", collab.notification_go, name="notification_go"),
]
