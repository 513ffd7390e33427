from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from kb.forms import LogSearchForm, WordSearchForm
from kb.selectors.catalog import viewer_team
from kb.services.search import runbook_search_log, runbook_search_words


@require_http_methods(["GET", "POST"])
def search(request: HttpRequest) -> HttpResponse:
    """GET ?q=words ranks runbooks by text; POST log=... matches a pasted log
    excerpt against every runbook's signatures."""
    word_form = WordSearchForm(request.GET or None)
    log_form = LogSearchForm(request.POST or None)
    ctx = {"word_form": word_form, "log_form": log_form, "q": "", "hits": None, "log_result": None}
    if request.method == "POST":
        if log_form.is_valid():
            ctx["log_result"] = runbook_search_log(text=log_form.cleaned_data["log"],
                                                   team=viewer_team(request.user))
    elif word_form.is_valid() and word_form.cleaned_data["q"]:
        ctx["q"] = word_form.cleaned_data["q"]
        ctx["hits"] = runbook_search_words(q=ctx["q"], team=viewer_team(request.user))
    return render(request, "kb/search.html", ctx)
