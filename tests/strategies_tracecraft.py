"""Hypothesis strategies for Tracecraft keys, listings, cursor documents and redaction inputs."""

from __future__ import annotations

from hypothesis import strategies as st

PREFIXES = ("messages/bob/", "messages/_broadcast/", "memory/_history/k/", "")
AGENT_CHARS = "abz09_-.xAZ"
LEAF_CHARS = "0123456789_abx.-/Z"

prefixes = st.sampled_from(PREFIXES)
agents = st.text(AGENT_CHARS, min_size=0, max_size=6)
ts_values = st.one_of(
    st.integers(0, 10**19 - 1),
    st.integers(1_767_571_200 * 10**9, 1_767_571_200 * 10**9 + 2 * 3600 * 10**9),
)
hex8 = st.text("0123456789abcdef", min_size=8, max_size=8)


@st.composite
def append_keys(draw: st.DrawFn, prefix: str | None = None) -> str:
    """A well-formed append key under *prefix* (or a drawn prefix)."""
    p = prefix if prefix is not None else draw(prefixes)
    return f"{p}{draw(ts_values)}_{draw(agents)}_{draw(hex8)}.json"


@st.composite
def keys(draw: st.DrawFn, prefix: str | None = None) -> str:
    """A listed key under *prefix*: well-formed, junk leaves, nested, reserved, or a truncated watermark."""
    p = prefix if prefix is not None else draw(prefixes)
    return draw(
        st.one_of(
            append_keys(p),
            st.builds(lambda leaf: p + leaf, st.text(LEAF_CHARS, max_size=12)),
            st.just(p + "_cursor.json"),
            st.builds(lambda t: p + str(t), ts_values),
            st.text(LEAF_CHARS + "mesg", max_size=14),
        )
    )


@st.composite
def listings(draw: st.DrawFn, prefix: str) -> list[str]:
    """A sorted, distinct listing under *prefix*."""
    return sorted(set(draw(st.lists(keys(prefix), max_size=12))))


@st.composite
def streams(draw: st.DrawFn, prefix: str) -> dict[str, object]:
    """A cursor stream as stored: watermark None or a truncated key, seen a list of keys."""
    wm = draw(st.one_of(st.none(), st.builds(lambda t: prefix + str(t), ts_values), keys(prefix)))
    seen = draw(st.lists(keys(prefix), max_size=6))
    return {"watermark": wm, "seen": seen}


json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text("ab_/", max_size=4))


@st.composite
def cursor_docs(draw: st.DrawFn) -> object:
    """A cursor document: current format, legacy strings, junk values, or not a dict at all."""
    stream_value = st.one_of(
        streams("messages/bob/"),
        st.text("messages/bob0123_", max_size=20),
        st.fixed_dictionaries(
            {}, optional={"watermark": json_scalars, "seen": st.lists(json_scalars, max_size=4)}
        ),
        json_scalars,
    )
    return draw(
        st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {},
                optional={
                    "direct": stream_value,
                    "broadcast": stream_value,
                    "updated_at": st.text(max_size=3),
                },
            ),
            json_scalars,
        )
    )


SECRET_SAMPLES = (
    b"AKIAIOSFODNN7EXAMPLE", b"ASIAABCDEFGHIJKLMNOP", b"sk-ant-api03-abcdefghijklmnopqrstuv",
    b"sk-proj-abcdefghijklmnopqrstu", b"sk-abcdefghijklmnopqrstuvwxyz", b"hf_" + b"a" * 30,
    b"ghp_" + b"B" * 30, b"xoxb-1234567890-abc", b"Bearer abcdefghijklmnopqrst.uv",
)  # fmt: skip


@st.composite
def blobs(draw: st.DrawFn) -> bytes:
    """Bytes mixing noise, whole secrets and cut secrets."""
    pieces = draw(
        st.lists(
            st.one_of(
                st.binary(max_size=8),
                st.text("AKISsk-anthproj_fgxobBearer 0123456789ABCDEFGHIJZ\n", max_size=24).map(str.encode),
                st.sampled_from(SECRET_SAMPLES),
                st.tuples(st.sampled_from(SECRET_SAMPLES), st.integers(1, 30)).map(lambda t: t[0][: t[1]]),
            ),
            max_size=6,
        )
    )
    return b"".join(pieces)


counts = st.dictionaries(
    st.sampled_from(["aws_access_key", "hf_token", "x", "bearer_token"]), st.integers(0, 5), max_size=4
)
