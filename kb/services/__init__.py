"""Business logic (HackSoft style): <entity>_<action>(*, ...) functions.

runbooks.py  runbook_save, runbook_update
sync.py      runbook_sync
export.py    runbook_text, runbook_export
search.py    runbook_search_words, runbook_search_log (log_match.py: fallback matcher)
markdown.py  markdown_render
revisions.py revision_diff
"""
