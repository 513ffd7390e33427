from __future__ import annotations

from django import forms

from analyzers.runbooks import COMPONENTS, SEVERITIES
from kb.services.search import MAX_LOG_CHARS


class RunbookFilterForm(forms.Form):
    component = forms.ChoiceField(
        choices=[("", "Any component")] + [(c, c) for c in COMPONENTS], required=False
    )
    severity = forms.ChoiceField(
        choices=[("", "Any severity")] + [(s, s) for s in SEVERITIES], required=False
    )


class RunbookEditForm(forms.Form):
    text = forms.CharField(
        strip=False,
        widget=forms.Textarea(attrs={"rows": 36, "spellcheck": "false", "class": "code-editor"}),
        label="Runbook file (YAML front matter + Markdown)",
    )
    message = forms.CharField(
        max_length=200, required=False, label="What changed",
        widget=forms.TextInput(attrs={"placeholder": "e.g. raise the recommended retries"}),
    )
    base_revision = forms.IntegerField(required=False, widget=forms.HiddenInput)


class WordSearchForm(forms.Form):
    q = forms.CharField(max_length=200, required=False, label="Search")


class LogSearchForm(forms.Form):
    log = forms.CharField(
        strip=False, max_length=MAX_LOG_CHARS, label="Log excerpt or stack trace",
        widget=forms.Textarea(attrs={"rows": 12, "spellcheck": "false", "class": "code-editor",
                                     "placeholder": "Paste log lines or a stack trace"}),
    )


class SymptomEditForm(forms.Form):
    text = forms.CharField(
        strip=False,
        widget=forms.Textarea(attrs={"rows": 24, "spellcheck": "false", "class": "code-editor"}),
        label="Symptom file (YAML)",
    )
    message = forms.CharField(
        max_length=200, required=False, label="What changed",
        widget=forms.TextInput(attrs={"placeholder": "e.g. add the Hadoop 2.x wording"}),
    )
    base_revision = forms.IntegerField(required=False, widget=forms.HiddenInput)
