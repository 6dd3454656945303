"""Each RSIAgent claim's exhaustive scope (``memsim claims --exhaustive``): the values it probes.

Bank files are two or three names, lessons and facts one or two distinct ids, waves two branches with one
action per file (the strategy's flat shape), observation sizes at the fold thresholds the drivers use
(300 characters, under the high water; 4,200, over it), and a review window long enough to push a fact out
of the pivot's last messages (7 messages). Lists the strategies draw without repeats (``unique=True``) are
declared ``unique`` here too.
"""

from __future__ import annotations

from sim.exhaustive import Scope, derive, mapping, record, seq, tup, values
from sim.exhaustive.scope import Record
from systems.rsiagent.drivers import caching, evaluation, journal, learning, waves, worklog
from systems.rsiagent.drivers.common import NAMES
from systems.rsiagent.drivers.waves import WAVE_ACTIONS, WAVE_ACTIONS_STALE, WAVE_NAMES

_TWO = values(*NAMES[:2])
_TREE = mapping(NAMES[:2], values(1, 2), 1, min_keys=1)


def _branch(actions: tuple[str, ...]) -> Record:
    return record(**{n: values(*actions) for n in WAVE_NAMES})


SCOPES: dict[str, Scope] = {
    "work-lesson-lost": derive(
        learning.WorkLessonExample,
        paths={
            "lessons": seq(tup(_TWO, values(1, 2)), 2, cap=3),
            "add": seq(tup(_TWO, values(10, 11)), 1, cap=2),
            "delete": seq(_TWO, 1, cap=3, unique=True),
        },
        note="two files, two lessons at most, one distilled lesson and one withdrawal",
    ),
    "journal-episode-overwrite": derive(
        journal.JournalIdsExample,
        max_len=2,
        paths={"cycles.*.*": _TREE},
        note="one file per tree, two cycles",
    ),
    "journal-ahead-of-install": derive(journal.JournalInstallExample, max_len=2, paths={"commits.*": _TREE}),
    "wave-lost-update-counterfactual": derive(
        waves.WaveExample,
        paths={
            "initial": values([], ["a.md"], ["a.md", "b.md"]),
            "branches.*": _branch(WAVE_ACTIONS),
        },
        note="two branches over no, one or both files",
    ),
    "wave-stale-rewrite": derive(
        waves.StaleWaveExample,
        paths={
            "initial": values(["a.md"], ["a.md", "b.md"]),
            "branches.*": _branch(WAVE_ACTIONS_STALE),
        },
        note="two branches over one or both files",
        deep={"branches.*": _branch(WAVE_ACTIONS_STALE[:3])},
        deep_note="up to three branches that keep, add or rewrite",
    ),
    "fold-mid-message-loss": derive(
        worklog.FoldMiddleExample,
        max_len=3,
        paths={"envs.*": tup(values(300, 4200), seq(values(0, 4), 1, cap=2))},
        note="observations of 300 (under the high water) and 4,200 characters, a fact at the start or middle",
        deep={"envs.*": tup(values(300, 4200), seq(values(4), 1, cap=2))},
        deep_note="a fact in the middle or none",
    ),
    "digest-fallback-wipes-log": derive(worklog.DigestExample, max_len=3, paths={"envs.*": values(20, 300)}),
    "fold-guard-stuck": derive(worklog.GuardExample),
    "resume-truncates-log": derive(worklog.HandoffExample, facts=values(1, 2, 7, 20, 40)),
    "pivot-review-blind": derive(
        worklog.ReviewExample,
        max_len=7,
        paths={"messages.*": values(0, 1)},
        note="up to 7 history messages, past the pivot review's window",
    ),
    "write-memory-bypass": derive(journal.WriteMemoryExample),
    "stale-curriculum-notes": derive(evaluation.NotesExample),
    "install-window-empty": derive(
        journal.InstallWindowExample,
        paths={
            "old": seq(values(*NAMES), 2, cap=2, unique=True),
            "new": seq(values(*NAMES), 2, cap=2, unique=True),
        },
    ),
    "partial-wave-commit": derive(waves.PartialWaveExample),
    "osworld-misreport": derive(
        evaluation.OsworldExample, paths={"files": seq(values(*NAMES), 2, cap=3, unique=True)}
    ),
    "diagnosis-edits-promoted": derive(learning.DiagnosisExample),
    "failed-pull-looks-empty": derive(
        learning.PullExample,
        paths={"guest": seq(values(*NAMES), 2, cap=3, unique=True)},
        failures=values(0, 1, 2, 3, 5),
        note="3 or more failures: every pull attempt fails",
    ),
    "write-memory-escapes-bank": derive(
        journal.WriteEscapeExample, max_len=2, note="every name kind, one or two names per write"
    ),
    "fold-resets-cache": derive(
        caching.CacheExample,
        steps=values(*range(1, 13)),
        facts=values(1, 16, 40),
        chars=values(200),
        keep=values(1, 2),
        batch=values(1, 2),
        note="the stable prefix passes OpenAI's 1,024 + 2 x 128 tokens from 12 steps of 16 facts (8 of 40)",
    ),
}
