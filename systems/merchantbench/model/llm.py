"""Provider errors of the ReAct baseline: classification and the error stand-ins (RT-CMP-openai-model).

Upstream: ``agent/baselines/react_160k_compact_30k.py`` (``_llm_detail_code``, retry delays).
"""

from __future__ import annotations

from systems.merchantbench.state import LLMError


def classify_llm_error(text: str) -> str:
    """Upstream's classification of ``"{Type}: {e}"`` (first match wins)."""
    low = text.lower()
    if "invalidparameter" in low and ("function.arguments" in text or "must be in json format" in low):
        return "InvalidParameter"
    for code in ("Throttling.BurstRate", "Throttling.RateQuota", "Throttling.AllocationQuota"):
        if code in text:
            return code
    if "Forbidden" in text:
        return "Forbidden"
    markers = ("connection", "timeout", "timed out", " 500", " 502", " 503", " 504")
    if any(m in low for m in markers):
        return "transient"
    return "unknown"


LLM_ERRORS: dict[str, LLMError] = {
    "invalid": LLMError("BadRequestError", "InvalidParameter: function.arguments must be in JSON format"),
    "burst": LLMError("RateLimitError", "Throttling.BurstRate: request rate increased too quickly"),
    "rate": LLMError("RateLimitError", "Throttling.RateQuota: requests rate limit exceeded"),
    "allocation": LLMError("RateLimitError", "Throttling.AllocationQuota: free allocated quota exceeded"),
    "forbidden": LLMError("PermissionDeniedError", "Error code: 403 - Forbidden: inappropriate content"),
    "transient": LLMError("APIConnectionError", "Connection error: timed out"),
    "unknown": LLMError("APIError", "something unexpected"),
}


class LLMFailure(Exception):
    """The LLM call failed for good (no retry left, or a code that is not retried)."""

    def __init__(self, error: LLMError, code: str, retries: int) -> None:
        super().__init__(str(error))
        self.error, self.code, self.retries = error, code, retries
