"""The tool surface the env publishes (``env/tools/registry.py``), as a stand-in (RT-OBJ-tool-registry).

Not modeled: the simulator's domain tools beyond ``query_balance``; the schema texts are paraphrases.
"""

from __future__ import annotations

import json
from typing import Any

EOS_CALL: dict[str, Any] = {
    "id": "call_eos",
    "type": "function",
    "function": {"name": "end_of_step", "arguments": "{}"},
}

TOOL_SCHEMAS: tuple[dict[str, Any], ...] = (
    {"type": "function", "function": {
        "name": "read_memory_doc",
        "description": "Read your long-term memory document for this run. Use it to recover long-term notes, "
                       "plans, supplier/product decisions, and open follow-ups that may have fallen out of "
                       "the context window. Returns empty content if no document exists.",
        "parameters": {"type": "object", "properties": {}, "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "write_memory_doc",
        "description": "Overwrite your long-term memory document (Markdown, max 256 KiB) with concise "
                       "structured strategy, product notes, open tasks and decisions. Every version is "
                       "archived.",
        "parameters": {"type": "object", "properties": {"content": {"type": "string"}},
                       "required": ["content"], "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "query_balance", "description": "Return the current cash balance.",
        "parameters": {"type": "object", "properties": {}, "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "end_of_step", "description": "Finish your turn for this hour and release the hook.",
        "parameters": {"type": "object", "properties": {}, "additionalProperties": False}}},
)  # fmt: skip
MUTATING_TOOLS = frozenset({"write_memory_doc"})
TOOLS_JSON = json.dumps(list(TOOL_SCHEMAS), ensure_ascii=False, sort_keys=True)
