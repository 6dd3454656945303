"""Operations, simplifications and record coverage of the summary-buffer reference design."""

from sim.fidelity import Coverage, Operation

OPERATIONS = [
    Operation("save_context", ("SBM-ALG-prune", "SBM-OPT-max-token-limit"),
              "append the message; pop from the front while over max_token_limit; fold what was popped"),
    Operation("predict_new_summary", ("SBM-POL-summarizer",),
              "the seeded stand-in: keep folded facts or turns with probability p, squeeze past the cap"),
    Operation("load_memory_variables", ("SBM-ALG-summary-first",),
              "the summary as a system message, then the buffer"),
]  # fmt: skip
NOT_MODELED: list[str] = [
    "Not modeled: the summarizing LLM (reason: memsim has no model; effect: what survives a fold is the "
    "seeded policy of the summary's stand-in text, a knob, not a model's judgement).",
    "Not modeled: save_context's (input, output) pairs (reason: memsim saves each turn as one message and "
    "prunes after it; effect: the buffer is the same, a pair's fold may be split in two).",
]
_T = "tests/test_reference_summary_buffer.py"
_PRUNE = f"{_T}::test_prune_pops_from_the_front_until_within_the_limit"
COVERAGE = {
    "SBM-ALG-prune": Coverage(("model.SummaryBuffer.add",), (_PRUNE,)),
    "SBM-ALG-summary-first": Coverage(
        ("model.SummaryBuffer.context",), (f"{_T}::test_the_summary_is_a_system_message_before_the_buffer",)
    ),
    "SBM-OPT-max-token-limit": Coverage(("adapter.Adapter",), (_PRUNE,)),
    "SBM-POL-summarizer": Coverage(("policies.Summarizer",), (f"{_T}::test_claim_directions",)),
}
