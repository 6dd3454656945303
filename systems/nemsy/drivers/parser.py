"""Drivers of the ingest-parser claims (fidelity note §2.3, §3 item 12): lost sections, a stray ``#``,
an ``md`` fence and an empty summary, over one space of drawn model replies."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sim.claims import Verdict
from sim.engine import Simulation
from sim.variant import Variant
from systems.nemsy import properties as pr
from systems.nemsy.drivers.common import Example, Int, ListOf, OneOf, fact, fact_id, st, system

EMBEDDED = (None, "## bare", "## ruled", "### bare", "### ruled", "## 列表")
FENCES = ("none", "bare", "markdown", "md")
PARSER = Example(
    "ParserExample",
    sections=ListOf(OneOf("##", "###"), max_length=3),
    embedded=OneOf(*EMBEDDED),
    at=Int(0, 3),
    fence=OneOf(*FENCES),
    questions=bool,
)


def parser_strategy() -> Any:
    s = st()
    return s.fixed_dictionaries(
        {
            "sections": s.lists(s.sampled_from(["##", "###"]), max_size=3),
            "embedded": s.sampled_from(EMBEDDED),
            "at": s.integers(0, 3),
            "fence": s.sampled_from(FENCES),
            "questions": s.booleans(),
        }
    )


def build_response(ex: dict[str, Any]) -> tuple[str, list[str], bool]:
    """The model reply of a parser example, the facts the page must keep, and whether the summary has
    content ahead of any questions heading (a section, or a kept ``## 待探索问题列表`` heading)."""
    blocks: list[str] = []
    facts: list[str] = []
    lead = bool(ex["sections"])
    for k, level in enumerate(ex["sections"]):
        blocks.append(f"{level} Part {k}\n\n{fact(k)}")
        facts.append(fact_id(k))
    if ex["embedded"] is not None:
        level, kind = ex["embedded"].split(" ")
        heading = f"{level} 待探索问题列表" if kind == "列表" else f"{level} 待探索问题"
        block = f"{heading}\n\n- 还有什么？"
        if kind == "ruled":
            block = "---\n\n" + block
        blocks.insert(min(ex["at"], len(blocks)), block)
        lead = kind == "列表" or min(ex["at"], len(ex["sections"])) > 0
    summary = "\n\n".join(blocks)
    if summary and ex["fence"] != "none":
        info = {"bare": "", "markdown": "markdown", "md": "md"}[ex["fence"]]
        summary = f"```{info}\n{summary}\n```"
    text = f"---SUMMARY---\n{summary}\n"
    if ex["questions"]:
        text += "---QUESTIONS---\n- 下一步？\n"
    return text, facts, lead


ParserCheck = Callable[[str | None], Verdict]


def _parser_run(sim: Simulation, ex: dict[str, Any], variant: Variant, check: ParserCheck) -> Verdict:
    """Parse the drawn reply with the design's parser: the check, and a page for every reply with content
    ahead of its questions (the parser still writes pages)."""
    text, _, has_content = build_response(ex)
    page = system(sim, variant).parse_reply(text)
    v = check(page)
    if v.holds and has_content and page is None:
        return Verdict.violated("a summary with content was rejected")
    return v


def parser_sections_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Parse a drawn reply: the facts of every non-question section survive."""
    facts = build_response(ex)[1]
    return _parser_run(sim, ex, variant, lambda r: pr.check_sections_kept(r, facts))


def parser_stray_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Parse a drawn reply: no line made only of '#' remains, and a reply with content gets a page."""
    return _parser_run(sim, ex, variant, pr.check_no_stray_hash)


def parser_fence_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Parse a drawn reply: no code-fence line is written, and a reply with content gets a page."""
    return _parser_run(sim, ex, variant, pr.check_no_fence_line)


def parser_empty_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Ingest a source whose model reply is the drawn one: no empty page is written, a source without a
    page is not recorded ``done``, and a summary with content ahead of its questions is written and
    recorded done."""
    text, _, has_content = build_response(ex)
    n = system(sim, variant, responder=lambda title, content, ctx: text)
    n.write_source("alpha.md", "Notes about alpha.")
    out = n.cli_ingest("alpha.md")
    page = out[0].page if out else None
    rec = n.ledger_record("vault/origin-sources/alpha.md")
    status = rec.status if rec is not None else None
    body = n.read_wiki_note(page) if page else None
    if body is not None and not pr.has_text(body):
        return Verdict.violated(f"a summary without content was written as {body!r}")
    if body is None and status == "done":
        return Verdict.violated(
            f"no page was written but the ledger says done (wiki_page={rec and rec.wiki_page})"
        )
    if has_content and (body is None or status != "done"):
        return Verdict.violated(f"a summary with content was rejected (ledger: {status})")
    return Verdict.ok()
