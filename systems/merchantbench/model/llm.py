"""Provider errors of the ReAct baseline: classification and the error stand-ins (RT-CMP-openai-model).

Upstream: ``agent/baselines/react_160k_compact_30k.py`` (``_llm_detail_code``, retry delays).
"""

from __future__ import annotations

from systems.merchantbench.state import LLMError

TRANSIENT_MARKERS = (
    "APIConnectionError",
    "APITimeoutError",
    "Connection error",
    "ReadTimeout",
    "Timeout",
    "timed out",
)


def classify_llm_error(text: str, status: int | None = None) -> str:
    """Upstream's ``_llm_detail_code`` (react 267-295; Corrections 9) of ``"{Type}: {e}"``, first match
    wins, every test case-sensitive: ``InvalidParameter`` (with ``function.arguments`` or ``must be in
    JSON format``), the three Throttling codes, ``Forbidden``, ``transient`` (a marker of
    :data:`TRANSIENT_MARKERS`, else ``e.response.status_code`` *status* in 500/502/503/504), else
    ``unknown``. The text is never searched for status numbers."""
    if "InvalidParameter" in text and ("function.arguments" in text or "must be in JSON format" in text):
        return "InvalidParameter"
    for code in ("Throttling.BurstRate", "Throttling.RateQuota", "Throttling.AllocationQuota"):
        if code in text:
            return code
    if "Forbidden" in text:
        return "Forbidden"
    if any(m in text for m in TRANSIENT_MARKERS):
        return "transient"
    if status in (500, 502, 503, 504):
        return "transient"
    return "unknown"


LLM_ERRORS: dict[str, LLMError] = {
    "invalid": LLMError("BadRequestError", "InvalidParameter: function.arguments must be in JSON format"),
    "burst": LLMError("RateLimitError", "Throttling.BurstRate: request rate increased too quickly"),
    "rate": LLMError("RateLimitError", "Throttling.RateQuota: requests rate limit exceeded"),
    "allocation": LLMError("RateLimitError", "Throttling.AllocationQuota: free allocated quota exceeded"),
    "forbidden": LLMError("PermissionDeniedError", "Error code: 403 - Forbidden: inappropriate content"),
    "transient": LLMError("APIConnectionError", "Connection error."),
    "server": LLMError("InternalServerError", "Error code: 500 - internal error", status=500),
    "unknown": LLMError("APIError", "something unexpected"),
}


class LLMFailure(Exception):
    """The LLM call failed for good (no retry left, or a code that is not retried)."""

    def __init__(self, error: LLMError, code: str, retries: int) -> None:
        super().__init__(str(error))
        self.error, self.code, self.retries = error, code, retries
