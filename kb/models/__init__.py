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
    Ticket,
)
from kb.models.incidents import Analysis, ApiToken, Bundle, Finding, Incident
from kb.models.teams import Membership, Team

__all__ = [
    "Analysis", "ApiToken", "Bundle", "Finding", "Incident",
    "Fix", "FixStep", "Knob", "Membership", "Reference", "Runbook", "RunbookRevision",
    "RunbookSymptom", "Symptom", "Team", "Ticket",
]
