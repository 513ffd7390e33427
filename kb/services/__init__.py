"""Business logic (HackSoft style): <entity>_<action>(*, ...) functions; the
only place Django calls the engine (analyzers). Reads for pages are in
kb.selectors, who may do what in kb.access, pure helpers in kb.lib.

analyses.py       analysis_upload, analysis_start, analysis_run (stage, scan, store), progress
leases.py         the lease protocol: analysis_claim, analysis_extend_lease, analysis_release, analysis_fail
reconcile.py      analysis_reconcile (queued never sent, running whose worker died)
staged.py         staged_dir, staged_manifest_write, analysis_staged_file (analyses from before context_store)
context_store.py  context_store_write, context_store_lines (the compressed, line-indexed copy of staged files)
storage.py        quotas (quota_admit: atomic under quota_lock), incident_storage, storage_prune
bundles.py        bundle_store, bundle_limits, bundle_default_team, bundle_incident_for_upload
incidents.py      incident_create, incident_update, analysis_context (lines around evidence)
activity.py       activity_record (the one writer of an incident's activity stream)
collab.py         annotations, runbook field notes, finding feedback, follows (writes)
notifications.py  notification_*, notify_mentions, collab_analysis_finished
tokens.py         token_create, token_authenticate, token_revoke
search.py         word_search / runbook_search_words, runbook_search_log (+ ranked candidates), in a team's catalog
search_index.py   RUNBOOK_INDEX: in-memory SQLite FTS5 (BM25) indexes, one per team catalog, word search reads
teams.py          team_create, member_add, member_set_role, member_remove (the last admin stays), team_changes
runbooks.py       runbook_save, runbook_update, runbook_parse_edit
governance.py     runbook_edit_save (overlay or shipped), team_runbook_create, runbook_publish, proposals
symptom_overlays.py  symptom_edit_save (library or the team's version), team_library, catalog_resolve
sync.py           runbook_sync
export.py         runbook_text, runbook_export
baselines.py      analysis_mark_healthy, healthy analyses of a team, re-analysis against one (issue 12)
baseline_templates.py  analysis_baseline: the baseline's templates the worker passes to the engine
drafts.py         a runbook drafted from a lead: the editor's draft, saving it as a team runbook with its fixture
"""
