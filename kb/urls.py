from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path

from kb.views import runbooks, search, symptoms

# Every URL needs a login (LoginRequiredMiddleware in settings); views that
# must answer anonymous requests (token API, login) opt out explicitly.
urlpatterns = [
    path("", runbooks.home, name="home"),
    path("runbooks/", runbooks.runbook_list, name="runbook_list"),
    path("runbooks/<slug:slug>/", runbooks.runbook_detail, name="runbook_detail"),
    path("runbooks/<slug:slug>/edit/", runbooks.runbook_edit, name="runbook_edit"),
    path("runbooks/<slug:slug>/history/", runbooks.runbook_history, name="runbook_history"),
    path("runbooks/<slug:slug>/raw/", runbooks.runbook_raw, name="runbook_raw"),
    path("symptoms/<slug:symptom>/", symptoms.symptom_detail, name="symptom_detail"),
    path("symptoms/<slug:symptom>/edit/", symptoms.symptom_edit, name="symptom_edit"),
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
