"""Write memsim's shipped conversation samples (sim/data/samples/): small files in the released shapes.

    python dev/conversation_samples.py

Every line of dialogue here was written for memsim (nothing is copied from LongMemEval or LoCoMo); the
files only take the datasets' shapes (sim/conversations/formats/, docs/conversations.md "Formats"):

* ``longmemeval_s_sample.json``: five instances, one per kind of question (single-session user and
  assistant, knowledge update, multi-session counting with a bare-number answer, an abstention), each
  over a haystack of eight to ten sessions sorted by date, evidence turns marked ``has_answer``;
* ``longmemeval_oracle_sample.json``: the same instances with only their evidence sessions (in the
  order the ``_oracle`` file keeps them, not sorted);
* ``longmemeval_m_sample.json``: two of them over 60 sessions each (the ``_m`` shape: many sessions);
* ``locomo_sample.json``: two conversations between two people over four and three dated sessions, with
  questions of the five categories (category 5 with ``adversarial_answer``), image fields on some turns
  and the release's notations of evidence (``"D2:4; D3:2"``);
* ``native_conversation.jsonl``: memsim's JSONL with turn ids, fact tokens and three kinds of probe;
* ``locomo_demo_sample.json`` and ``longmemeval_demo_sample.json`` (issue 38): long enough that the
  designs differ at the windows fitted to them (docs/conversations.md, "Windows fitted to the corpus"),
  which ``memsim demo`` uses: :mod:`sim.conversations.synth`'s files (memsim's filler text, never a line
  of the datasets) of the sizes and seed in :data:`DEMO_SAMPLES`.

The output is deterministic (no randomness in the hand-written samples; ids and dates are written out or
derived by position; the demo samples come from a fixed seed).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "sim" / "data" / "samples"

# -- LongMemEval ------------------------------------------------------------------------------------------
# Filler sessions: (user, assistant, user, assistant) exchanges on everyday requests.
FILLER = [
    [
        "Can you suggest a quick weeknight dinner that uses up half a bag of spinach and some feta?",
        "A spinach and feta frittata works well: whisk six eggs, wilt the spinach in a pan with a little "
        "garlic, crumble in the feta, pour the eggs over and bake at 180 C for about fifteen minutes.",
        "Nice. Could I make it without an oven-safe pan?",
        "Yes. Cook it on the hob over low heat with a lid on; it takes a little longer, around twenty "
        "minutes, and the top stays softer. You can also fold it like an omelette.",
    ],
    [
        "I keep getting 'list index out of range' in a Python loop that walks two lists together.",
        "That usually means the lists have different lengths. Iterate with zip(a, b), which stops at the "
        "shorter one, or check len(a) == len(b) first if a mismatch is a bug you want to catch.",
        "The second list is sometimes one shorter on purpose. What is the tidy way to handle it?",
        "itertools.zip_longest(a, b, fillvalue=None) pairs every element and fills the gap, so you can "
        "treat the missing partner explicitly instead of indexing past the end.",
    ],
    [
        "What are some low-light houseplants that are hard to kill?",
        "Snake plants, ZZ plants, pothos and cast-iron plants all tolerate low light and irregular "
        "watering. Let the soil dry out between waterings; overwatering kills more of them than neglect.",
        "Is a pothos safe to have around a curious cat?",
        "Not really: pothos is mildly toxic to cats and dogs if chewed. A parlour palm or a spider plant "
        "is a safer choice for a home with pets.",
    ],
    [
        "Help me plan a monthly budget. I take home about 2,900 a month.",
        "A common starting point is 50/30/20: about 1,450 for needs such as rent and groceries, 870 for "
        "wants, and 580 for savings or paying down debt. Track one month of spending first to see where "
        "you really are.",
        "Rent alone is 1,200. Does the rule still make sense?",
        "It can bend. With rent that high, aim for needs near 60 percent and trim wants to 20; keeping "
        "savings at 20 percent matters more than hitting the exact split.",
    ],
    [
        "What's a good way to start running again after two years off?",
        "Begin with run-walk intervals: one minute running, two walking, repeated eight times, three "
        "times a week. Add a minute of running every week or so and keep the pace conversational.",
        "My knees ache a bit after the second session. Should I stop?",
        "Mild aches are common at first; sharp pain is not. Take an extra rest day, check that your shoes "
        "are not worn out, and run on softer surfaces like a track or a park path for a while.",
    ],
    [
        "Can you explain what a Roth IRA is in plain words?",
        "It's a US retirement account you pay into with money that has already been taxed. The growth "
        "and the withdrawals in retirement are then tax free, as long as you follow the rules.",
        "And how is that different from a traditional one?",
        "A traditional IRA usually gives you the tax break now and taxes the withdrawals later. Which is "
        "better depends on whether you expect your tax rate to be higher now or in retirement.",
    ],
    [
        "Write a short, friendly message asking my neighbour to keep the hallway clear of bikes.",
        "Hi! Hope you're well. Would you mind keeping the bikes out of the hallway when you can? It gets "
        "a bit tight getting the pram through. Thanks so much, really appreciate it!",
        "Make it a little less formal?",
        "Hey! Quick one: could the bikes live somewhere other than the hallway? The pram barely squeezes "
        "past. Thanks a lot!",
    ],
    [
        "How long should I steep green tea so it doesn't turn bitter?",
        "Use water around 75 to 80 C rather than boiling, and steep for two to three minutes. Longer or "
        "hotter pulls out more tannins, which is where the bitterness comes from.",
        "Can I reuse the leaves?",
        "Yes, good loose-leaf green tea takes two or three infusions. Add thirty seconds or so to each "
        "later steep.",
    ],
    [
        "I need a name for a board game night group chat. Something punny.",
        "A few ideas: 'Bored Games', 'Meeple People', 'Dice to Meet You', 'The Settlers of Snacktan' or "
        "'Roll Models'.",
        "Dice to Meet You is great. Any emoji to go with it?",
        "A die and a waving hand fit it nicely, or a die and a handshake if you want it a touch more formal.",
    ],
    [
        "What's the difference between baking soda and baking powder?",
        "Baking soda is pure sodium bicarbonate and needs an acid in the recipe, like buttermilk or "
        "lemon, to rise. Baking powder already contains an acid, so it works with neutral ingredients.",
        "Can I swap one for the other?",
        "Roughly three teaspoons of baking powder replace one of soda, though the taste changes a bit. "
        "Going the other way needs an added acid, so it's trickier.",
    ],
]

# The instances: (question_id, question_type, question, answer, question_date, evidence sessions, where the
# evidence sessions go among the filler). An evidence session is (turns, has_answer positions); its turns
# alternate user, assistant.
LME = [
    {
        "question_id": "memsim_lme_001",
        "question_type": "single-session-user",
        "question": "What breed is the dog I adopted?",
        "answer": "a border collie",
        "question_date": "2024/03/28 (Thu) 19:05",
        "evidence": [
            (
                [
                    "I finally did it: I adopted a border collie from the shelter on Saturday. Her name is "
                    "Pepper and she has not stopped moving since she got home. What should I buy first?",
                    "Congratulations on adopting Pepper! For a high-energy breed, start with a sturdy lead "
                    "and harness, a crate or a quiet bed area, puzzle feeders and a few durable chew toys.",
                    "She herds the kids around the garden. Is that normal?",
                    "Very normal for a herding dog. Give her a job instead: fetch, short training sessions "
                    "or a flirt pole, and redirect the herding calmly when it starts.",
                ],
                [0],
            )
        ],
        "at": [3],
    },
    {
        "question_id": "memsim_lme_002",
        "question_type": "single-session-assistant",
        "question": "Which hiking trail did you recommend for my Saturday walk with my parents?",
        "answer": "the Millbrook Falls trail",
        "question_date": "2024/04/12 (Fri) 08:40",
        "evidence": [
            (
                [
                    "My parents are visiting and want an easy hike on Saturday, nothing over ten "
                    "kilometres and not too steep. We're near Ashford.",
                    "For an easy outing near Ashford I'd suggest the Millbrook Falls trail: about seven "
                    "kilometres as a loop, mostly flat along the river, with benches and a cafe at the "
                    "car park.",
                    "Is it alright if it rained the day before?",
                    "The riverside section can get muddy after rain, so bring boots rather than trainers; "
                    "the upper path to the falls is gravel and drains well.",
                ],
                [1],
            )
        ],
        "at": [5],
    },
    {
        "question_id": "memsim_lme_003",
        "question_type": "knowledge-update",
        "question": "Where do I park my bike at work now?",
        "answer": "the basement cage on level B2",
        "question_date": "2024/05/20 (Mon) 09:15",
        "evidence": [
            (
                [
                    "I started cycling to work this month. I lock my bike at the rack by the front "
                    "entrance. Any tips for a good lock?",
                    "A solid D-lock through the frame and rear wheel, plus a cable for the front wheel, "
                    "covers most city risks. Lock it to something that can't be lifted or cut easily.",
                ],
                [0],
            ),
            (
                [
                    "Small change at the office: they moved bike parking to the basement cage on level B2, "
                    "so I need a badge to get in now. Do I still need a heavy lock in there?",
                    "A secured cage lowers the risk a lot, but shared cages still see thefts. A lighter "
                    "D-lock through the frame is a sensible compromise.",
                ],
                [0],
            ),
        ],
        "at": [1, 6],
    },
    {
        "question_id": "memsim_lme_004",
        "question_type": "multi-session",
        "question": "How many concerts did I go to in March?",
        "answer": 2,
        "question_date": "2024/04/02 (Tue) 21:30",
        "evidence": [
            (
                [
                    "Just got back from the Lantern Choir concert at the old corn exchange. The acoustics "
                    "were amazing. Can you recommend similar choral groups?",
                    "If you liked a cappella folk arrangements, look up a few chamber choirs that tour "
                    "small venues; local cathedral evensongs are free and often excellent too.",
                ],
                [0],
            ),
            (
                [
                    "Second gig this month: saw a jazz trio at the Blue Door last night and I'm still "
                    "humming the bass line. What is a walking bass line, exactly?",
                    "It's a bass part that moves in steady, mostly stepwise quarter notes, outlining the "
                    "chords as they change; it gives swing its sense of forward motion.",
                ],
                [0],
            ),
        ],
        "at": [2, 7],
    },
    {
        "question_id": "memsim_lme_005_abs",
        "question_type": "single-session-user",
        "question": "What is the name of my cat?",
        "answer": "You did not mention a cat. You mentioned adopting a dog named Biscuit.",
        "question_date": "2024/06/03 (Mon) 12:00",
        "evidence": [
            (
                [
                    "We adopted a dog called Biscuit last week and he hides under the sofa all day. How "
                    "long does it take a rescue to settle?",
                    "Many rescues need a few weeks; the three-three-three rule (three days, three weeks, "
                    "three months) is a rough guide. Keep routines predictable and let him come to you.",
                ],
                [0],
            )
        ],
        "at": [4],
    },
]


def _lme_date(question_date: str, sessions_before: int) -> str:
    """The date of a session *sessions_before* sessions before the question (three days apart)."""
    asked = datetime.strptime(question_date[:10] + question_date[16:], "%Y/%m/%d %H:%M")
    k = sessions_before
    when = asked - timedelta(days=3 * k, hours=(7 * k) % 11 + 1, minutes=(13 * k) % 60)
    return when.strftime("%Y/%m/%d (%a) %H:%M")


def _turns(lines: list[str], answers: list[int] | None) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for i, text in enumerate(lines):
        turn: dict[str, object] = {"role": "user" if i % 2 == 0 else "assistant", "content": text}
        if answers is not None:
            turn["has_answer"] = i in answers
        out.append(turn)
    return out


def lme_instance(spec: dict[str, object], n_sessions: int, *, oracle: bool = False) -> dict[str, object]:
    """One instance over *n_sessions* sessions, its evidence sessions among the last ten (where the
    ten-session ``_s`` sample puts them), so the evidence has the same dates in every shape."""
    qid, qdate = str(spec["question_id"]), str(spec["question_date"])
    evidence, at = spec["evidence"], spec["at"]
    assert isinstance(evidence, list) and isinstance(at, list)
    where = {n_sessions - 10 + pos: j for j, pos in enumerate(at)}
    sids: list[str] = []
    dates: list[str] = []
    sessions: list[list[dict[str, object]]] = []
    for k in range(n_sessions):
        if k in where:
            lines, answers = evidence[where[k]]
            sid, turns = f"answer_{qid[-7:]}_{where[k] + 1}", _turns(lines, answers)
        elif oracle:
            continue
        else:
            sid, turns = f"sharegpt_{qid[-3:]}{k:03d}_0", _turns(FILLER[(k + len(qid)) % len(FILLER)], None)
        sids.append(sid)
        dates.append(_lme_date(qdate, n_sessions - k))
        sessions.append(turns)
    if oracle:  # the _oracle file keeps the evidence sessions unsorted
        sids, dates, sessions = sids[::-1], dates[::-1], sessions[::-1]
    return {
        "question_id": qid,
        "question_type": spec["question_type"],
        "question": spec["question"],
        "answer": spec["answer"],
        "question_date": qdate,
        "haystack_session_ids": sids,
        "haystack_dates": dates,
        "haystack_sessions": sessions,
        "answer_session_ids": [sid for sid in sids if sid.startswith("answer_")],
    }


# -- LoCoMo -----------------------------------------------------------------------------------------------
LOCOMO = [
    {
        "sample_id": "memsim-locomo-1",
        "speaker_a": "Priya",
        "speaker_b": "Tomas",
        "sessions": [
            (
                "7:10 pm on 4 March, 2023",
                [
                    ("Priya", "Hey Tomas! Long time. How did the move to Lisbon go?"),
                    (
                        "Tomas",
                        "Hi Priya! Chaotic but good. The flat is tiny, but there's a balcony with a "
                        "view of the river, so I forgive it everything.",
                    ),
                    (
                        "Priya",
                        "That sounds lovely. I've got news too: I signed up for a pottery class on "
                        "Thursday evenings at the community studio.",
                    ),
                    ("Tomas", "Pottery! Are you making anything specific?"),
                    (
                        "Priya",
                        "The first project is a set of mugs. Mine are coming out lopsided, but I love it.",
                        {
                            "img_url": ["https://example.invalid/mug.jpg"],
                            "blip_caption": "a photo of a lopsided ceramic mug on a shelf",
                            "query": "handmade ceramic mug",
                        },
                    ),
                    (
                        "Tomas",
                        "Lopsided mugs have character. I started learning Portuguese, by the way, "
                        "three mornings a week before work.",
                    ),
                    ("Priya", "How's it going so far?"),
                    ("Tomas", "Slowly. I can order coffee and apologise, which covers most situations."),
                ],
            ),
            (
                "12:45 pm on 19 March, 2023",
                [
                    ("Tomas", "Guess what, I adopted a cat. A grey rescue called Sardinha."),
                    ("Priya", "Haha, a cat named after a sardine in Lisbon is perfect."),
                    ("Tomas", "She sleeps on the balcony all afternoon and judges the seagulls."),
                    (
                        "Priya",
                        "My pottery teacher said my third mug was the first one that doesn't wobble. "
                        "Progress!",
                    ),
                    ("Tomas", "That calls for a celebration. Coffee from the non-wobbly mug?"),
                    ("Priya", "Exactly what I did this morning. Also, I'm training for the city 10k in May."),
                ],
            ),
            (
                "6:30 pm on 2 April, 2023",
                [
                    (
                        "Priya",
                        "The 10k training is harder than I thought. I'm up to 6 kilometres without stopping.",
                    ),
                    ("Tomas", "That's great progress in a few weeks. Are you following a plan?"),
                    ("Priya", "A free app plan, three runs a week. My sister Anjali is running it with me."),
                    (
                        "Tomas",
                        "Running with family keeps you honest. I've been cycling along the river on "
                        "Sundays now.",
                    ),
                    ("Priya", "Do you rent a bike or did you buy one?"),
                    ("Tomas", "I bought a second-hand blue road bike from a neighbour for 150 euros."),
                ],
            ),
            (
                "9:05 am on 21 May, 2023",
                [
                    ("Priya", "We did it! Anjali and I finished the 10k yesterday in 58 minutes."),
                    (
                        "Tomas",
                        "Under an hour on your first race, that's brilliant. Congratulations to both of you!",
                    ),
                    ("Priya", "Thanks! How is Sardinha?"),
                    ("Tomas", "She learned to open the wardrobe, so now my sweaters are grey too."),
                    (
                        "Priya",
                        "Ha! Next month my pottery class has an exhibition. I'm showing the mugs.",
                        {"blip_caption": "a photo of four ceramic mugs on a table"},
                    ),
                    ("Tomas", "Send me photos. I'll come visit in the autumn and buy one."),
                ],
            ),
        ],
        "qa": [
            {
                "question": "What class does Priya take on Thursday evenings?",
                "answer": "pottery",
                "evidence": ["D1:3"],
                "category": 4,
            },
            {
                "question": "What is the name of Tomas's cat?",
                "answer": "Sardinha",
                "evidence": ["D2:1"],
                "category": 4,
            },
            {
                "question": "When did Priya and Anjali run the 10k?",
                "answer": "20 May 2023",
                "evidence": ["D4:1"],
                "category": 2,
            },
            {
                "question": "What did Priya make in pottery class and how did they turn out over time?",
                "answer": "mugs; lopsided at first, then the third one did not wobble",
                "evidence": ["D1:5; D2:4"],
                "category": 1,
            },
            {
                "question": "Who does Priya train for the 10k with?",
                "answer": "her sister Anjali",
                "evidence": ["D3:3"],
                "category": 4,
            },
            {
                "question": "How much did Tomas pay for his bike?",
                "answer": 150,
                "evidence": ["D3:6"],
                "category": 4,
            },
            {
                "question": "Would Tomas likely enjoy a holiday somewhere by the water?",
                "answer": "Likely yes; he loves his river view and cycles along the river",
                "evidence": ["D1:2", "D3:4"],
                "category": 3,
            },
            {
                "question": "What is the name of Priya's cat?",
                "adversarial_answer": "Sardinha",
                "evidence": ["D2:1"],
                "category": 5,
            },
            {
                "question": "How many mornings a week does Priya study Portuguese?",
                "adversarial_answer": "three",
                "evidence": ["D1:6"],
                "category": 5,
            },
        ],
    },
    {
        "sample_id": "memsim-locomo-2",
        "speaker_a": "Grace",
        "speaker_b": "Wen",
        "sessions": [
            (
                "8:20 pm on 11 January, 2023",
                [
                    ("Grace", "Wen, I got the job at the library! I start on the first of February."),
                    ("Wen", "Amazing, Grace! Which branch?"),
                    ("Grace", "The Harbour Street branch, in the children's section."),
                    ("Wen", "You'll be the best story-time reader they've ever had."),
                    ("Grace", "I hope so. How's the restaurant?"),
                    ("Wen", "Busy. We added hand-pulled noodles to the menu and they sell out by nine."),
                ],
            ),
            (
                "3:15 pm on 26 February, 2023",
                [
                    ("Wen", "How is the new job?"),
                    ("Grace", "I love it. On Saturdays I run a reading club for eight-year-olds."),
                    ("Wen", "What are they reading?"),
                    ("Grace", "This month it's a book about a fox who runs a bakery. They adore it."),
                    ("Wen", "I should put a fox bun on the menu. We're closed Mondays now, by the way."),
                    ("Grace", "Good, you needed a day off."),
                ],
            ),
            (
                "10:00 am on 2 April, 2023",
                [
                    ("Grace", "The reading club grew to fourteen kids, so we moved to the big room."),
                    ("Wen", "Fourteen! The fox book must have spread the word."),
                    ("Grace", "It did. What did you end up doing with your Mondays?"),
                    ("Wen", "I'm taking a calligraphy class. My characters look like noodles so far."),
                ],
            ),
        ],
        "qa": [
            {
                "question": "Where does Grace work?",
                "answer": "the Harbour Street library branch",
                "evidence": ["D1:1", "D1:3"],
                "category": 4,
            },
            {
                "question": "When did Grace start at the library?",
                "answer": "1 February 2023",
                "evidence": ["D1:1"],
                "category": 2,
            },
            {
                "question": "How did Grace's reading club change between February and April?",
                "answer": "it grew to fourteen kids and moved to the big room",
                "evidence": ["D2:2 D3:1"],
                "category": 1,
            },
            {
                "question": "What does Wen do on Mondays?",
                "answer": "a calligraphy class",
                "evidence": ["D2:5", "D3:4"],
                "category": 1,
            },
            {
                "question": "Would Wen be a good person to ask about cooking noodles?",
                "answer": "yes; his restaurant makes hand-pulled noodles",
                "evidence": ["D1:6"],
                "category": 3,
            },
            {
                "question": "What book does Wen's calligraphy class read?",
                "adversarial_answer": "a book about a fox who runs a bakery",
                "evidence": ["D2:4"],
                "category": 5,
            },
        ],
    },
]


def locomo_sample(spec: dict[str, object]) -> dict[str, object]:
    conv: dict[str, object] = {"speaker_a": spec["speaker_a"], "speaker_b": spec["speaker_b"]}
    sessions = spec["sessions"]
    assert isinstance(sessions, list)
    for n, (date, turns) in enumerate(sessions, 1):
        conv[f"session_{n}_date_time"] = date
        rows = []
        for i, turn in enumerate(turns, 1):
            row: dict[str, object] = {"speaker": turn[0], "dia_id": f"D{n}:{i}", "text": turn[1]}
            if len(turn) > 2:
                row.update(turn[2])
            rows.append(row)
        conv[f"session_{n}"] = rows
    summaries = {f"session_{n}_summary": f"Session {n} of the sample." for n in range(1, len(sessions) + 1)}
    return {
        "qa": spec["qa"],
        "conversation": conv,
        "event_summary": {},
        "observation": {},
        "session_summary": summaries,
        "sample_id": spec["sample_id"],
    }


# -- native JSONL -----------------------------------------------------------------------------------------
NATIVE = [
    {
        "turn_id": "t01",
        "observation": "Kickoff notes for the Q3 data migration. The team agreed to move "
        "the reporting tables first.",
        "facts": ["FACT-0001=teal"],
    },
    {"turn_id": "t02", "observation": "Dana owns the schema review; Ravi owns the cut-over runbook."},
    {
        "turn_id": "t03",
        "observation": "The staging database was restored from last night's snapshot and "
        "row counts matched production within 0.1 percent.",
        "facts": ["FACT-0002=amber"],
    },
    {
        "turn_id": "t04",
        "observation": "Decision: the cut-over window is Saturday 02:00 to 05:00 UTC, "
        "agreed with the on-call lead.",
    },
    {
        "turn_id": "t05",
        "observation": "Open question about archiving: keep seven years of audit logs, as legal asked.",
    },
    {
        "turn_id": "t06",
        "observation": "Performance test: the nightly batch finished in 41 minutes on the "
        "new cluster, down from 73.",
        "facts": ["FACT-0003=violet"],
    },
    {"turn_id": "t07", "observation": "Status check before the review.", "probe": "FACT-0001"},
    {
        "turn_id": "t08",
        "observation": "Ravi circulated the runbook draft; rollback takes about twenty "
        "minutes if the checksums differ.",
    },
    {
        "turn_id": "t09",
        "observation": "Dana approved the schema with one change: the customer_notes "
        "column becomes nullable.",
    },
    {
        "turn_id": "t10",
        "observation": "Reminder for the retro.",
        "evidence": ["t04"],
        "question": "When is the cut-over window?",
        "answer": "Saturday 02:00 to 05:00 UTC",
    },
    {
        "turn_id": "t11",
        "observation": "A later test run confirmed the batch timing.",
        "facts": ["FACT-0003=violet"],
    },
    {
        "turn_id": "t12",
        "observation": "Planning the announcement.",
        "probe": "FACT-0003",
        "evidence": ["t06"],
        "question": "How fast was the nightly batch on the new cluster, and which fact token recorded it?",
        "answer": "41 minutes, FACT-0003=violet",
    },
    {
        "turn_id": "t13",
        "observation": "Wrap-up.",
        "evidence": ["t02", "t09"],
        "question": "Who owns the schema review and what did they change?",
        "answer": "Dana; the customer_notes column becomes nullable",
    },
]


#: The demo samples: file -> (kind, instances, sessions, turns per session); drawn with seed DEMO_SEED.
DEMO_SAMPLES = {
    "locomo_demo_sample.json": ("locomo", 5, 4, 16),
    "longmemeval_demo_sample.json": ("longmemeval", 6, 8, 4),
}
DEMO_SEED = 38


def demo_samples() -> None:
    import sys

    sys.path.insert(0, str(OUT.parent.parent.parent))
    from sim.conversations.synth import write

    for name, (kind, instances, sessions, turns) in DEMO_SAMPLES.items():
        with open(OUT / name, "wb") as fh:
            write(kind, fh, instances=instances, sessions=sessions, turns=turns, seed=DEMO_SEED)
        print(f"wrote {OUT / name}")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    files = {
        "longmemeval_s_sample.json": [lme_instance(s, 10) for s in LME],
        "longmemeval_oracle_sample.json": [lme_instance(s, 10, oracle=True) for s in LME],
        "longmemeval_m_sample.json": [lme_instance(s, 60) for s in LME[2:4]],
        "locomo_sample.json": [locomo_sample(s) for s in LOCOMO],
    }
    for name, value in files.items():
        (OUT / name).write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {OUT / name}")
    native = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in NATIVE)
    (OUT / "native_conversation.jsonl").write_text(native, encoding="utf-8")
    print(f"wrote {OUT / 'native_conversation.jsonl'}")
    demo_samples()


if __name__ == "__main__":
    main()
