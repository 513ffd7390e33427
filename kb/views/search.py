from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from kb.current_team import current_team
from kb.forms import LogSearchForm, WordSearchForm
from kb.services.search import runbook_search_log, word_search


@require_http_methods(["GET", "POST"])
def search(request: HttpRequest) -> HttpResponse:
    """GET ?q=words ranks runbooks by text; POST log=... matches a pasted log
    excerpt against the signatures of every runbook the viewer's team sees
    (kb.selectors.catalog: the words too are searched in that team's catalog)."""
    word_form = WordSearchForm(request.GET or None)
    log_form = LogSearchForm(request.POST or None)
    ctx = {"word_form": word_form, "log_form": log_form, "q": "", "hits": None, "log_result": None,
           "ignored_words": []}
    if request.method == "POST":
        if log_form.is_valid():
            ctx["log_result"] = runbook_search_log(text=log_form.cleaned_data["log"],
                                                   team=current_team(request))
    elif word_form.is_valid() and word_form.cleaned_data["q"]:
        ctx["q"] = word_form.cleaned_data["q"]
        found = word_search(q=ctx["q"], team=current_team(request))
        ctx["hits"], ctx["ignored_words"] = found.hits, found.ignored_words
        ctx["too_common_words"] = found.too_common_words
        ctx["strong_hits"] = [h for h in found.hits if not h.weak]
        ctx["weak_hits"] = [h for h in found.hits if h.weak]
    return render(request, "kb/search.html", ctx)
