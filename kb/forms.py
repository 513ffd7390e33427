"""Every form of the app: runbooks and search, incidents, uploads, team work."""

from __future__ import annotations

from django import forms
from django.db.models import Q

from analyzers.runbook_vocabulary import COMPONENTS, SEVERITIES
from kb.models import FindingFeedback, Incident, Membership, Runbook, Team
from kb.selectors.incidents import team_members
from kb.services.collab import MAX_BODY, MAX_REASON
from kb.services.search import MAX_LOG_CHARS


class RunbookFilterForm(forms.Form):
    component = forms.ChoiceField(
        choices=[("", "Any component")] + [(c, c) for c in COMPONENTS], required=False
    )
    severity = forms.ChoiceField(
        choices=[("", "Any severity")] + [(s, s) for s in SEVERITIES], required=False
    )


class FileEditForm(forms.Form):
    """A catalog file in a textarea, the revision it was loaded from and what changed."""

    rows, label, placeholder = 36, "File", ""
    text = forms.CharField(strip=False, widget=forms.Textarea(
        attrs={"spellcheck": "false", "class": "code-editor"}))
    message = forms.CharField(max_length=200, required=False, label="What changed")
    base_revision = forms.IntegerField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["text"].label = self.label
        self.fields["text"].widget.attrs["rows"] = self.rows
        self.fields["message"].widget.attrs["placeholder"] = self.placeholder


class RunbookEditForm(FileEditForm):
    rows, label, placeholder = 36, "Runbook file (YAML front matter + Markdown)", "e.g. raise the recommended retries"
    # A team admin's edit of a shipped runbook is the team's overlay; this also asks the maintainers.
    propose = forms.BooleanField(required=False, label="Also propose this change to the maintainers, for every team")


class TeamRunbookForm(forms.Form):
    """A new runbook of one of the user's teams: the whole file."""

    team = forms.ModelChoiceField(queryset=Team.objects.none(), empty_label=None)
    text = forms.CharField(strip=False, label="Runbook file (YAML front matter + Markdown)", widget=forms.Textarea(
        attrs={"spellcheck": "false", "class": "code-editor", "rows": 36}))

    def __init__(self, *args, teams, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams


class SymptomEditForm(FileEditForm):
    rows, label, placeholder = 24, "Symptom file (YAML)", "e.g. add the Hadoop 2.x wording"
    # A team admin's edit of a library symptom is the team's version; this also asks the maintainers.
    propose = forms.BooleanField(required=False, label="Also propose this change to the maintainers, for every team")


class WordSearchForm(forms.Form):
    q = forms.CharField(max_length=200, required=False, label="Search")


class LogSearchForm(forms.Form):
    log = forms.CharField(
        strip=False, max_length=MAX_LOG_CHARS, label="Log excerpt or stack trace",
        widget=forms.Textarea(attrs={"rows": 12, "spellcheck": "false", "class": "code-editor",
                                     "placeholder": "Paste log lines or a stack trace"}),
    )


class IncidentFilterForm(forms.Form):
    q = forms.CharField(max_length=200, required=False, label="Search")
    status = forms.ChoiceField(choices=[("", "Any status")] + Incident.Status.choices, required=False)
    severity = forms.ChoiceField(choices=[("", "Any severity")] + Incident.Severity.choices, required=False)
    # Team work (kb.services.collab.incident_filter): root cause, component, team.
    component = forms.ChoiceField(choices=[("", "Any component")] + [(c, c) for c in COMPONENTS], required=False)
    runbook = forms.ChoiceField(choices=[], required=False)
    confirmed = forms.BooleanField(required=False, label="Confirmed root cause only")
    # Empty: the current team (kb.current_team), the one the header's switcher chose.
    team = forms.ModelChoiceField(queryset=None, required=False, empty_label="Current team")

    def __init__(self, *args, teams, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["runbook"].choices = [("", "Any runbook")] + list(
            Runbook.objects.filter(Q(team__isnull=True) | Q(team__in=teams) | Q(published=True))
            .order_by("slug").values_list("slug", "slug").distinct())
        self.fields["team"].queryset = teams


class IncidentCreateForm(forms.Form):
    title = forms.CharField(max_length=200)
    severity = forms.ChoiceField(choices=Incident.Severity.choices, initial=Incident.Severity.MEDIUM)
    team = forms.ModelChoiceField(queryset=None, empty_label=None)

    def __init__(self, *args, teams, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams
        if len(teams) == 1:
            self.fields["team"].initial = teams.first().pk
            self.fields["team"].widget = forms.HiddenInput()


class IncidentUpdateForm(forms.Form):
    status = forms.ChoiceField(choices=Incident.Status.choices)
    severity = forms.ChoiceField(choices=Incident.Severity.choices)
    owner = forms.ModelChoiceField(queryset=None, required=False, empty_label="(nobody)")

    def __init__(self, *args, incident: Incident, **kwargs) -> None:
        kwargs.setdefault("initial", {"status": incident.status, "severity": incident.severity,
                                      "owner": incident.owner_id})
        super().__init__(*args, **kwargs)
        self.fields["owner"].queryset = team_members(team=incident.team)


class _MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class _MultipleFileField(forms.FileField):
    """Every file of an <input type=file multiple> (Django's documented recipe)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", _MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        one = super().clean
        if isinstance(data, (list, tuple)) and data:
            return [one(d, initial) for d in data]
        return [one(data or None, initial)]            # nothing sent: "This field is required"


class BundleUploadForm(forms.Form):
    file = _MultipleFileField(
        label="Log bundle",
        help_text="An archive (.zip, .tar, .tar.gz, .tgz, .tar.bz2, .tar.xz, .gz), a log file, several "
                  "files, or a folder dropped here: several become one bundle of several hosts.",
    )
    healthy = forms.BooleanField(required=False)   # the incident's "healthy" slot: a baseline (issue 12)


class AnnotationForm(forms.Form):
    body = forms.CharField(max_length=MAX_BODY, strip=False, widget=forms.Textarea(attrs={
        "rows": 3, "placeholder": "Markdown. @name notifies a teammate."}))


class FeedbackForm(forms.Form):
    verdict = forms.ChoiceField(choices=FindingFeedback.Verdict.choices + [("clear", "Withdraw")])
    reason = forms.CharField(max_length=MAX_REASON, required=False)


class RunbookNoteForm(forms.Form):
    body = forms.CharField(max_length=MAX_BODY, strip=False, widget=forms.Textarea(attrs={
        "rows": 3, "placeholder": "What your team learned using this runbook (Markdown)."}))
    team = forms.ModelChoiceField(queryset=Team.objects.none(), empty_label=None)

    def __init__(self, *args, teams, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams
        self.only_team = teams[0] if len(teams) == 1 else None
        if self.only_team is not None:   # one team: no choice to make
            self.fields["team"].initial = self.only_team.pk
            self.fields["team"].required = False
            self.fields["team"].widget = forms.HiddenInput()

    def clean_team(self) -> Team | None:
        return self.cleaned_data.get("team") or self.only_team


class TeamCreateForm(forms.Form):
    name = forms.CharField(max_length=100, label="Team name")


class MemberAddForm(forms.Form):
    username = forms.CharField(max_length=150, label="Username")
    role = forms.ChoiceField(choices=Membership.Role.choices, initial=Membership.Role.MEMBER)


class MemberRoleForm(forms.Form):
    role = forms.ChoiceField(choices=Membership.Role.choices)


class LeadDraftForm(forms.Form):
    """A runbook drafted from a lead: its new library symptom and the runbook file, both editable."""

    symptom = forms.CharField(strip=False, label="New library symptom (runbooks/symptoms/<id>.yaml)",
                              widget=forms.Textarea(attrs={"spellcheck": "false", "class": "code-editor", "rows": 14}))
    text = forms.CharField(strip=False, label="Runbook file (YAML front matter + Markdown; fill in the TODOs)",
                           widget=forms.Textarea(attrs={"spellcheck": "false", "class": "code-editor", "rows": 36}))
