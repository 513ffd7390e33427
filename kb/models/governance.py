"""Changes a team asks the maintainers to make to the shipped catalog.

A team admin's edit of a shipped runbook is the team's overlay (a Runbook row
with overlay_of set, kb.models.runbooks); "propose to maintainers" also files
the text here, and a site maintainer (staff) accepts it with the diff shown,
which makes it the shipped runbook's next revision, or declines it.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from kb.models.runbooks import Runbook
from kb.models.teams import Team


class RunbookProposal(models.Model):
    class Status(models.TextChoices):
        OPEN = "open", "Open"
        ACCEPTED = "accepted", "Accepted"
        DECLINED = "declined", "Declined"

    runbook = models.ForeignKey(Runbook, models.CASCADE, related_name="proposals")  # the shipped row
    team = models.ForeignKey(Team, models.CASCADE, related_name="runbook_proposals")
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
        ordering = ["-created"]
        indexes = [models.Index(fields=["status", "-created"], name="proposal_status_created")]

    def __str__(self) -> str:
        return f"proposal {self.pk} for {self.runbook.slug} by team {self.team_id}"
