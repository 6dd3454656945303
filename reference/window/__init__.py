"""window: the most recent messages that fit the window, as LangChain's ``trim_messages`` with
``strategy="last"`` keeps them (a reference design of a documented algorithm, issue 39).

With its defaults it is the conversation benchmark's most-recent-turns baseline (issue 38): the system
prompt, then the newest turns whose exact token counts fit the window, starting on a human turn.
"""

from reference.window.model import Window, trim_last

__all__ = ["Window", "trim_last"]
