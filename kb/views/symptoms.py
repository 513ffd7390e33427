"""The symptom library in the app: one page per symptom with the runbooks
that share it, its editor and its history."""

from __future__ import annotations

from functools import partial

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from kb.forms import SymptomEditForm
from kb.models import RunbookSymptom, Symptom
from kb.lib.revisions import revision_diff
from kb.access import symptom_can_edit
from kb.services.symptoms import symptom_text, symptom_update
from kb.views.editing import file_edit


def _int_or_none(value: str | None) -> int | None:
    try:
        return int(value) if value else None
    except ValueError:
        return None


def _uses(symptom: Symptom) -> list[RunbookSymptom]:
    return list(symptom.uses.select_related("runbook").order_by("runbook__slug"))


@require_GET
def symptom_detail(request: HttpRequest, symptom: str) -> HttpResponse:
    symptom = get_object_or_404(Symptom, id=symptom)
    revisions = list(symptom.revisions.select_related("author").order_by("-number"))
    b = _int_or_none(request.GET.get("b"))
    new = next((r for r in revisions if r.number == b), revisions[0] if revisions else None)
    a = _int_or_none(request.GET.get("a"))
    older = [r for r in revisions if new and r.number < new.number]
    old = next((r for r in revisions if r.number == a), older[0] if older else None)
    diff = revision_diff(old=old.text, new=new.text, old_label=f"r{old.number}",
                         new_label=f"r{new.number}") if old and new else []
    ctx = {
        "symptom": symptom, "uses": _uses(symptom), "revisions": revisions, "old": old, "new": new,
        "diff": diff, "can_edit": symptom_can_edit(user=request.user, symptom=symptom),
    }
    return render(request, "kb/symptom_detail.html", ctx)


@require_http_methods(["GET", "POST"])
def symptom_edit(request: HttpRequest, symptom: str) -> HttpResponse:
    symptom = get_object_or_404(Symptom, id=symptom)
    if not symptom_can_edit(user=request.user, symptom=symptom):
        raise PermissionDenied("Only those who may edit every runbook using a symptom edit it.")
    uses = _uses(symptom)
    form, response = file_edit(
        request, SymptomEditForm, text=lambda: symptom_text(symptom=symptom),
        last=symptom.revisions.order_by("-number").first(), save=partial(symptom_update, symptom=symptom),
        done=reverse("symptom_detail", args=[symptom.id]), saved_note=f" {len(uses)} runbook(s) use it.")
    if response is not None:
        return response
    return render(request, "kb/symptom_edit.html", {"symptom": symptom, "form": form, "uses": uses})
