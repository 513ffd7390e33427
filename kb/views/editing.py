"""The edit flow shared by the catalog's files (runbooks, library symptoms):
a file in a textarea, saved as a new revision or shown again with every
problem the validator found."""

from __future__ import annotations

from typing import Any, Callable

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from analyzers.runbooks import RunbookError
from kb.forms import FileEditForm


def file_edit(
    request: HttpRequest, form_class: type[FileEditForm], *, text: Callable[[], str], last: Any,
    save: Callable[..., Any], done: HttpResponse | Callable[[], HttpResponse], saved_note: str = "",
) -> tuple[FileEditForm, HttpResponse | None]:
    """(form, response): on GET the form loaded with the file; on a POST that
    saves, the redirect to `done`; on a refused POST the form with its errors."""
    if request.method != "POST":
        return form_class(initial={"text": text(), "base_revision": last.number if last else None}), None
    form = form_class(request.POST)
    if not form.is_valid():
        return form, None
    try:
        revision = save(text=form.cleaned_data["text"], author=request.user, message=form.cleaned_data["message"],
                        base_revision=form.cleaned_data["base_revision"])
    except RunbookError as exc:
        form.add_error("text", str(exc))
        return form, None
    if revision is None:
        messages.info(request, "No changes: the file is the same as the saved one.")
    else:
        messages.success(request, f"Saved revision {revision.number}.{saved_note}")
    return form, redirect(done)
