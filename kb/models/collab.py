"""Team work on incidents: annotations, field notes on runbooks, feedback on
findings, the activity stream, follows and in-app notifications.

Every row carries its team (copied from the incident or chosen by the author)
so that kb.access can scope it without a join. Markdown bodies are stored raw;
they are rendered and sanitised at display time (kb.lib.markdown).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from kb.models.incidents import Analysis, Incident
from kb.models.runbooks import Runbook
from kb.models.teams import Team


class Annotation(models.Model):
    """A Markdown note on an incident, on one finding of an analysis (`finding_slug`),
    or on one evidence line of an analysis (`evidence_path` + `evidence_line`)."""

    team = models.ForeignKey(Team, models.CASCADE, related_name="annotations")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True,
                               related_name="annotations")
    incident = models.ForeignKey(Incident, models.CASCADE, related_name="annotations")
    analysis = models.ForeignKey(Analysis, models.CASCADE, null=True, blank=True, related_name="annotations")
    finding_slug = models.CharField(max_length=100, blank=True)   # a runbook slug, like Finding.slug
    evidence_path = models.CharField(max_length=1000, blank=True)  # bundle path, as in result["files"]
    evidence_line = models.PositiveIntegerField(null=True, blank=True)
    body = models.TextField()
    created = models.DateTimeField(auto_now_add=True)
    edited = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created", "id"]
        indexes = [
            # The incident page lists an incident's annotations in order.
            models.Index(fields=["incident", "created"], name="annotation_incident"),
            # The analysis page asks for the annotations of one finding or line.
            models.Index(fields=["analysis", "finding_slug"], name="annotation_finding"),
        ]
        constraints = [
            # A finding or a line is always one of an analysis's.
            models.CheckConstraint(
                condition=Q(analysis__isnull=False) | (Q(finding_slug="") & Q(evidence_path="")),
                name="annotation_target_needs_analysis",
            ),
            # A line number goes with a path, and the other way round.
            models.CheckConstraint(
                condition=(Q(evidence_path="") & Q(evidence_line__isnull=True))
                | (~Q(evidence_path="") & Q(evidence_line__isnull=False)),
                name="annotation_path_and_line",
            ),
        ]

    def __str__(self) -> str:
        return f"annotation {self.pk} on incident {self.incident_id}"

    @property
    def kind(self) -> str:
        if self.evidence_path:
            return "evidence"
        if self.finding_slug:
            return "finding"
        if self.analysis_id:
            return "analysis"
        return "incident"

    @property
    def evidence_anchor(self) -> str:
        """The id of the line on the analysis page ("ev-<sha1 of path>-<line>")."""
        if not self.evidence_path:
            return ""
        from kb.lib.timeline import evidence_anchor

        return evidence_anchor(self.evidence_path, self.evidence_line)


class RunbookNote(models.Model):
    """A team's field note on a runbook. Runbooks are shared by every user; notes
    are team knowledge (they name hosts, clusters, people), so the runbook page
    shows each user the notes of their own teams only."""

    runbook = models.ForeignKey(Runbook, models.CASCADE, related_name="notes")
    team = models.ForeignKey(Team, models.CASCADE, related_name="runbook_notes")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True,
                               related_name="runbook_notes")
    body = models.TextField()
    created = models.DateTimeField(auto_now_add=True)
    edited = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created", "-id"]
        indexes = [models.Index(fields=["runbook", "team"], name="runbooknote_runbook_team")]

    def __str__(self) -> str:
        return f"note {self.pk} on {self.runbook_id}"


class FindingFeedback(models.Model):
    """One user's verdict on one finding (analysis + runbook slug): was this the
    root cause? One row per user per finding; changing one's mind edits it."""

    class Verdict(models.TextChoices):
        CONFIRM = "confirm", "Confirmed"
        REJECT = "reject", "Rejected"

    team = models.ForeignKey(Team, models.CASCADE, related_name="finding_feedback")
    analysis = models.ForeignKey(Analysis, models.CASCADE, related_name="feedback")
    slug = models.CharField(max_length=100)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="finding_feedback")
    verdict = models.CharField(max_length=10, choices=Verdict.choices)
    reason = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["analysis", "slug", "user"], name="findingfeedback_one_per_user"),
        ]
        indexes = [
            # Runbook pages count verdicts per slug; the incident list filters by confirmed slug.
            models.Index(fields=["slug", "verdict"], name="findingfeedback_slug_verdict"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} {self.verdict}s {self.slug} in analysis {self.analysis_id}"


class Activity(models.Model):
    """One entry of an incident's activity stream: who did what, when."""

    class Verb(models.TextChoices):
        CREATED = "created", "opened the incident"
        UPLOADED = "uploaded", "uploaded a bundle"
        ANALYSIS_STARTED = "analysis_started", "started an analysis"
        ANALYSIS_DONE = "analysis_done", "analysis finished"
        ANALYSIS_FAILED = "analysis_failed", "analysis failed"
        STATUS = "status", "changed the status"
        SEVERITY = "severity", "changed the severity"
        OWNER = "owner", "changed the owner"
        ANNOTATED = "annotated", "annotated"
        ANNOTATION_EDITED = "annotation_edited", "edited an annotation"
        ANNOTATION_DELETED = "annotation_deleted", "deleted an annotation"
        FEEDBACK = "feedback", "gave feedback on a finding"
        FOLLOWED = "followed", "follows the incident"

    team = models.ForeignKey(Team, models.CASCADE, related_name="activities")
    incident = models.ForeignKey(Incident, models.CASCADE, related_name="activities")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True,
                              related_name="activities")
    verb = models.CharField(max_length=20, choices=Verb.choices)
    target = models.CharField(max_length=300, blank=True)   # a short description ("analysis #4")
    data = models.JSONField(default=dict, blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created", "-id"]
        verbose_name_plural = "activities"
        # The incident page shows the newest entries of one incident.
        indexes = [models.Index(fields=["incident", "-created"], name="activity_incident_created")]

    def __str__(self) -> str:
        return f"{self.actor_id} {self.verb} {self.target}"


class Follow(models.Model):
    """A user who wants to hear when an incident's analyses finish (owners always do)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="follows")
    incident = models.ForeignKey(Incident, models.CASCADE, related_name="follows")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "incident"], name="follow_unique")]


class Notification(models.Model):
    """An in-app notification (also mailed when SMTP is configured)."""

    class Verb(models.TextChoices):
        ANALYSIS_DONE = "analysis_done", "Analysis finished"
        ANALYSIS_FAILED = "analysis_failed", "Analysis failed"
        MENTION = "mention", "Mentioned"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="notifications")
    incident = models.ForeignKey(Incident, models.CASCADE, null=True, blank=True, related_name="notifications")
    verb = models.CharField(max_length=20, choices=Verb.choices)
    text = models.CharField(max_length=500)
    url = models.CharField(max_length=500, blank=True)   # a path inside the app, never an outside URL
    read = models.BooleanField(default=False)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created", "-id"]
        # The nav counts a user's unread notifications on every page.
        indexes = [models.Index(fields=["user", "read"], name="notification_user_read")]

    def __str__(self) -> str:
        return f"to {self.user_id}: {self.text}"
