"""Runbooks as rows. `meta` (the whole front matter) and `body` are the source
of truth; the other tables are derived from `meta` by
kb.services.runbooks.runbook_save on every save, for browsing and filtering.

Who owns a row (docs: kb/README.md "Runbook governance"):

- shipped: team and overlay_of empty, loaded from runbooks/ by sync_runbooks;
  changed only by the files or by a site maintainer (staff);
- a team overlay: overlay_of = the shipped row, team = the team whose edit it
  is; it replaces the shipped row for that team alone;
- a team runbook: team set, overlay_of empty; seen by its team, and by every
  team once a maintainer set `published`.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

SEVERITY_ORDER = ("critical", "high", "medium", "low")


class Runbook(models.Model):
    class Severity(models.TextChoices):
        LOW = "low", "Low"
        MEDIUM = "medium", "Medium"
        HIGH = "high", "High"
        CRITICAL = "critical", "Critical"

    # Unique among shipped and team runbooks; an overlay repeats its shipped row's slug.
    slug = models.SlugField(max_length=120)
    title = models.CharField(max_length=200)
    summary = models.TextField()
    # Comma-separated ("hdfs,flink"): filtered by whole token, portable across
    # SQLite and PostgreSQL (see kb.selectors.runbook_list).
    components = models.CharField(max_length=200)
    severity = models.CharField(max_length=10, choices=Severity.choices)
    meta = models.JSONField()
    body = models.TextField(blank=True)
    # The owning team (a team runbook or overlay); the shipped catalog has none. CASCADE:
    # a team's rows must never outlive it as shipped ones, visible to every team.
    team = models.ForeignKey("kb.Team", models.CASCADE, null=True, blank=True, related_name="runbooks")
    overlay_of = models.ForeignKey("self", models.CASCADE, null=True, blank=True, related_name="overlays")
    # A team runbook every team sees (set by a maintainer).
    published = models.BooleanField(default=False)
    # An overlay its team went back from (the shipped runbook is seen again): the row and its
    # revisions stay, so the history keeps every change and who made it; a new edit revives it.
    overlay_dropped = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["slug"]
        indexes = [
            # The home page lists recently changed runbooks.
            models.Index(fields=["-updated"], name="runbook_updated_idx"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["slug"], condition=models.Q(overlay_of__isnull=True),
                                    name="runbook_unique_slug"),
            models.UniqueConstraint(fields=["overlay_of", "team"], condition=models.Q(overlay_of__isnull=False),
                                    name="runbook_unique_overlay_per_team"),
        ]

    def __str__(self) -> str:
        return self.slug if self.overlay_of_id is None else f"{self.slug} (overlay of team {self.team_id})"

    @property
    def is_shipped(self) -> bool:
        return self.team_id is None and self.overlay_of_id is None

    @property
    def component_list(self) -> list[str]:
        return [c for c in self.components.split(",") if c]


class Symptom(models.Model):
    """A symptom of the library (runbooks/symptoms/<id>.yaml), used by runbooks by id,
    or a team's own symptom (team set) until published.
    Its definition is copied into each using runbook's `meta` (the form the
    engine reads) whenever the symptom or the runbook is saved."""

    id = models.CharField(max_length=120, primary_key=True)
    title = models.TextField()
    # patterns / fact / captures / level / examples / sources / description
    definition = models.JSONField(default=dict)
    # The owning team: a symptom drafted by a team (kb.services.drafts) is seen and
    # matched by that team alone until a maintainer publishes a runbook using it
    # (kb.selectors.catalog.symptom_catalog); the library from runbooks/ has none.
    team = models.ForeignKey("kb.Team", models.CASCADE, null=True, blank=True, related_name="symptoms")
    published = models.BooleanField(default=False)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.id


class FileRevision(models.Model):
    """One saved state of a file of the catalog, as written (the number counts per file)."""

    number = models.PositiveIntegerField()
    text = models.TextField()
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created = models.DateTimeField(auto_now_add=True)
    message = models.CharField(max_length=200, blank=True)

    class Meta:
        abstract = True


class SymptomRevision(FileRevision):
    """One saved state of a library symptom: the YAML file as written."""

    symptom = models.ForeignKey(Symptom, models.CASCADE, related_name="revisions")

    class Meta:
        ordering = ["symptom", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["symptom", "number"], name="symptomrevision_unique_number"),
        ]

    def __str__(self) -> str:
        return f"{self.symptom_id} r{self.number}"


class RunbookSymptom(models.Model):
    runbook = models.ForeignKey(Runbook, models.CASCADE, related_name="symptom_uses")
    symptom = models.ForeignKey(Symptom, models.CASCADE, related_name="uses")
    role = models.CharField(max_length=12)  # required | supporting | excluding
    weight = models.FloatField(default=0.0)
    where = models.JSONField(default=list, blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["runbook", "position"]
        constraints = [
            models.UniqueConstraint(fields=["runbook", "symptom"], name="runbooksymptom_unique"),
        ]


class Knob(models.Model):
    runbook = models.ForeignKey(Runbook, models.CASCADE, related_name="knobs")
    key = models.CharField(max_length=200, db_index=True)
    component = models.CharField(max_length=200, blank=True)
    file = models.CharField(max_length=200, blank=True)
    default = models.TextField(blank=True)
    defaults = models.JSONField(default=list, blank=True)  # [{versions, value}]
    recommended = models.TextField(blank=True)
    why = models.TextField(blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["runbook", "position"]


class Fix(models.Model):
    runbook = models.ForeignKey(Runbook, models.CASCADE, related_name="fixes")
    title = models.TextField()
    kind = models.CharField(max_length=12)  # mitigation | permanent | diagnosis
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["runbook", "position"]
        verbose_name_plural = "fixes"


class FixStep(models.Model):
    fix = models.ForeignKey(Fix, models.CASCADE, related_name="steps")
    text = models.TextField()
    command = models.TextField(blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["fix", "position"]


class Ticket(models.Model):
    runbook = models.ForeignKey(Runbook, models.CASCADE, related_name="tickets")
    key = models.CharField(max_length=120)  # the ticket id, e.g. HDFS-10549
    title = models.TextField()
    status = models.CharField(max_length=10)  # fixed | open | wontfix | unknown
    affected = models.CharField(max_length=200, blank=True)
    fixed_in = models.JSONField(default=list, blank=True)
    url = models.CharField(max_length=1000, blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["runbook", "position"]


class Reference(models.Model):
    runbook = models.ForeignKey(Runbook, models.CASCADE, related_name="references")
    title = models.TextField()
    url = models.CharField(max_length=1000)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["runbook", "position"]


class RunbookRevision(FileRevision):
    """One saved state of a runbook: the whole Markdown file as written."""

    runbook = models.ForeignKey(Runbook, models.CASCADE, related_name="revisions")

    class Meta:
        ordering = ["runbook", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["runbook", "number"], name="revision_unique_number"),
        ]

    def __str__(self) -> str:
        return f"{self.runbook.slug} r{self.number}"
