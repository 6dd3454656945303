"""Named fault points of the MerchantBench model, one for each write order in the fidelity note."""

from sim.faults import declare_point

WRITE_DOC_PARTIAL = declare_point(
    "merchantbench.write_memory_doc.document_partial",
    "crash while the document is being rewritten in place (open 'w' truncated it; half the body landed)",
)
WRITE_DOC_AFTER_DOCUMENT = declare_point(
    "merchantbench.write_memory_doc.after_document",
    "crash after the document was overwritten and before the history append (no rollback)",
)
WRITE_DOC_HISTORY_APPEND = declare_point(
    "merchantbench.write_memory_doc.history_append",
    "the history append fails (fail@) after the document was overwritten; /act returns 500",
)
WRITE_DOC_BEFORE_REPLACE = declare_point(
    "merchantbench.write_memory_doc.before_replace",
    "fixed variant only: crash after the temp document is written and before os.replace",
)
STEP_TRACE_BEFORE_REPLACE = declare_point(
    "merchantbench.step_trace.before_replace",
    "crash after t_NNNNN.json.tmp.PID.HEX is written and before os.replace (the temp file stays)",
)
DELETE_RUN_RMTREE = declare_point(
    "merchantbench.delete_run.rmtree",
    "one attempt to remove the run directory fails (12 attempts, 50 ms apart)",
)

POINTS = (
    WRITE_DOC_PARTIAL, WRITE_DOC_AFTER_DOCUMENT, WRITE_DOC_HISTORY_APPEND, WRITE_DOC_BEFORE_REPLACE,
    STEP_TRACE_BEFORE_REPLACE, DELETE_RUN_RMTREE,
)  # fmt: skip
