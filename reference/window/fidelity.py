"""Operations, simplifications and record coverage of the window reference design."""

from sim.fidelity import Coverage, Operation

OPERATIONS = [
    Operation(
        "trim_messages",
        ("WIN-ALG-trim-last", "WIN-OPT-include-system", "WIN-OPT-start-on", "WIN-OPT-no-partial"),
        "the system message, then the newest messages within max_tokens, starting on a human message",
    ),
    Operation("token_counter", ("WIN-CNT-token-counter",), "the summed exact cl100k count of the messages"),
]
NOT_MODELED: list[str] = [
    "Not modeled: allow_partial=True and text_splitter (reason: the design fixes allow_partial=False; "
    "effect: none on its requests).",
    "Not modeled: end_on (reason: the request always ends on the question or the newest message; "
    "effect: none).",
    "Not modeled: a question longer than the window on its own (reason: a request must carry its question; "
    "effect: that request is sent with the question appended, and flagged over the window).",
]
_T = "tests/test_reference_window.py"
COVERAGE = {
    "WIN-ALG-trim-last": Coverage(
        ("model.trim_last",), (f"{_T}::test_trim_last_keeps_what_trim_messages_keeps",)
    ),
    "WIN-OPT-include-system": Coverage(
        ("model.trim_last",), (f"{_T}::test_trim_last_keeps_what_trim_messages_keeps",)
    ),
    "WIN-OPT-start-on": Coverage(
        ("model.Window.context",), (f"{_T}::test_start_on_human_cuts_a_fitting_ai_turn",)
    ),
    "WIN-OPT-no-partial": Coverage(
        ("model.trim_last",), (f"{_T}::test_trim_last_keeps_what_trim_messages_keeps",)
    ),
    "WIN-CNT-token-counter": Coverage(
        ("model.trim_last",), (f"{_T}::test_trim_last_keeps_what_trim_messages_keeps",)
    ),
}
