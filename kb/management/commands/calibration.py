"""python manage.py calibration: the reliability table of the confirm/reject
feedback in the database (per confidence bin: count, mean confidence shown,
observed share confirmed) and each runbook's measured precision. The fixture
set's table is printed by `make bench` (scripts/calibration.py)."""

from django.core.management.base import BaseCommand

from analyzers.calibration import format_reliability, per_runbook, reliability
from kb.selectors.calibration import feedback_observations


class Command(BaseCommand):
    help = "Reliability table and per-runbook precision from confirm/reject feedback"

    def handle(self, *args, **opts):
        observations = feedback_observations()
        lines = format_reliability(reliability(observations),
                                   f"calibration on feedback: {len(observations)} confirm/reject verdicts")
        for slug, row in per_runbook(observations).items():
            lines.append(f"  {slug:<48} {row['precision']:.2f} precision ({row['correct']}/{row['findings']} confirmed, "
                         f"mean confidence {row['mean_confidence']:.2f})")
        self.stdout.write("\n".join(lines))
