"""The symptom library in the app: one page per symptom with the runbooks
that share it, its editor and its history."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from analyzers.runbooks import RunbookError
from kb.forms import SymptomEditForm
from kb.models import RunbookSymptom, Symptom
from kb.lib.revisions import revision_diff
from kb.access import symptom_can_edit
from kb.services.symptoms import symptom_text, symptom_update


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
    if request.method == "POST":
        form = SymptomEditForm(request.POST)
        if form.is_valid():
            try:
                revision = symptom_update(
                    symptom=symptom, text=form.cleaned_data["text"], author=request.user,
                    message=form.cleaned_data["message"], base_revision=form.cleaned_data["base_revision"],
                )
            except RunbookError as exc:
                form.add_error("text", str(exc))
            else:
                if revision is None:
                    messages.info(request, "No changes: the file is the same as the saved one.")
                else:
                    messages.success(request, f"Saved revision {revision.number}; "
                                              f"{len(_uses(symptom))} runbook(s) use it.")
                return redirect("symptom_detail", symptom=symptom.id)
    else:
        last = symptom.revisions.order_by("-number").first()
        form = SymptomEditForm(initial={"text": symptom_text(symptom=symptom),
                                        "base_revision": last.number if last else None})
    return render(request, "kb/symptom_edit.html", {"symptom": symptom, "form": form, "uses": _uses(symptom)})
