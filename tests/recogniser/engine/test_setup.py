"""A lab set-up survives the URL round trip and names every problem before anything is loaded."""
from __future__ import annotations

from dataclasses import replace

from app.i18n import languages, words
from app.lab.deployment import LabSettings
from app.lab.problems import Problem
from app.lab.records import Traffic
from app.recogniser.engine.presets import PRESETS
from app.recogniser.engine.setup import LabSetup, parse_texts
from app.text.problems import problem
from tests.i18n.text_checks import reads_in


def test_query_round_trip_reproduces_the_set_up():
    setup = LabSetup(
        LabSettings(scheduler="oldest", instances=3, slots=6, queue_delay_us=500, idle_timeout_us=2_000_000,
                    state_key="corrid", honour_ready=False),
        Traffic(sessions=2, chunks=9, think_ms=12.5, jitter_ms=3.0, seed=99, spread_think=True, transport="grpc_stream", in_flight=3),
        ("HELLO WORLD", "STREAMING"),
    )
    query = setup.to_query()
    assert query["scheduler"] == "oldest" and query["honour_ready"] == "false" and query["spread_think"] == "true"
    assert query["text"] == "HELLO WORLD|STREAMING"
    assert query["transport"] == "grpc_stream" and query["in_flight"] == "3"
    assert LabSetup.from_query(query) == setup
    scenario = LabSetup.from_query(query).scenario("asr_sequence_direct")
    assert scenario.transport.value == "grpc_stream" and scenario.in_flight == 3


def test_a_link_made_before_the_knobs_were_renamed_keeps_their_values():
    query = LabSetup(traffic=Traffic(chunks=9, spread_think=True)).to_query()
    assert query["chunks"] == "9" and query["spread_think"] == "true" and not {"length", "staggered"} & set(query)
    old = {key: value for key, value in query.items() if key not in {"chunks", "spread_think"}}
    old |= {"length": "9", "staggered": "true"}
    assert LabSetup.from_query(old).traffic == Traffic(chunks=9, spread_think=True)
    assert LabSetup.from_query({**query, "length": "5"}).traffic.chunks == 9  # the new key wins over the old
    assert LabSetup.from_query({"length": "5"}).traffic.chunks == 5 != Traffic().chunks


def test_min_slot_utilization_travels_in_the_url():
    setup = LabSetup(LabSettings(scheduler="direct", queue_delay_us=4000, min_slot_utilization=0.5))
    query = setup.to_query()
    assert query["min_slot_utilization"] == "0.5" and query["queue_delay_us"] == "4000"
    assert LabSetup.from_query(query) == setup
    out_of_range = LabSetup.from_query({**query, "min_slot_utilization": "2"})
    assert Problem("min_slot_utilization_range", {"low": 0, "high": 1, "value": 2.0}) in out_of_range.problems()
    assert LabSetup.from_query({**query, "min_slot_utilization": "half"}).settings.min_slot_utilization == 0.0


def test_unreadable_query_values_keep_defaults():
    setup = LabSetup.from_query({"instances": "many", "think_ms": "soon", "seed": "3"})
    assert setup.settings.instances == LabSettings().instances
    assert setup.traffic.think_ms == Traffic().think_ms and setup.traffic.seed == 3


def test_every_preset_is_recognised_and_valid():
    for name in PRESETS:
        setup = LabSetup.from_preset(name)
        assert setup.preset_name() == name
        assert setup.problems() == []
    changed = LabSetup.from_preset("the_fix")
    assert replace(changed, traffic=replace(changed.traffic, seed=1)).preset_name() is None


def test_problems_name_the_setting_and_the_text():
    bad = LabSetup(LabSettings(scheduler="dynamic", state_key="corrid"), Traffic(sessions=70, transport="pigeon", in_flight=0), ("HELLO", "R2D2"))
    problems = bad.problems()
    assert problems == [
        Problem("corrid_needs_sequence"),
        Problem("sessions_range", {"low": 1, "high": 64, "value": 70}),
        Problem("in_flight_range", {"low": 1, "high": 16, "value": 0}),
        Problem("transport_unknown", {"value": "pigeon", "choices": "http, grpc, grpc_stream"}),
        Problem("utterance_bad_character", {"number": 2, "text": "R2D2", "char": "2", "position": 2}),
    ]
    assert str(problems[1]) == "sessions_range(low=1, high=64, value=70)"  # str() is the code and values, for logs
    english = [problem(p, words("en")) for p in problems]
    assert "corrid" in english[0] and "sequence scheduler" in english[0]
    assert english[1].startswith("sessions must be 1 to 64")
    assert english[3] == "transport must be one of http, grpc, grpc_stream: got 'pigeon'"
    assert "utterance 2" in english[4] and "'2'" in english[4]
    for lang in languages():  # every problem has words in every language, with the values given
        shown = [problem(p, words(lang)) for p in problems]
        assert [reads_in(lang, text, en) for text, en in zip(shown, english, strict=True)] == [True] * len(problems), shown
        for text, found in zip(shown, problems, strict=True):
            assert all(str(v) in text for v in found.values.values() if isinstance(v, str)), text


def test_own_text_sets_the_sessions():
    texts = parse_texts("hello world\n\n  streaming  \n")
    assert texts == ("HELLO WORLD", "STREAMING")
    setup = LabSetup(texts=texts)
    assert setup.session_count == 2
    assert setup.scenario("asr_sequence_direct").texts == ["HELLO WORLD", "STREAMING"]
