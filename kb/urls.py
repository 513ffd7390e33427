from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path

from kb.views import governance, runbooks, search, symptoms

# Every URL needs a login (LoginRequiredMiddleware in settings); views that
# must answer anonymous requests (token API, login) opt out explicitly.
urlpatterns = [
    path("", runbooks.home, name="home"),
    path("runbooks/", runbooks.runbook_list, name="runbook_list"),
    path("runbooks/new/", governance.runbook_new, name="runbook_new"),
    path("runbooks/<slug:slug>/", runbooks.runbook_detail, name="runbook_detail"),
    path("runbooks/<slug:slug>/publish/", governance.runbook_publish, name="runbook_publish"),
    path("runbooks/<slug:slug>/overlay/drop/", governance.runbook_overlay_drop, name="runbook_overlay_drop"),
    path("proposals/", governance.proposal_list, name="proposal_list"),
    path("proposals/<int:pk>/", governance.proposal_detail, name="proposal_detail"),
    path("proposals/symptoms/<int:pk>/", governance.symptom_proposal_detail, name="symptom_proposal_detail"),
    path("runbooks/<slug:slug>/edit/", runbooks.runbook_edit, name="runbook_edit"),
    path("runbooks/<slug:slug>/history/", runbooks.runbook_history, name="runbook_history"),
    path("runbooks/<slug:slug>/raw/", runbooks.runbook_raw, name="runbook_raw"),
    path("symptoms/<slug:symptom>/", symptoms.symptom_detail, name="symptom_detail"),
    path("symptoms/<slug:symptom>/edit/", symptoms.symptom_edit, name="symptom_edit"),
    path("symptoms/<slug:symptom>/overlay/drop/", symptoms.symptom_overlay_drop_view, name="symptom_overlay_drop"),
    re_path(r"^search/?$", search.search, name="search"),  # /search?q=... and /search/
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(redirect_authenticated_user=True),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    # Incident pages, and the upload/analysis pipeline with its token API.
    path("", include("kb.urls_incidents")),
    path("", include("kb.urls_pipeline")),
    path("", include("kb.urls_collab")),
    path("", include("kb.urls_teams")),
]
