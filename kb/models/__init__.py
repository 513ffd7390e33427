"""kb models, one module per area. Import from here: `from kb.models import Runbook`."""

from kb.models.runbooks import (
    Fix,
    FixStep,
    Knob,
    Reference,
    Runbook,
    RunbookRevision,
    RunbookSymptom,
    Symptom,
    SymptomRevision,
    Ticket,
)
from kb.models.incidents import Analysis, ApiToken, Bundle, Finding, Incident
from kb.models.teams import Membership, Team
from kb.models.governance import RunbookProposal, SymptomOverlay, SymptomOverlayRevision, SymptomProposal
from kb.models.collab import Activity, Annotation, FindingFeedback, Follow, Notification, RunbookNote

__all__ = [
    "Activity", "Annotation", "FindingFeedback", "Follow", "Notification", "RunbookNote",
    "Analysis", "ApiToken", "Bundle", "Finding", "Incident",
    "Fix", "FixStep", "Knob", "Membership", "Reference", "Runbook", "RunbookRevision",
    "RunbookProposal", "RunbookSymptom", "Symptom", "SymptomOverlay", "SymptomOverlayRevision", "SymptomProposal",
    "SymptomRevision", "Team", "Ticket",
]
