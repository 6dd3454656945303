"""Nemsy's named fault points: one between every pair of writes in the fidelity note's write orders.

Ingest writes page, then index, then log, then ledger (§2.7); archive writes page then index (§2.9);
insight save writes page, index, log (§2.10). The model call itself can fail (nothing is recorded).
"""

from sim.faults import declare_point

INGEST_LLM_CALL = declare_point(
    "nemsy.ingest.llm_call", "the ingest model call raises: nothing is written, no ledger record"
)
INGEST_AFTER_PAGE = declare_point(
    "nemsy.ingest.after_page", "after the source page is written, before the index entry"
)
INGEST_AFTER_INDEX = declare_point(
    "nemsy.ingest.after_index", "after the index entry, before the log.md entry"
)
INGEST_AFTER_LOG = declare_point("nemsy.ingest.after_log", "after the log.md entry, before the ledger record")
ARCHIVE_AFTER_PAGE = declare_point(
    "nemsy.archive.after_page", "after the archived query page is written, before its index entry"
)
SAVE_AFTER_PAGE = declare_point(
    "nemsy.save_insight.after_page", "after the insight page is written, before its index entry"
)
SAVE_AFTER_INDEX = declare_point(
    "nemsy.save_insight.after_index", "after the insight index entry, before the log.md entry"
)
LEDGER_WRITE = declare_point(
    "nemsy.record_ingest.write", "writing ingest_log.json fails (the page, index and log stay)"
)
