"""Reads for the pages (HackSoft selectors): views call these, templates only format.

runbooks.py   the catalog: lists, the detail page, revisions
incidents.py  incident lists and pages
report.py     the analysis report: verdict, findings, candidates, timeline
collab.py     team work: activity, annotations, field notes, feedback, similar incidents
"""
