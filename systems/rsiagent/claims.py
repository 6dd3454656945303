"""RSIAgent's failure modes (fidelity note §3), each with its minimal fix, its off switch and the JSON
shape of its examples: declarations only (strategies and drivers in :mod:`systems.rsiagent.drivers`,
checkers in :mod:`systems.rsiagent.properties`).

Each property asserts the mechanism's service as well as the absence of the failure, so the claim's off
switch (the mechanism emptied) fails it like upstream does. Three claims are counterfactual: their
faithful direction is a weaker design upstream does *not* ship (pushing canonical memory at wave start;
committing from a raw ``pull_memory``; one journal shared by every unified cycle), their fixed direction
is upstream itself, and the ledger counts them apart. ``work-lesson-lost`` is upstream's stated design
(``intent=``). Thresholds are small parameters of the examples (handoff caps, high water, worklog cap) so
that each claim runs in well under a second; the model's defaults are upstream's.
"""

from __future__ import annotations

from sim.claims import Claim, claim_factory
from systems.rsiagent.drivers import caching, evaluation, journal, learning, waves, worklog

SYSTEM = "rsiagent"
ADM = ("RT-RTE-learning-admission", "MEM-OBJ-memory")
JRN = ("MEM-OBJ-memory-journal", "RT-RTE-learning-admission")
FOLD = ("MEM-RTE-worklog-fold", "MEM-OBJ-work-log")

_claim = claim_factory(SYSTEM)


CLAIMS: list[Claim] = [
    _claim(
        "work-lesson-lost",
        ("RT-RTE-learning-admission", "MEM-OBJ-memory", "RT-RTE-task-execution"),
        "A lesson the Actor writes to ~/.memory while working is wiped by the pre-distillation reset "
        "and lost unless distillation rewrites it.",
        "draft-work-delta: carry the work-phase delta into the reset bank as a visible draft",
        learning.work_lesson_examples,
        learning.check_work_lesson,
        fixes=("draft-work-delta",),
        off=("commit-off",),
        intent="Upstream discards work-phase memory edits on purpose: the Actor charter says work-phase "
        "changes to ~/.memory are discarded, and the reset re-pushes the canonical bank before "
        "distillation (practice_loop.py evolve_practice). The claim records what that costs.",
        example_type=learning.WorkLessonExample,
    ),
    _claim(
        "journal-episode-overwrite",
        JRN,
        "Counterfactual: journal() guards no episode id, so if unified evolution cycles shared one "
        "journal while experience_index restarts per cycle, a repeated id would silently overwrite "
        "ep{NNN}.tgz (journal.jsonl keeps both lines) and the first tree would be unrecoverable. Upstream "
        "runs every cycle in its own lineage root with its own journal (the 'fixed' direction).",
        "upstream: each unified cycle journals into its own lineage root (evolve_until_ready(root=...))",
        journal.journal_ids_examples,
        journal.check_journal_ids,
        counterfactuals=("shared-cycle-root",),
        off=("journal-off",),
        example_type=journal.JournalIdsExample,
    ),
    _claim(
        "journal-ahead-of-install",
        JRN,
        "The journal is written before the install, so an install that raises leaves a journal line "
        "for a tree that was never installed.",
        "journal-after-install: journal only after the install succeeded",
        journal.journal_install_examples,
        journal.check_journal_install,
        fixes=("journal-after-install",),
        off=("journal-off",),
        example_type=journal.JournalInstallExample,
    ),
    _claim(
        "wave-lost-update-counterfactual",
        ("RT-RTE-learning-admission", "MEM-OBJ-memory"),
        "Counterfactual: if canonical memory were pushed only at wave start, a later branch's whole-tree "
        "install would erase an earlier sibling's committed lesson; upstream's re-push of the latest "
        "canonical bank at each serialized commit (the 'fixed' direction) prevents it.",
        "upstream: push the latest canonical bank into each branch at its serialized commit",
        waves.wave_examples(False),
        waves.check_wave_lost_update,
        counterfactuals=("push-at-wave-start",),
        off=("commit-off",),
        slow=True,
        example_type=waves.WaveExample,
    ),
    _claim(
        "wave-stale-rewrite",
        ("RT-RTE-learning-admission", "MEM-OBJ-memory"),
        "Upstream residue: a branch that read a file during work and rewrites it from its stale context "
        "at commit drops the lines a sibling committed to that file.",
        "wave-sibling-check: merge (line union) overwrites of files a sibling changed since the snapshot",
        waves.wave_examples(True),
        waves.check_wave_stale,
        fixes=("wave-sibling-check",),
        off=("commit-off",),
        slow=True,
        example_type=waves.StaleWaveExample,
    ),
    _claim(
        "fold-mid-message-loss",
        FOLD,
        "A fact between character 1,500 and len-2,500 of a message over 4,000 characters never reaches "
        "the summarizer when that message is folded, so it leaves the context.",
        "complete-fold-input: render the complete (chunked) content for the summarizer",
        worklog.fold_middle_examples,
        worklog.check_fold_middle,
        fixes=("complete-fold-input",),
        off=("fold-input-off",),
        example_type=worklog.FoldMiddleExample,
    ),
    _claim(
        "digest-fallback-wipes-log",
        FOLD,
        "On a blank summary the digest fallback appends the folded batch's digest to the WORK LOG and "
        "keeps the newest tail under the cap, erasing the old log's facts.",
        "digest-keeps-log: a digest that would overflow the cap leaves its batch unfolded (verbatim) "
        "until a later fold",
        worklog.digest_examples,
        worklog.check_digest,
        fixes=("digest-keeps-log",),
        off=("digest-off",),
        example_type=worklog.DigestExample,
    ),
    _claim(
        "fold-resets-cache",
        (*FOLD, "RT-RTE-task-execution"),
        "A fold rewrites the one message that holds the TASK and the WORK LOG, and the summarizer merges a "
        "changed value into its existing entry (upstream's prompt: merge rather than duplicate, CURRENT "
        "STATE first), so the request after a fold shares only the system prompt with the one before: "
        "under automatic prefix caching the task, the whole WORK LOG and every kept pair are sent uncached "
        "again although the log's other entries did not change. Property: every call carries at most "
        "keep + batch - 1 unfolded pairs and the latest value of every fact observed so far, and reads "
        "from the cache at least half of the system prompt, task and WORK LOG tokens the previous call "
        "sent (once they reach the cacheable minimum).",
        "append-only-worklog: keep the TASK message as first sent and append each fold's new entries as "
        "a message after the old ones (unchanged); the folded pairs still leave the context",
        caching.cache_examples,
        caching.check_cache,
        fixes=("append-only-worklog",),
        off=("fold-off",),
        slow=True,
        example_type=caching.CacheExample,
    ),
    _claim(
        "fold-guard-stuck",
        FOLD,
        "When the keep window (keep_chars, or history_keep_pairs pairs) outweighs the high-water mark, "
        "fewer than fold_batch pairs lie outside it, so no fold happens and the context stays above high "
        "water for more than a batch of model calls although the 6-pair floor fits under low water.",
        "keep-under-low-water: with high water set, budget the keep window to the low-water mark minus "
        "the WORK LOG (the 6-pair floor and the full-batch guard stay)",
        worklog.guard_examples,
        worklog.check_guard,
        fixes=("keep-under-low-water",),
        off=("fold-off",),
        example_type=worklog.GuardExample,
    ),
    _claim(
        "resume-truncates-log",
        ("MEM-OBJ-work-log", "MEM-RTE-worklog-fold", "RT-OBJ-loop-result"),
        "A stalled restart hands over only a fixed-size head of the WORK LOG (upstream: the first 12,000 "
        "characters, 6,000 on a pivot, where the strategy review reads the first 8,000; all three scaled "
        "down together in the examples, the review's 2,500-character answer not), so facts further down a "
        "log that may hold 500,000 characters never reach the fresh attempt.",
        "handoff-cap-worklog: cap the handoff at worklog_max_chars",
        worklog.handoff_examples,
        worklog.check_handoff,
        fixes=("handoff-cap-worklog",),
        off=("handoff-log-off",),
        example_type=worklog.HandoffExample,
    ),
    _claim(
        "pivot-review-blind",
        ("MEM-OBJ-work-log", "MEM-RTE-worklog-fold"),
        "On the pivot path the strategy review is fed res.worklog (empty without a fold), not the wl "
        "the summarizer synthesized from history[-60:] and that is handed over.",
        "review-gets-wl: pass wl to the strategy review",
        worklog.review_examples,
        worklog.check_review,
        fixes=("review-gets-wl",),
        off=("review-off",),
        example_type=worklog.ReviewExample,
    ),
    _claim(
        "write-memory-bypass",
        JRN,
        "The direct write_memory API bypasses admission: any write, even an empty one that only wipes "
        "the bank, replaces it with no journal entry; other inputs also install unaudited leaking text, "
        "write '../' names outside the bank, or (on a crash after the delete-everything step) leave a "
        "partial bank.",
        "admit-direct-writes: route it through audit-journal-staged install with name checks, journaling "
        "under the next unused episode id",
        journal.write_memory_examples,
        journal.check_write_memory,
        fixes=("admit-direct-writes",),
        off=("write-memory-off",),
        example_type=journal.WriteMemoryExample,
    ),
    _claim(
        "write-memory-escapes-bank",
        JRN,
        "write_memory joins each name to the bank unchecked (explore/commit.py:121-135), so a '../' name "
        "lands beside the bank, one with more '..' parts lands outside the run root and an absolute name "
        "anywhere on the host: a memory write lands outside the bank.",
        "confine-memory-names: check every name with upstream's _safe_memory_name before deleting "
        "anything, and refuse the write (infra) when one fails",
        journal.write_escape_examples,
        journal.check_write_escape,
        fixes=("confine-memory-names",),
        off=("write-memory-off",),
        example_type=journal.WriteEscapeExample,
    ),
    _claim(
        "stale-curriculum-notes",
        ("MEM-OBJ-curriculum-notes", "RT-RTE-curriculum-search"),
        "An empty or unreadable notes file reads as '' and keeps the old notes, so the next charter "
        "still shows them.",
        "empty-notes-clear: a present-but-empty (or unreadable) file clears the notes",
        evaluation.notes_examples,
        evaluation.check_notes,
        fixes=("empty-notes-clear",),
        off=("notes-off",),
        example_type=evaluation.NotesExample,
    ),
    _claim(
        "install-window-empty",
        ADM,
        "Between the backup rename and the stage rename the bank does not exist: a read there gives {}; "
        "a crash there also starts the next run empty with an orphaned backup.",
        "exchange-install: atomic exchange of stage and bank plus startup recovery",
        journal.install_window_examples,
        journal.check_install_window,
        fixes=("exchange-install",),
        off=("install-off",),
        example_type=journal.InstallWindowExample,
    ),
    _claim(
        "partial-wave-commit",
        ADM,
        "An audit rejection at branch k>=2 quarantines the run after branches 1..k-1 were installed: "
        "canonical changed and the wave outcome is never written.",
        "stage-wave: commit into a wave stage and publish once",
        waves.partial_wave_examples,
        waves.check_partial_wave,
        fixes=("stage-wave",),
        off=("commit-off",),
        example_type=waves.PartialWaveExample,
    ),
    _claim(
        "osworld-misreport",
        ("RT-RTE-task-execution", "MEM-OBJ-memory"),
        "OSWorld continues memory-OFF after a failed push while the record says "
        "frozen_host_snapshot_copy_in_only and nudges still name ~/.memory.",
        "osworld-record-off: clear env_memory_dir and record memory OFF",
        evaluation.osworld_examples,
        evaluation.check_osworld,
        fixes=("osworld-record-off",),
        off=("osworld-memory-off",),
        example_type=evaluation.OsworldExample,
    ),
    _claim(
        "diagnosis-edits-promoted",
        ("MEM-OBJ-learning-diagnosis", "RT-RTE-learning-admission"),
        "Bank edits made during the learning-diagnosis phase (after reconciliation) are pulled and "
        "installed.",
        "diagnosis-snapshot: take the candidate at reconciliation end",
        learning.diagnosis_examples,
        learning.check_diagnosis,
        fixes=("diagnosis-snapshot",),
        off=("commit-off",),
        example_type=learning.DiagnosisExample,
    ),
    _claim(
        "failed-pull-looks-empty",
        ADM,
        "Counterfactual: a raw pull_memory returns {} after 3 failures; a caller that commits it installs "
        "an empty bank. Upstream's _pull_terminal_memory count check (the 'fixed' direction) refuses it.",
        "upstream: _pull_terminal_memory (types, safe names, directory, find count)",
        learning.pull_examples,
        learning.check_pull,
        counterfactuals=("raw-pull",),
        off=("pull-off",),
        example_type=learning.PullExample,
    ),
]
