"""Admin: teams and memberships are managed here; runbook content is not.

Runbook text is edited on the site's edit page (or in runbooks/*.md + sync),
where it is validated and every save becomes a revision. Here a runbook's
content is read-only; only its owning team can be changed.
"""

from __future__ import annotations

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from kb.models import Membership, Runbook, RunbookRevision, RunbookSymptom, Symptom, Team


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1
    autocomplete_fields = ["user"]


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "created"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "team", "role", "created"]
    list_filter = ["role", "team"]
    search_fields = ["user__username", "team__name"]
    autocomplete_fields = ["user", "team"]


class RevisionInline(admin.TabularInline):
    model = RunbookRevision
    fields = ["number", "author", "created", "message"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Runbook)
class RunbookAdmin(admin.ModelAdmin):
    list_display = ["slug", "title", "severity", "components", "team", "overlay_of", "published", "updated"]
    list_filter = ["severity", "team", "published"]
    search_fields = ["slug", "title", "summary"]
    fields = ["slug", "title", "severity", "components", "summary", "team", "overlay_of", "published", "updated",
              "site_links"]
    # Who owns a row decides who sees it (kb.selectors.catalog): not changed here. `published`
    # is the maintainers' to set, as on the runbook page.
    readonly_fields = ["slug", "title", "severity", "components", "summary", "team", "overlay_of", "updated",
                       "site_links"]
    inlines = [RevisionInline]

    def has_add_permission(self, request) -> bool:
        return False  # runbooks come from files (sync_runbooks)

    @admin.display(description="On the site")
    def site_links(self, obj: Runbook) -> str:
        return format_html(
            '<a href="{}">view</a> · <a href="{}">edit</a> · <a href="{}">history</a>',
            reverse("runbook_detail", args=[obj.slug]),
            reverse("runbook_edit", args=[obj.slug]),
            reverse("runbook_history", args=[obj.slug]),
        )


class SymptomUseInline(admin.TabularInline):
    model = RunbookSymptom
    fields = ["runbook", "role", "weight"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Symptom)
class SymptomAdmin(admin.ModelAdmin):
    list_display = ["id", "title"]
    search_fields = ["id", "title"]
    readonly_fields = ["id", "title", "definition"]
    inlines = [SymptomUseInline]

    def has_add_permission(self, request) -> bool:
        return False
