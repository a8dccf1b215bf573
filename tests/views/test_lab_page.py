"""The live lab in AppTest against the session's real server: runs, URL set-ups, refusals."""
from __future__ import annotations

from app.i18n import words
from app.lab.deployment import LabSettings, setup_model_name
from app.quiz.store import ProgressStore
from app.recogniser import figures
from app.recogniser.engine.judgement import analysis
from tests.server_calls import ask
from tests.views.conftest import RUN_TIMEOUT_S
from tests.views.learners import link_id

SETUP_ERROR = "This set-up cannot be deployed or run yet"


def run(node):
    at = node.run(timeout=RUN_TIMEOUT_S)
    assert not at.exception, [e.value for e in at.exception]
    return at


def setup_errors(at) -> list[str]:
    return [e.value for e in at.error if e.value.startswith(SETUP_ERROR)]


def loaded_models(server) -> set[str]:
    return {m["name"] for m in ask(server, "get_model_repository_index") if m.get("state") == "READY"}


def setup_model_ready(server, settings: LabSettings) -> bool:
    # A set-up's model is loaded from files, outside the repository: the index does not list it.
    return ask(server, "is_model_ready", setup_model_name(settings))


def test_preset_run_shows_board_timeline_measurements_and_records_the_prediction(open_page):
    at = open_page("lab.py", learner=link_id("lab-ada"))
    run(at.button(key="lab.preset.the_fix").click())
    assert at.radio(key="lab.scheduler").value == "direct"
    assert at.button(key="lab.run").disabled, "no run before a prediction"
    run(at.radio(key="lab.prediction").set_value("intact"))
    run(at.button(key="lab.run").click())

    assert any(m.value == "#### Transcript board" for m in at.markdown)
    assert sum("<b>Session " in m.value for m in at.markdown) == 8
    assert any(s.value.startswith("All 8 sessions intact") for s in at.success)
    assert any("Your prediction held" in s.value for s in at.success)
    charts = [c.proto.id for c in at.get("plotly_chart")]
    assert any(c.endswith("-slot-timeline") for c in charts)
    assert any(c.endswith("-lab-batches") for c in charts) and any(c.endswith("-lab-latency") for c in charts)
    last = at.session_state["lab-last-run"]  # each chart's message in words under it, from the run it draws
    said = figures.lab_summaries(analysis.of_run(last.result, last.applied.settings.instances, last.applied.settings.slots),
                                 last.applied.settings.scheduler, _=words("en"))
    assert set(said.values()) <= {c.value for c in at.caption}, said
    # Triton's own quantiles for the same run, read from the real server's summaries, beside the trace's.
    quantiles = last.result.server["triton_quantiles"]
    assert set(quantiles) == {"request", "queue", "compute"} and quantiles["queue"]["count"] > 0, quantiles
    assert any("Triton's time" in d.value.columns for d in at.dataframe)
    assert any(c.value.startswith("Triton's own quantiles, in ms") for c in at.caption)
    assert len(at.get("audio")) == 8
    assert "sequence_batching" in at.code[0].value and "direct" in at.code[0].value
    assert at.query_params["scheduler"] == "direct" and at.query_params["sessions"] == "8"

    records = ProgressStore().predictions(link_id("lab-ada"))
    assert [(r.exercise, r.prediction, r.outcome, r.held) for r in records] == [("the_fix", "intact", "intact", True)]


def test_url_query_reproduces_a_set_up(open_page):
    at = open_page("lab.py", scheduler="oldest", instances="1", slots="3", state_key="corrid",
                   honour_ready="false", sessions="3", think_ms="12.5", seed="42", text="HELLO|WORLD")
    assert not at.error
    assert at.radio(key="lab.scheduler").value == "oldest"
    assert at.number_input(key="lab.instances").value == 1 and at.number_input(key="lab.slots").value == 3
    assert at.radio(key="lab.state_key").value == "corrid" and at.checkbox(key="lab.honour_ready").value is False
    assert at.text_area(key="lab.own_text").value == "HELLO\nWORLD"
    assert at.number_input(key="lab.think_ms").value == 12.5 and at.number_input(key="lab.seed").value == 42


def test_custom_deployment_is_a_model_named_for_its_settings_with_its_exact_config(open_page, lab_server, unload_at_end):
    model = setup_model_name(LabSettings(scheduler="direct", instances=1, slots=2, state_key="session"))
    unload_at_end(model)
    at = open_page("lab.py", learner=link_id("lab-cy"), scheduler="direct", instances="1", slots="2", state_key="session")
    run(at.button(key="lab.apply").click())
    pbtxt = at.code[0].value
    assert f'name: "{model}"' in pbtxt and "max_batch_size: 2" in pbtxt and "session" in pbtxt
    assert ask(lab_server, "is_model_ready", model)


def test_impossible_setting_is_explained_and_loads_nothing(open_page, lab_server):
    at = open_page("lab.py", learner=link_id("lab-bo"))
    before = loaded_models(lab_server)
    run(at.radio(key="lab.scheduler").set_value("dynamic"))
    run(at.radio(key="lab.state_key").set_value("corrid"))
    errors = setup_errors(at)
    assert len(errors) == 1 and "correlation ID" in errors[0] and "nothing has been loaded" in errors[0]
    assert at.button(key="lab.apply").disabled and at.button(key="lab.run").disabled
    assert "lab-applied" not in at.session_state
    assert loaded_models(lab_server) == before
    assert not setup_model_ready(lab_server, LabSettings(scheduler="dynamic", state_key="corrid"))


def test_text_outside_the_alphabet_is_explained_and_nothing_runs(open_page, lab_server):
    at = open_page("lab.py", learner=link_id("lab-di"))
    before = loaded_models(lab_server)
    run(at.text_area(key="lab.own_text").input("HELLO\nR2D2"))
    errors = setup_errors(at)
    assert len(errors) == 1 and "'2'" in errors[0] and "utterance 2" in errors[0]
    run(at.radio(key="lab.prediction").set_value("intact"))
    assert at.button(key="lab.run").disabled and at.button(key="lab.apply").disabled
    assert "lab-last-run" not in at.session_state and "lab-applied" not in at.session_state
    assert not any(m.value == "#### Transcript board" for m in at.markdown)
    assert loaded_models(lab_server) == before


def test_64_sessions_over_a_grpc_stream_keep_the_board_and_timeline_readable(open_page):
    at = open_page("lab.py", learner=link_id("lab-ed"))
    run(at.button(key="lab.preset.the_fix").click())
    run(at.slider(key="lab.sessions").set_value(64))
    run(at.slider(key="lab.chunks").set_value(5))
    run(at.selectbox(key="lab.transport").set_value("grpc_stream"))
    run(at.number_input(key="lab.in_flight").set_value(2))
    run(at.radio(key="lab.prediction").set_value("intact"))
    run(at.button(key="lab.run").click())
    assert at.query_params["transport"] == "grpc_stream" and at.query_params["in_flight"] == "2"
    assert at.query_params["sessions"] == "64"

    # Twelve sessions on the board with their audio, the other 52 folded into one expander.
    assert sum("<b>Session " in m.value for m in at.markdown) == 64
    assert len(at.get("audio")) == 12
    assert [e.label for e in at.expander if e.label.startswith("The other 52 sessions")]
    timeline = next(c for c in at.get("plotly_chart") if c.proto.id.endswith("-slot-timeline"))
    assert "64 sessions: hover a bar" in timeline.proto.spec


def test_queue_delay_under_direct_is_honest_about_min_slot_utilization(open_page, unload_at_end):
    # model_config.proto StrategyDirect: the queue delay is ignored unless minimum_slot_utilization > 0.
    unload_at_end(setup_model_name(LabSettings(scheduler="direct", instances=1, slots=2, queue_delay_us=3000, min_slot_utilization=0.5)))
    at = open_page("lab.py", learner=link_id("lab-eu"), scheduler="direct", instances="1", slots="2", queue_delay_us="3000")
    assert at.number_input(key="lab.queue_delay_us").disabled
    assert any("ignored under direct" in c.value for c in at.caption)
    run(at.number_input(key="lab.min_slot_utilization").set_value(0.5))
    assert not at.number_input(key="lab.queue_delay_us").disabled
    assert not any("ignored under direct" in c.value for c in at.caption)
    assert at.query_params["min_slot_utilization"] == "0.5"
    run(at.button(key="lab.apply").click())
    pbtxt = at.code[0].value
    assert "minimum_slot_utilization: 0.5" in pbtxt and "max_queue_delay_microseconds: 3000" in pbtxt
    run(at.radio(key="lab.scheduler").set_value("oldest"))
    assert at.number_input(key="lab.min_slot_utilization").disabled
    assert not at.number_input(key="lab.queue_delay_us").disabled


def test_the_lab_speaks_chinese_when_the_url_asks(open_page):
    from app.i18n import N_, words
    from app.lab.problems import Problem
    from app.recogniser.words import prediction as prediction_words
    from app.text import problems as problem_words
    from app.text import verdicts as verdict_words

    zh = words("zh")
    at = open_page("lab.py", learner=link_id("lab-zh"), lang="zh", sessions="3")
    assert at.title[0].value == zh("Live lab")
    assert at.button(key="lab.run").label == zh("Run") and at.button(key="lab.preset.the_fix").label == zh("The fix")
    assert at.radio(key="lab.prediction").options[0] == prediction_words.choice("intact", zh)
    # A problem is worded in Chinese, its values as they were typed.
    run(at.text_area(key="lab.own_text").input("HELLO\nR2D2"))
    problem = problem_words.problem(Problem("utterance_bad_character",
                                            {"number": 2, "text": "R2D2", "char": "2", "position": 2}), zh)
    assert [e.value for e in at.error] == [zh("This set-up cannot be deployed or run yet; nothing has been loaded:")
                                           + f"\n- {problem}"]
    run(at.text_area(key="lab.own_text").input(""))
    run(at.button(key="lab.preset.the_fix").click())
    run(at.slider(key="lab.sessions").set_value(3))
    run(at.radio(key="lab.prediction").set_value("intact"))
    run(at.button(key="lab.run").click())
    assert any(m.value == "#### " + zh("Transcript board") for m in at.markdown)
    intact = zh.render(N_("All {total:count} sessions intact: {why:text}."), total=3,
                       why=verdict_words.explanation("intact", zh))
    assert intact in [s.value for s in at.success]
    assert sum(f"<b>{zh.render(N_('Session {number:count}'), number=n)}</b>" in m.value
               for m in at.markdown for n in (1, 2, 3)) == 3
    assert at.header[-1].value == zh("Results of the last run")
    timeline = next(c for c in at.get("plotly_chart") if c.proto.id.endswith("-slot-timeline"))
    layout = __import__("json").loads(timeline.proto.spec)["layout"]
    assert layout["title"]["text"] == zh("Slot occupancy: instance × slot over time")
    assert layout["xaxis"]["title"]["text"] == zh("time since the run started (ms)")
