"""verdicts.judge on hand-made runs: every branch reached on purpose, with the answer known.

Each case builds the rows the driver would record (the recogniser's SYMBOL, STATE_IN and
STATE_OWNER per chunk) for a plan whose text is known, so the expected verdict, the first
wrong chunk and the session named as culprit follow from the rows, not from the code.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from app.i18n import languages, words
from app.lab.records import SessionPlan
from app.lab.scenario.alphabet import to_symbols
from app.recogniser.engine.judgement.verdicts import PADDING_OWNER, Detail, SessionVerdict, judge
from app.text import verdicts as text
from tests.i18n.text_checks import reads_in

TAGS = (1001, 1002, 1003)


def plan(index: int, text: str, send_count: int | None = None) -> SessionPlan:
    symbols = to_symbols(text)
    return SessionPlan(index=index, text=text, symbols=symbols, tag=TAGS[index], corrid=TAGS[index], think_ms=0.0,
                       start_s=0.0, send_count=len(symbols) if send_count is None else send_count, url="")


def rows(p: SessionPlan, received: list[int] | None = None, *, instance=0, slot=None, owners=None, states=None,
         errors=None) -> list[dict]:
    """The driver's rows for one session: by default every chunk right, read from its own state."""
    n = p.send_count if received is None else len(received)
    received = p.symbols[:n] if received is None else received
    out = []
    for k in range(n):
        error = (errors or {}).get(k, "")
        own_state = p.symbols[k - 1] if k else 0
        out.append({
            "session": p.index, "chunk": k, "tag": p.tag, "error": error, "expected": p.symbols[k],
            "symbol": -1 if error else received[k],
            "instance": -1 if error else instance,
            "slot": -1 if error else (p.index if slot is None else slot),
            "state_in": -1 if error else (states or {}).get(k, own_state),
            "state_owner": 0 if error else (owners or {}).get(k, p.tag if k else 0),
        })
    return out


def judged(plans, *sessions) -> pd.DataFrame:
    return judge(pd.DataFrame([r for s in sessions for r in s]), plans).set_index("session")


def test_every_symbol_right_is_intact_with_where_it_ran():
    a = plan(0, "HELLO")
    got = judged([a], rows(a, instance=1, slot=2)).loc[0]
    assert got["verdict"] == "intact"
    assert got["first_wrong"] is None and got["read_state_of"] is None
    assert got["detail_code"] == "" and got["detail_values"] == {}
    assert text.detail(got, words("en")) == ""
    assert got["expected_text"] == got["received_text"] == "HELLO"
    assert got["wrong_symbols"] == 0 and got["chunks"] == 5
    assert got["instances"] == [1] and got["slots"] == [(1, 2)]


def test_reading_another_session_of_the_run_is_foreign_and_names_it():
    a, b = plan(0, "ABCD"), plan(1, "WXYZ")
    # Chunk 3 of session 1 ("C") read B's state "X" (24) and came back wrong.
    bad = rows(a, [1, 2, 5, 6], owners={2: b.tag}, states={2: 24})
    got = judged([a, b], bad, rows(b)).loc[0]
    assert got["verdict"] == "foreign"
    assert got["read_state_of"] == 1  # session index 1, shown to learners as "session 2"
    assert got["first_wrong"] == 2 and got["wrong_symbols"] == 2
    assert got["detail_code"] == Detail.OTHER_SESSION
    assert got["detail_values"] == {"instance": 0, "slot": 0, "other_session": 1}
    english = text.detail(got, words("en"))
    assert "chunk 3 ran on instance 0, slot 0" in english and "the state of session 2" in english
    assert got["received_text"] == "ABEF"


def test_state_written_by_a_session_outside_the_run_is_foreign_from_an_earlier_run():
    a = plan(0, "ABCD")
    stranger = 777
    got = judged([a], rows(a, [9, 10, 11, 12], owners={0: stranger}, states={0: 8})).loc[0]
    assert got["verdict"] == "foreign"
    assert got["read_state_of"] == "earlier run"
    assert got["first_wrong"] == 0
    assert got["detail_code"] == "earlier_session" and got["detail_values"]["owner_tag"] == stranger
    assert f"an earlier session (tag {stranger})" in text.detail(got, words("en"))


def test_state_a_padding_row_wrote_is_garbage_from_padding():
    a = plan(0, "ABCD")
    got = judged([a], rows(a, [1, 2, 17, 18], owners={2: PADDING_OWNER}, states={2: 15})).loc[0]
    assert got["verdict"] == "garbage"
    assert got["read_state_of"] == "padding"
    assert got["detail_code"] == "read_padding" and got["detail_values"] == {"instance": 0, "slot": 0}
    assert "padding row" in text.detail(got, words("en"))


def test_right_state_but_a_wrong_letter_is_garbage_audio():
    a = plan(0, "ABCD")
    # Chunk 2 read the right state ("A" = 1) from its own cell, yet decoded a wrong letter.
    got = judged([a], rows(a, [1, 9, 10, 11])).loc[0]
    assert got["verdict"] == "garbage"
    assert got["read_state_of"] is None
    assert got["detail_code"] == "misread"
    assert "its state was right but its audio was misread" in text.detail(got, words("en"))


def test_a_fresh_cell_mid_session_is_lost():
    a = plan(0, "ABCD")
    got = judged([a], rows(a, [1, 2, 1, 2], owners={2: 0}, states={2: 0})).loc[0]
    assert got["verdict"] == "lost"
    assert got["read_state_of"] is None
    assert got["detail_code"] == "fresh_cell"
    assert got["detail_values"] == {"instance": 0, "slot": 0, "state_in": 0, "should_read": 2}
    assert "a fresh cell (0 instead of 2)" in text.detail(got, words("en"))


def test_its_own_stale_state_is_lost():
    a = plan(0, "ABCD")
    # Chunk 4 read what its own chunk 2 wrote ("B"), not chunk 3's "C": it missed its own update.
    got = judged([a], rows(a, [1, 2, 3, 3], owners={3: a.tag}, states={3: 2})).loc[0]
    assert got["verdict"] == "lost"
    assert got["detail_code"] == "own_stale" and got["detail_values"]["state_in"] == 2
    assert got["detail_values"]["should_read"] == 3
    assert "its own stale state (2 instead of 3)" in text.detail(got, words("en"))


def test_a_refused_chunk_is_an_error_with_the_servers_message_and_the_rest_unsent():
    a = plan(0, "ABCD")
    refused = "inference request for sequence 1001 to model 'm' must specify the START flag"
    got = judged([a], rows(a, [1, 2, -1], errors={2: refused})).loc[0]
    assert got["verdict"] == "error"
    assert got["first_wrong"] == 2 and got["detail_code"] == "refused" and got["detail_values"] == {"error": refused}
    assert text.detail(got, words("en")) == f"chunk 3: `{refused}`"  # Triton's words, quoted as code
    assert got["received_text"] == "AB??"  # the refused chunk and the one never sent
    assert got["wrong_symbols"] == 2
    assert got["instances"] == [0]  # refused rows (instance -1) are not places it ran


def test_chunks_missing_from_the_rows_are_errors_not_sent():
    a = plan(0, "ABCD")
    got = judged([a], rows(a)[:2]).loc[0]
    assert got["verdict"] == "error"
    assert got["detail_code"] == "not_sent" and got["first_wrong"] == 2
    assert text.detail(got, words("en")) == "chunk 3: not sent after an earlier refusal"


def test_a_session_that_vanishes_is_judged_on_what_it_sent():
    a = plan(0, "ABCDEF", send_count=3)
    got = judged([a], rows(a)).loc[0]
    assert got["verdict"] == "intact"
    assert got["chunks"] == 3 and got["expected_text"] == "ABC"


def test_the_first_wrong_chunk_decides_even_when_later_ones_look_worse():
    a, b = plan(0, "ABCD"), plan(1, "WXYZ")
    # Chunk 2 read a fresh cell (lost); chunk 4 then read session 2's state: still "lost".
    bad = rows(a, [1, 1, 2, 9], owners={1: 0, 3: b.tag}, states={1: 0, 3: 24})
    got = judged([a, b], bad, rows(b)).loc[0]
    assert got["verdict"] == "lost" and got["first_wrong"] == 1 and got["wrong_symbols"] == 3


def test_several_sessions_are_judged_independently_in_plan_order():
    a, b, c = plan(0, "AB"), plan(1, "CD"), plan(2, "EF")
    table = judge(pd.DataFrame(rows(c, instance=1) + rows(a, slot=3) + rows(b, [3, 9], owners={1: c.tag}, states={1: 5})),
                  [a, b, c])
    assert list(table["session"]) == [0, 1, 2]
    assert list(table["verdict"]) == ["intact", "foreign", "intact"]
    assert table.loc[1, "read_state_of"] == 2
    assert list(table["tag"]) == list(TAGS)
    assert table.loc[0, "slots"] == [(0, 3)] and table.loc[2, "instances"] == [1]


def test_uint64_owner_column_as_the_driver_records_it():
    # The driver stores STATE_OWNER as uint64 (the padding marker does not fit in int64).
    a = plan(0, "ABC")
    frame = pd.DataFrame(rows(a, [1, 2, 9], owners={2: PADDING_OWNER}, states={2: 7}))
    frame["state_owner"] = frame["state_owner"].astype(np.uint64)
    assert judge(frame, [a]).iloc[0]["read_state_of"] == "padding"


@pytest.mark.parametrize("verdict", [v.value for v in SessionVerdict])
def test_every_verdict_has_words_for_the_board_in_every_language(verdict):
    en = words("en")
    english = {"explanation": text.explanation(verdict, en), "badge": text.badge(verdict, en), "verdict": text.verdict(verdict, en)}
    for lang in languages():
        shown = {"explanation": text.explanation(verdict, words(lang)), "badge": text.badge(verdict, words(lang)),
                 "verdict": text.verdict(verdict, words(lang))}
        assert [k for k in english if not reads_in(lang, shown[k], english[k])] == [], (lang, shown)


@pytest.mark.parametrize("code", [d.value for d in Detail if d.value])
def test_every_detail_renders_in_every_language(code):
    row = {"detail_code": code, "first_wrong": 2,
           "detail_values": {"instance": 1, "slot": 2, "state_in": 0, "should_read": 3, "other_session": 4,
                             "owner_tag": 77, "error": "Triton said no"}}
    english = text.detail(row, words("en"))
    for lang in languages():
        rendered = text.detail(row, words(lang))
        assert "3" in rendered  # chunk 3, counted from 1
        assert reads_in(lang, rendered, english), (lang, rendered)
