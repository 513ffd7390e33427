"""Changes a team asks the maintainers to make to the shipped catalog.

A team admin's edit of a shipped runbook is the team's overlay (a Runbook row
with overlay_of set, kb.models.runbooks); "propose to maintainers" also files
the text here, and a site maintainer (staff) accepts it with the diff shown,
which makes it the shipped runbook's next revision, or declines it.
A team admin's edit of a library symptom is the team's SymptomOverlay, and with
"propose" also a SymptomProposal.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from kb.models.runbooks import FileRevision, Runbook, Symptom
from kb.models.teams import Team


class Proposal(models.Model):
    """A team admin's edit of a shipped file, filed for the maintainers: the whole proposed text,
    the revision it was written against, and the maintainer's decision."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        ACCEPTED = "accepted", "Accepted"
        DECLINED = "declined", "Declined"

    author = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, related_name="+")
    text = models.TextField()                      # the whole proposed file
    message = models.CharField(max_length=200, blank=True)
    base_revision = models.PositiveIntegerField()  # the shipped revision it was written against
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    created = models.DateTimeField(auto_now_add=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True,
                                   related_name="+")
    decided = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["-created"]


class RunbookProposal(Proposal):
    runbook = models.ForeignKey(Runbook, models.CASCADE, related_name="proposals")  # the shipped row
    team = models.ForeignKey(Team, models.CASCADE, related_name="runbook_proposals")

    class Meta(Proposal.Meta):
        indexes = [models.Index(fields=["status", "-created"], name="proposal_status_created")]

    def __str__(self) -> str:
        return f"proposal {self.pk} for {self.runbook.slug} by team {self.team_id}"


class SymptomOverlay(models.Model):
    """A team's own version of a library symptom: its analyses, search and pages
    use this definition in every runbook that names the symptom; other teams
    keep the library's. Written by a team admin's edit of the symptom."""

    symptom = models.ForeignKey(Symptom, models.CASCADE, related_name="overlays")
    team = models.ForeignKey(Team, models.CASCADE, related_name="symptom_overlays")
    title = models.TextField()
    definition = models.JSONField(default=dict)   # as Symptom.definition
    # Set when the team went back to the library's definition: row and revisions stay (history).
    dropped = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["symptom", "team"]
        constraints = [models.UniqueConstraint(fields=["symptom", "team"], name="symptomoverlay_unique_team")]

    def __str__(self) -> str:
        return f"{self.symptom_id} (overlay of team {self.team_id})"


class SymptomOverlayRevision(FileRevision):
    """One saved state of a team's symptom overlay: the YAML file as written."""

    overlay = models.ForeignKey(SymptomOverlay, models.CASCADE, related_name="revisions")

    class Meta:
        ordering = ["overlay", "-number"]
        constraints = [models.UniqueConstraint(fields=["overlay", "number"],
                                               name="symptomoverlayrevision_unique_number")]


class SymptomProposal(Proposal):
    """A team admin's edit of a library symptom filed for the maintainers (like RunbookProposal):
    accepted, it is the library symptom's next revision, for every team."""

    symptom = models.ForeignKey(Symptom, models.CASCADE, related_name="proposals")
    team = models.ForeignKey(Team, models.CASCADE, related_name="symptom_proposals")

    class Meta(Proposal.Meta):
        indexes = [models.Index(fields=["status", "-created"], name="symptomproposal_status_created")]

    def __str__(self) -> str:
        return f"proposal {self.pk} for symptom {self.symptom_id} by team {self.team_id}"
