"""The tool surface the env publishes (``env/tools/registry.py``, ``GET /runs/<rid>/tools/schema``), as a
stand-in of upstream's size (RT-OBJ-tool-registry).

Upstream publishes 26 tools with the default denylist (``env/scenarios/default.yaml`` denies
``market_brief`` and ``hot_search_terms``): the registry's 26 specs in order, minus the two denied, plus
``get_observation`` and ``list_tools`` that ``env/tools/observation.py`` appends at import. Serialized as
memsim serializes a schema list (``json.dumps(list, ensure_ascii=False, sort_keys=True)``), that list is
:data:`UPSTREAM_SCHEMA_TOKENS` cl100k tokens (measured at 47eafeae; 17,210 characters, 4,302 by the
design's chars/4 estimate). The request's tool schemas are counted in the provider's prompt tokens and
never subtracted from B, so their size moves the trigger (claims ``silent-slide``, ``no-provider-ceiling``).

The stand-in keeps upstream's tool names and order. The four tools the model runs (``read_memory_doc``,
``write_memory_doc``, ``query_balance``, ``end_of_step``) have their real parameter schemas and
paraphrased descriptions; every other tool has no parameters and a filler description, sized so that the
published list counts exactly the requested number of tokens (:func:`tool_schemas`; the benchmark knob
``schema_tokens``). Not modeled: the domain tools' parameters and handlers (a call returns ``{"ok": true}``).
"""

from __future__ import annotations

import json
import random
from functools import cache
from typing import Any

from sim.text import filler
from sim.tokens import count_tokens

UPSTREAM_SCHEMA_TOKENS = 4_127
"""cl100k tokens of the 26-tool schema list upstream publishes with the default denylist (see above)."""

DEFAULT_DENYLIST = ("market_brief", "hot_search_terms")
"""``agent.tool_denylist`` of ``env/scenarios/default.yaml``."""

#: Every tool of upstream's registry in its order (``env/tools/registry.py``), then the two that
#: ``env/tools/observation.py`` appends.
UPSTREAM_TOOL_NAMES = (
    "market_brief", "hot_search_terms", "get_daily_report", "search_products", "get_product_detail",
    "get_supplier_profile", "list_supplier_products", "list_product", "delist_product", "adjust_price",
    "review_my_listings", "query_my_listings", "query_balance", "get_store_snapshot",
    "query_platform_rules", "query_my_orders", "query_open_orders", "query_order_updates",
    "query_order_detail", "query_supply_chain_anomalies", "query_store_performance",
    "query_product_sales_stats", "query_cash_pipeline", "read_memory_doc", "write_memory_doc",
    "end_of_step", "get_observation", "list_tools",
)  # fmt: skip

MUTATING_TOOLS = frozenset({"list_product", "delist_product", "adjust_price", "write_memory_doc"})
"""Specs with ``mutating=True``: their calls go through the idempotency cache."""

_NO_PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {},
    "required": [],
    "additionalProperties": False,
}

#: The tools the model runs, with upstream's parameter schemas and paraphrased descriptions.
MODELED: dict[str, tuple[str, dict[str, Any]]] = {
    "read_memory_doc": (
        "Read your long-term memory document for this run. Use it to recover long-term notes, plans, "
        "supplier/product decisions, and open follow-ups that may have fallen out of the context window. "
        "Returns empty content if no document exists.",
        _NO_PARAMS,
    ),
    "write_memory_doc": (
        "Overwrite your long-term memory document (Markdown, max 256 KiB) with concise structured "
        "strategy, product notes, open tasks and decisions. Every version is archived.",
        {
            "type": "object",
            "properties": {"content": {"type": "string", "description": "The whole Markdown document."}},
            "required": ["content"],
            "additionalProperties": False,
        },
    ),
    "query_balance": ("Return the current cash balance.", _NO_PARAMS),
    "end_of_step": ("Finish your turn for this hour and release the hook.", _NO_PARAMS),
}

EOS_CALL: dict[str, Any] = {
    "id": "call_eos",
    "type": "function",
    "function": {"name": "end_of_step", "arguments": "{}"},
}
"""``_end_of_step_tool_call()`` of the ReAct baseline."""


def _schema(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


def _dump(schemas: list[dict[str, Any]]) -> str:
    return json.dumps(schemas, ensure_ascii=False, sort_keys=True)


@cache
def _filler_words() -> tuple[str, ...]:
    # A constant text (the same in every process), like sim.text's sentence pool.
    return tuple(filler(random.Random(0x5C4E_3A), 400_000).split())


def _build(tokens: int, denylist: frozenset[str]) -> tuple[dict[str, Any], ...]:
    words = _filler_words()
    padded = [n for n in UPSTREAM_TOOL_NAMES if n not in MODELED and n not in denylist]
    dropped: set[str] = set()

    def schemas(n_words: int, suffix: str = "") -> list[dict[str, Any]]:
        out = []
        for name in UPSTREAM_TOOL_NAMES:
            if name in denylist or name in dropped:
                continue
            if name in MODELED:
                out.append(_schema(name, *MODELED[name]))
                continue
            k = padded.index(name)
            desc = " ".join(words[k : n_words : len(padded)]) if padded else ""
            if suffix and k == len(padded) - 1:
                desc += suffix
            out.append(_schema(name, desc, _NO_PARAMS))
        return out

    while padded and count_tokens(_dump(schemas(0))) > tokens:  # below the skeleton: fewer stand-ins
        dropped.add(padded.pop())
    lo, hi = 0, len(words)
    if not padded or count_tokens(_dump(schemas(0))) >= tokens:
        return tuple(schemas(0))
    while lo < hi:  # the most filler words whose list is at most *tokens*
        mid = (lo + hi + 1) // 2
        if count_tokens(_dump(schemas(mid))) <= tokens:
            lo = mid
        else:
            hi = mid - 1
    best = schemas(lo)
    for suffix in ("", ".", " a", " a.", " a b", ","):  # close the last token or two
        cand = schemas(lo, suffix)
        if count_tokens(_dump(cand)) == tokens:
            return tuple(cand)
    return tuple(best)


@cache
def registry_schemas(tokens: int = UPSTREAM_SCHEMA_TOKENS) -> tuple[dict[str, Any], ...]:
    """Every tool of the stand-in registry (no denylist), the published list with the default denylist
    counting *tokens*; ``market_brief`` and ``hot_search_terms`` get a fixed short filler description."""
    published = {s["function"]["name"]: s for s in tool_schemas(tokens)}
    words = _filler_words()
    out = []
    for i, name in enumerate(UPSTREAM_TOOL_NAMES):
        if name in published:
            out.append(published[name])
        else:
            out.append(_schema(name, " ".join(words[i * 60 : i * 60 + 60]), _NO_PARAMS))
    return tuple(out)


@cache
def tool_parameters(tokens: int = UPSTREAM_SCHEMA_TOKENS) -> dict[str, dict[str, Any]]:
    """Each registry tool's parameter schema, by name."""
    return {s["function"]["name"]: s["function"]["parameters"] for s in registry_schemas(tokens)}


@cache
def tool_schemas(
    tokens: int = UPSTREAM_SCHEMA_TOKENS, denylist: frozenset[str] = frozenset(DEFAULT_DENYLIST)
) -> tuple[dict[str, Any], ...]:
    """The published schema list (``openai_schema_dump(denylist)``): with the default denylist it counts
    exactly *tokens* cl100k tokens (the filler is closed to the exact count, else to within a token below
    it). Below the 26 tools' bare skeleton (1,290 tokens) stand-in tools are left out from the end, down to
    the four modeled tools alone. Another denylist drops its tools from the registry's list."""
    if denylist == frozenset(DEFAULT_DENYLIST):
        return _build(tokens, denylist)
    return tuple(s for s in registry_schemas(tokens) if s["function"]["name"] not in denylist)


@cache
def tools_json(
    tokens: int = UPSTREAM_SCHEMA_TOKENS, denylist: frozenset[str] = frozenset(DEFAULT_DENYLIST)
) -> str:
    """The published list as one text (what the provider counts for ``tools=``)."""
    return _dump(list(tool_schemas(tokens, denylist)))


def __getattr__(name: str) -> Any:
    # TOOL_SCHEMAS and TOOLS_JSON (the default stand-in) are built on first use: building counts tokens.
    if name == "TOOL_SCHEMAS":
        return tool_schemas()
    if name == "TOOLS_JSON":
        return tools_json()
    raise AttributeError(name)
