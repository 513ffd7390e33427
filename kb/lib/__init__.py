"""Pure helpers the pages use: no database, no requests.

timeline.py   finding colours, the cross-host timeline and the cause chain
markdown.py   markdown_render (safe HTML from user and runbook Markdown)
revisions.py  revision_diff (line diff of two runbook revisions)
"""
