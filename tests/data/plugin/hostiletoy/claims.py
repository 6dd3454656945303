"""One claim that never fails, so its faithful direction must come out wrong (``memsim claims`` exits 1).

Its example is a list of step costs; the check spends one loop iteration per unit of cost, so an example
with a 999,999,999 cost would run for minutes: ``example_type`` bounds each cost at 1,000, and
``memsim replay`` must refuse a saved example outside it before running anything.
"""

from typing import Annotated, Any

from hypothesis import strategies as st
from pydantic import Field

from sim.claims import Claim, Verdict

Cost = Annotated[int, Field(ge=0, le=1_000)]
ExampleType = Annotated[list[Cost], Field(max_length=20)]


def _strategy() -> Any:
    return st.lists(st.integers(0, 1_000), max_size=20)


def _check(sim: Any, example: list[int], variant: Any) -> Verdict:
    spent = 0
    for cost in example:
        for _ in range(cost):
            spent += 1
    return Verdict(True, f"spent {spent}")


CLAIMS = [
    Claim(
        id="hostiletoy.never-fails",
        system="hostiletoy",
        records=("TOY-1",),
        statement="A property that always holds (so the faithful search finds nothing).",
        fix="cap: nothing to fix",
        strategy=_strategy,
        check=_check,
        fixes=("cap",),
        off=("cap-off",),
        example_type=ExampleType,
    )
]
