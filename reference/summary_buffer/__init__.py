"""summary-buffer: recent messages up to a token limit, older ones folded into a running summary, as
LangChain's ``ConversationSummaryBufferMemory`` keeps them (a reference design of a documented algorithm,
issue 39). The summary is a seeded stand-in (:mod:`reference.summary_buffer.policies`)."""

from reference.summary_buffer.model import SummaryBuffer
from reference.summary_buffer.policies import Summarizer

__all__ = ["Summarizer", "SummaryBuffer"]
