"""The long Tracecraft team (scenarios/tracecraft_long_team.py) runs in flat memory without changing what
it prints: its bucket's cold tier and its hosts' released transcript bytes are where objects are held, not
what a read sees."""

from __future__ import annotations

import pytest

import scenarios.tracecraft_long_team as team
from sim.objects import MemoryStore
from sim.scenario import execute
from systems.tracecraft.model.retention import HostTree, TailStore

STEPS = 1_500


def _run(monkeypatch: pytest.MonkeyPatch, store: object) -> list[str]:
    monkeypatch.setattr(team, "TailStore", lambda keep_lines: store)
    return execute("tracecraft_long_team", params={"steps": STEPS, "checkpoints": 3})


def test_a_small_hot_tier_prints_what_a_whole_bucket_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every object moved to the cold tier is still listed and read (mail, history, parts, metas)."""
    small = TailStore(keep_lines=team.KEEP_LINES, hot_objects=32)
    spilled = _run(monkeypatch, small)
    whole = _run(monkeypatch, MemoryStore())
    assert spilled == whole
    assert small._cold_range != ("", "")  # the run did spill
    assert len(small._objects) <= 32


def test_hosts_hold_only_unmirrored_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each agent's home lets go of what its mirror uploaded: the session file holds at most the bytes of
    the operations since that agent's last mirror."""
    homes: list[HostTree] = []

    class Recorded(HostTree):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            homes.append(self)

    monkeypatch.setattr(team, "HostTree", Recorded)
    execute("tracecraft_long_team", params={"steps": STEPS, "mirror_every": 4})
    assert len(homes) == len(team.AGENTS)
    for home in homes:
        held = max(len(data) for path, data in home._files.items() if path.endswith(".jsonl"))
        assert held < 4 * 200  # under four short JSONL lines; the whole transcript is many kilobytes
