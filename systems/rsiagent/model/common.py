"""Constants, upstream names in comments, and the exceptions of the RSIAgent model."""

from __future__ import annotations

import re

SYSTEM = "rsiagent"

# -- constants (upstream names in comments) ------------------------------------------------------------
SHINGLE_N = 8  # _N
NEAR_WINDOW = 12  # _authorized_near_shingle: 8 words in order inside 12 (at most 4 skipped)
CHUNK = 3000  # _CHUNK: base64 characters per upload append
PULL_ATTEMPTS = 3
PULL_BACKOFF_S = 15.0
FOLD_HEAD, FOLD_TAIL = 1500, 2500
ELISION = "\n…[trace middle elided]…\n"
WORKLOG_MARKER = (
    "\n[... WORK LOG truncated at the char cap — least-important (re-derivable) detail dropped; "
    "the machine still holds ground truth, re-probe if needed]"
)
DIGEST_CHARS = 220
KEEP_FLOOR = 6
SYNTH_MESSAGES = 60
REVIEW_MESSAGES, REVIEW_MESSAGE_CHARS = 6, 1500
REVIEW_OUT_CAP = 2500  # _strategy_review: (out or "").strip()[:2500]
RESUME_MIN_ITERS, RESUME_MIN_WALL_S = 10, 300
MAX_PARALLEL = 4  # evolve_parallel_phase1(max_parallel=4): host scheduling capacity, not wave width
NO_PROGRESS_SEGMENTS = 3
ELIGIBLE_STALL = "stalled"
WORK_PHASE_NOTICE = "Edits you make to durable memory during this work phase are discarded."
DECISION_RE = re.compile(r"^DECISION: (PROJECT|CONVERGED|STALLED)$")
DECISION_PHASE1_RE = re.compile(r"^DECISION: (PROJECT|SATURATED|STALLED)$")
VERDICT_RE = re.compile(r"^VERDICT: (PASS|FAIL)$")
BRANCH_ID_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
PROJECT_ROOT = "/home/user/evolution_project"
OSWORLD_MODE = "frozen_host_snapshot_copy_in_only"


class PracticeInfrastructureError(Exception):
    """Upstream's infra outcome: transport or boundary plumbing failed; the run ends ``infra``."""


class BoundaryAuditError(Exception):
    """The silent audit rejected part of a terminal candidate; the whole run ends ``quarantined``."""


class UnsafeMemoryName(PracticeInfrastructureError):
    """A bank name is absolute, empty, or has an empty/``.``/``..`` part (upstream: "candidate memory
    contains an unsafe path", an infra error)."""


class VerifierProtocolError(ValueError):
    """The verifier report has no, or more than one, ``VERDICT:`` line outside code fences."""


class AgenticVerifierNoProgressError(RuntimeError):
    """Three consecutive verifier segments made no progress."""


class FrozenMemoryUploadError(RuntimeError):
    """ALE: "Frozen evaluation memory upload failed"."""
