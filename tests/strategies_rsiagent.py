"""Hypothesis strategies shared by the RSIAgent tests (banks, names, messages)."""

from hypothesis import strategies as st

from systems.rsiagent.state import Message

NAMES = ("a.md", "b.md", "notes/c.md", "tools/d.py")
LEAK = "open the quarterly budget spreadsheet and sort the second column"


def fact_texts() -> st.SearchStrategy[str]:
    """A short lesson holding one fact token."""
    return st.builds(
        lambda i, v: f"lesson FACT-{i:04d}={v}", st.integers(1, 99), st.sampled_from(["red", "teal"])
    )


def banks(max_size: int = 3) -> st.SearchStrategy[dict[str, bytes]]:
    """A small bank of safe names."""
    return st.dictionaries(st.sampled_from(NAMES), fact_texts().map(str.encode), max_size=max_size)


def messages(max_chars: int = 300) -> st.SearchStrategy[Message]:
    """A chat message with optional reasoning."""
    return st.builds(
        Message,
        st.sampled_from(["assistant", "user"]),
        st.text("abc FACT-0123=red\n", max_size=max_chars),
        st.text("r", max_size=20),
    )
