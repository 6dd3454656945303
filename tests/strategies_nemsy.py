"""Hypothesis strategies shared by the Nemsy tests."""

from hypothesis import strategies as st

from systems.nemsy.policies import RESPONSE_FAULTS

#: Titles that exercise the sanitizer: punctuation, spaces, CJK, path separators.
TITLE_ALPHABET = st.sampled_from([*"abcXYZ019 -_./:?#+\t测试摄取é", "  "])


def titles() -> st.SearchStrategy[str]:
    """Source titles (stems a user might have)."""
    return st.lists(TITLE_ALPHABET, min_size=0, max_size=12).map("".join)


def source_names() -> st.SearchStrategy[str]:
    """Raw source file names (relative to the raw root), some of them colliding after sanitizing."""
    return st.sampled_from(
        ["alpha.md", "beta.md", "d1/notes.md", "d2/notes.md", "C++ Notes.md", "C# Notes.md", "gamma.txt"]
    )


def response_faults() -> st.SearchStrategy[str]:
    """The ingest responder's fault modes."""
    return st.sampled_from(RESPONSE_FAULTS)
