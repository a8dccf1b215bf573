"""The "Check a deployment" page in AppTest on the session's real server: a sound shipped model
holds every check, the shipped mistake breaks for its history dependence, the downloads are the
engine's bytes, the page reads in Chinese, each rule of "Safety in a class" holds, and each bad
input gets one message in the learner's language with nothing left loaded or running. The client
faults' controls reach the check: the lab's generator with cancellation handling off is caught
leaking through the page, its fault's witness shown, and a fault not exercised is shown apart.

Real checks are few and small: each shipped model is checked once per module through the page
(the `page_runs` cache), and the Chinese test draws those same results."""
from __future__ import annotations

import base64
import dataclasses
import json
import threading
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from streamlit import config
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1 import app_test as app_test_module

from app.checker import figures as check_charts
from app.checker import words as check_words
from app.checker.engine import CheckResult, inputs
from app.checker.engine.reports import junit, report
from app.checker.engine.sequences.judge import judge
from app.checker.engine.verdicts import witnessed
from app.checker.page import servers as check_servers
from app.checker.page.controls import OTHER
from app.checker.page.report import RESULT_KEY, CheckRun, summary
from app.checker.words import error as problem_text
from app.checker.words import page as page_words
from app.i18n import SOURCE_LANGUAGE, languages, words
from app.lab.problems import LabError
from app.lab.server import LabServer, free_ports
from app.lab.traffic import run_queue
from app.quiz import access_rules
from app.ui import shared_server
from tests.checker.conftest import ZOO, check_copies_gone, load_zoo, ready, unload
from tests.checker.tables import Rows, facts, tables
from tests.i18n.test_pages_in_chinese import untranslated
from tests.i18n.text_checks import reads_in
from tests.server_calls import ask
from tests.views.conftest import MAIN, RUN_TIMEOUT_S
from tests.waiting import wait_for

SESSIONS, STEPS = 6, 4  # small checks: every check still has steps to compare and a backlog to reach
ZOO_MODELS = ("zoo_fails", "zoo_decoupled", "zoo_varlen", "zoo_direct_slot", "zoo_evicting_cache", "zoo_stream_by_row")
WAIT_S = 60.0


class RecordingStorage(MemoryMediaFileStorage):
    """AppTest's media storage, remembered, so a test reads the bytes a download button serves."""

    made: list[MemoryMediaFileStorage] = []

    def __init__(self, endpoint: str):
        super().__init__(endpoint)
        RecordingStorage.made.append(self)


@pytest.fixture(scope="module")
def env(lab_server, deployer):
    """The page's own server is the session's embedded one, as in an app started without TRITON_URL
    (which has the lab's model files, so it can make a one-instance copy of a shipped model)."""
    with pytest.MonkeyPatch.context() as patch:
        for key, value in lab_server.environment().items():
            patch.setenv(key, value)  # for the pages around it, which build their own handle from the environment
        patch.setattr(shared_server, "_lab", lambda: (lab_server, deployer))
        patch.delenv(check_servers.ENV, raising=False)
        patch.setattr(app_test_module, "MemoryMediaFileStorage", RecordingStorage)
        yield patch


@pytest.fixture(scope="module")
def zoo(lab_server, env):
    load_zoo(lab_server, ZOO_MODELS)
    try:
        yield lab_server
    finally:
        unload(lab_server, ZOO_MODELS)


def open_check(**query: str) -> AppTest:
    at = AppTest.from_file(str(MAIN), default_timeout=RUN_TIMEOUT_S)
    for key, value in query.items():
        at.query_params[key] = value
    at.run(timeout=RUN_TIMEOUT_S)
    return run(at.switch_page("views/check.py"))


def run(at) -> AppTest:
    at = at.run(timeout=RUN_TIMEOUT_S)
    assert not at.exception, [e.value for e in at.exception]
    return at


def showing(done: CheckRun, **query: str) -> AppTest:
    """The check page opened with a finished check in its state, as after a Run, and the query given."""
    at = AppTest.from_file(str(MAIN), default_timeout=RUN_TIMEOUT_S)
    for key, value in query.items():
        at.query_params[key] = value
    at.session_state[RESULT_KEY] = done
    return run(at.run(timeout=RUN_TIMEOUT_S).switch_page("views/check.py"))


def small(at, sessions: int | None = SESSIONS, steps: int | None = STEPS) -> AppTest:
    if sessions is not None:
        at.number_input(key="check.sessions").set_value(sessions)
    if steps is not None:
        at.number_input(key="check.steps").set_value(steps)
    return run(at)


def texts(at, kinds=("error", "warning", "info", "success", "caption", "markdown")) -> list[str]:
    return [str(e.value) for kind in kinds for e in getattr(at, kind)]


def ready_models(server) -> set[str]:
    return {e["name"] for e in ask(server, "get_model_repository_index") if e.get("state") == "READY"}


def nothing_left(server, models=()) -> None:
    """No one-instance copy served, no lease held on any of `models`."""
    assert check_copies_gone(server) == []
    assert not set(models) & run_queue.for_server(server.url).busy()


@pytest.fixture(scope="module")
def page_runs(lab_server, env):
    """Each shipped model checked once through the page; the AppTest and its CheckRun kept."""
    cache: dict = {}

    def check(model: str, **query) -> tuple[AppTest, CheckRun]:
        if model not in cache:
            at = small(open_check(model=model, **query))
            at = run(at.button(key="check.run").click())
            cache[model] = (at, at.session_state[RESULT_KEY])
        return cache[model]

    return check


def test_a_sound_shipped_model_holds_every_check(lab_server, page_runs):
    at, checked = page_runs("asr_sequence_direct")
    result = checked.result
    assert result.facts.name == "asr_sequence_direct" and result.where == "embedded"
    checks = ("interleaved", "id_reuse", "abandoned", "cancelled")
    runs = ("alone", "all_instances", "one_instance")
    # The page's small run (SESSIONS sessions of STEPS steps) may not exercise every check: with a 5 s idle
    # timeout the slot holders can end before the reaper frees an abandoned slot. Such a check is
    # not_exercised, never held, and the outcome is a warning that never says every check held.
    got = {v.id: v.verdict for v in result.verdicts}
    assert got == {
        "reference/alone": "held", **{f"{c}/{variant}": got[f"{c}/{variant}"] for c in checks for variant in ("all_instances", "one_instance")},
        "slow_client/all_instances": "held",  # the client fault, on by default
        # no data file, so no golden outputs; the recogniser's outputs are integers, which cannot be NaN
        **{f"{c}/{variant}": "skipped" for c in ("golden", "finite") for variant in runs}}
    assert {got[f"{c}/{v}"] for c in checks for v in ("all_instances", "one_instance")} <= {"held", "not_exercised"}
    if result.not_exercised:
        assert result.exit_code == 3 and not at.success and any("were not exercised" in w.value for w in at.warning)
    else:
        assert result.exit_code == 0 and any(s.value == "Every check held." for s in at.success)
    table = at.dataframe[0].value  # the checks table; refusals, when any, come next
    assert list(table["verdict"]) == [check_words.VERDICTS[v.verdict] for v in result.verdicts]
    assert set(table["verdict"]) <= {"HELD", "SKIPPED", "NOT EXERCISED"}
    assert all("matched their references" in d for d, v in zip(table["what the check found"], result.verdicts, strict=True)
               if v.verdict == "held")
    charts = {c.proto.id for c in at.get("plotly_chart")}
    assert any(c.endswith("-check-timeline") for c in charts)
    assert not any("-check-errors-" in c for c in charts), "no broken session, no error figure"
    nothing_left(lab_server, ["asr_sequence_direct"])


def seen(condition, what: str) -> bool:
    """tests.waiting.wait_for from a helper thread, where a failed wait must come back as False, not vanish."""
    try:
        return bool(wait_for(condition, what, timeout_s=WAIT_S))
    except AssertionError:
        return False


@pytest.fixture(scope="module")
def dynamic_run(lab_server, page_runs):
    """asr_dynamic checked through the page while another run holds its lease: the check must wait
    its turn, then hold the lease itself while it sends. Returns the run and what the holder saw."""
    queue = run_queue.for_server(lab_server.url)
    saw = {"check_queued": False, "check_held": False}
    holding = threading.Event()

    def holder() -> None:
        with queue.lease("asr_dynamic"):
            holding.set()
            saw["check_queued"] = seen(lambda: queue.waiting() > 0, "the page's check queued behind this lease")
        saw["check_held"] = seen(lambda: "asr_dynamic" in queue.busy(), "the page's check holding the lease")

    thread = threading.Thread(target=holder, name="lease-holder")
    thread.start()
    assert holding.wait(WAIT_S)
    at, checked = page_runs("asr_dynamic")
    thread.join(WAIT_S)
    return at, checked, saw


def test_the_shipped_mistake_breaks_for_its_history_dependence_at_its_first_diverging_step(lab_server, dynamic_run):
    at, checked, _seen = dynamic_run
    result = checked.result
    broken = result.judgement.verdict("repeat_alone")
    assert (broken.verdict, broken.reason) == ("broken", "keeps_state")
    first = broken.values["first"]
    assert any(e.value == "A check broke." for e in at.error)
    assert check_words.DIAGNOSES["keeps_state"] in [w.value for w in at.warning]
    row = at.dataframe[0].value.iloc[0]
    assert row["verdict"] == "BROKEN" and row["check"] == check_words.CHECKS["repeat_alone"]
    assert (row["first diverging session"], row["step"]) == (f"session {first['session'] + 1}", str(first["step"] + 1))
    assert row["output"] == first["output"] and row["difference"] == check_words.number(first["difference"])
    assert row["what the check found"].startswith("first differed at ")
    charts = {c.proto.id for c in at.get("plotly_chart")}
    assert any(c.endswith("-check-timeline") for c in charts) and any(c.endswith("-check-errors-0") for c in charts)
    nothing_left(lab_server, ["asr_dynamic"])


def test_the_check_waits_for_the_models_lease_then_holds_it_while_it_runs(lab_server, dynamic_run):
    assert dynamic_run[2] == {"check_queued": True, "check_held": True}
    assert "asr_dynamic" not in run_queue.for_server(lab_server.url).busy()


def served(button) -> bytes:
    """The bytes a download button serves, from AppTest's media storage."""
    filename = button.proto.url.rsplit("/", 1)[1]
    for storage in reversed(RecordingStorage.made):
        try:
            return storage.get_file(filename).content
        except Exception:
            continue
    raise AssertionError(f"no media file {filename}")


def test_the_downloads_are_the_engines_json_and_junit_xml(dynamic_run):
    at, checked, _seen = dynamic_run
    result, en = checked.result, words("en")
    buttons = {b.key: b for b in at.download_button}
    assert served(buttons["check-json"]) == report.dumps(result).encode("utf-8")
    # The CLI's --junit-xml: the engine's writer with the checker's sentences as messages.
    assert served(buttons["check-junit"]) == junit.to_xml(result, describe=lambda v: check_words.junit_message(v, en)).encode("utf-8")
    document = json.loads(served(buttons["check-json"]))
    assert document["kind"] == "check" and document["model"]["name"] == "asr_dynamic" and document["exit_code"] == 1
    assert [(c["check"], c["verdict"]) for c in document["checks"]] == [(v.check, v.verdict) for v in result.verdicts]
    suite = ET.fromstring(served(buttons["check-junit"])).find("testsuite")
    assert int(suite.get("tests")) == len(result.verdicts) and int(suite.get("failures")) == 1


@pytest.mark.parametrize("lang", [lang for lang in languages() if lang != SOURCE_LANGUAGE])
def test_the_results_read_in_the_learners_language(page_runs, dynamic_run, lang):
    _ = words(lang)
    for model in ("asr_sequence_direct", "asr_dynamic"):
        at = showing(page_runs(model)[1], lang=lang, model=model)
        assert at.title[0].value == _("Check a deployment") and reads_in(lang, at.title[0].value, "Check a deployment")
        table = at.dataframe[0].value
        assert reads_in(lang, list(table.columns)[0], "verdict") and list(table.columns)[0] == _("verdict")
        result = page_runs(model)[1].result
        assert list(table.iloc[:, 0]) == [_(check_words.VERDICTS[v.verdict]) for v in result.verdicts]
        assert list(table.iloc[:, -1]) == [check_words.verdict_sentence(v, _) for v in result.verdicts]
        outcome = " ".join(check_words.outcome_lines(result, _))
        shown = {"broken": at.error, "not_exercised": at.warning, "held": at.success}[result.outcome]
        assert outcome in [e.value for e in shown] and reads_in(lang, outcome, " ".join(check_words.outcome_lines(result, words("en"))))
        found = untranslated(at)  # no English prose anywhere on the page
        assert not found, found[:10]


# ---- safety in a class --------------------------------------------------------------------------

@pytest.fixture()
def address():
    """Streamlit's server.address for one test (the repository's .streamlit/config.toml says loopback)."""
    before = config.get_option("server.address")
    yield lambda value: config.set_option("server.address", value)
    config.set_option("server.address", before)


def server_options(at) -> list[str]:
    """The server choices as the learner reads them."""
    return list(at.selectbox(key="check.server").options)


OWN_LABEL = "this app's server ({url})"
ENTERED_LABEL = "another server: type its address"


def test_the_rules_for_which_server_may_be_checked():
    assert check_servers.normalise("http://triton.local:8000/") == "triton.local:8000"
    assert check_servers.normalise("[::1]:8001") == "[::1]:8001"
    assert [check_servers.normalise(v) for v in ("triton.local", "https://a:1", "a:0", "a:70000", "a b:1", "")] == [None] * 6
    assert check_servers.listed({check_servers.ENV: " a:1, http://a:1 ,b:2,,nope"}) == (["a:1", "b:2"], ["nope"])
    assert check_servers.listed({}) == ([], [])
    assert check_servers.free_form_refusal("127.0.0.1", None, False) is None
    assert check_servers.free_form_refusal("localhost", "k", False) is None
    assert check_servers.free_form_refusal("0.0.0.0", None, False) == "no_key"
    assert check_servers.free_form_refusal(None, None, True) == "no_key"  # unset listens everywhere; no key, nothing unlocks
    assert check_servers.free_form_refusal("0.0.0.0", "k", False) == "locked"
    assert check_servers.free_form_refusal("0.0.0.0", "k", True) is None
    assert check_servers.allowed("own:1", "own:1", [], free_form=False)
    assert check_servers.allowed("b:2", "own:1", ["b:2"], free_form=False)
    assert not check_servers.allowed("c:3", "own:1", ["b:2"], free_form=False)
    assert check_servers.allowed("c:3", "own:1", ["b:2"], free_form=True)


def test_beyond_loopback_without_a_key_only_the_own_and_listed_servers_are_offered(lab_server, env, address):
    address("0.0.0.0")
    port = lab_server.url.rsplit(":", 1)[1]
    env.setenv(check_servers.ENV, f"localhost:{port}, http://localhost:{port}/, {lab_server.url}, not an address")
    try:
        at = open_check()
    finally:
        env.delenv(check_servers.ENV)
    assert server_options(at) == [OWN_LABEL.format(url=lab_server.url), f"localhost:{port} (listed in TRITON_LAB_CHECK_URLS)"], \
        "the own server once, each listed one once, no free form"
    assert page_words.NO_FREE_FORM["no_key"] in [c.value for c in at.caption]
    assert any("'not an address' is not a server address" in w.value for w in at.warning)
    assert not [t for t in at.text_input if t.key == "check.address"]


def test_on_loopback_a_free_form_address_is_offered(lab_server, env, address):
    address("127.0.0.1")
    at = open_check()
    assert server_options(at) == [OWN_LABEL.format(url=lab_server.url), ENTERED_LABEL]
    at = run(at.selectbox(key="check.server").set_value("entered"))
    at = run(at.text_input(key="check.address").input("not a server"))
    assert any("'not a server' is not a server address" in e.value for e in at.error)
    assert at.selectbox(key="check.server").value == "entered"
    assert not [b for b in at.button if b.key == "check.run"], "no model, no run, for an address that is not one"


def test_beyond_loopback_the_instructor_key_unlocks_a_free_form_address(lab_server, env, address):
    address("0.0.0.0")
    env.setenv(access_rules.ENV_KEY, "staff-room-7")
    own = OWN_LABEL.format(url=lab_server.url)
    try:
        at = open_check()
        assert server_options(at) == [own]
        assert page_words.NO_FREE_FORM["locked"] in [c.value for c in at.caption]
        at.text_input(key="check-access-input").input("wrong")
        at = run(at.button(key="check-access-submit").click())
        assert server_options(at) == [own] and any("not the instructor key" in e.value for e in at.error)
        at.text_input(key="check-access-input").input("staff-room-7")
        at = run(at.button(key="check-access-submit").click())
        assert server_options(at) == [own, ENTERED_LABEL]
    finally:
        env.delenv(access_rules.ENV_KEY)


@pytest.fixture()
def sentiment_unloaded(lab_server):
    """sentiment (a shipped model nobody else uses in this module) not loaded for one test, loaded again after."""
    unload(lab_server, ["sentiment"])
    lab_server.models.forget()  # the lab's bookkeeping must not think it is still loaded
    try:
        yield "sentiment"
    finally:
        lab_server.models.ensure("sentiment")


def test_a_listed_server_gets_no_load_and_the_check_loads_nothing(lab_server, env, sentiment_unloaded):
    port = lab_server.url.rsplit(":", 1)[1]
    env.setenv(check_servers.ENV, f"localhost:{port}")
    try:
        at = run(open_check(model="sentiment").selectbox(key="check.server").set_value(f"listed:localhost:{port}"))
    finally:
        env.delenv(check_servers.ENV)
    assert at.selectbox(key="check.model").value == "sentiment"
    assert any("The checker never loads or unloads a model it did not create" in w.value for w in at.warning)
    assert not [b for b in at.button if b.key == "check.load"]
    assert at.button(key="check.run").disabled
    assert not ready(lab_server, "sentiment")


def test_on_the_apps_own_server_a_lab_deployment_is_loaded_only_when_asked(lab_server, env, sentiment_unloaded):
    at = open_check(model="sentiment")
    assert any("It is one of the lab's own deployments" in w.value for w in at.warning)
    assert at.button(key="check.run").disabled and not ready(lab_server, "sentiment")
    at = run(at.button(key="check.load").click())
    assert ready(lab_server, "sentiment")
    assert "sentiment (ready)" in at.selectbox(key="check.model").options
    assert not at.button(key="check.run").disabled


# ---- bad input ----------------------------------------------------------------------------------

def typed(model: str, **query) -> AppTest:
    at = open_check(**query)
    at = run(at.selectbox(key="check.model").set_value(OTHER))
    return run(at.text_input(key="check.model_name").input(model))


def one_error(at) -> str:
    errors = [e.value for e in at.error]
    assert len(errors) == 1, errors
    return errors[0]


def stats(server, model: str) -> int:
    return ask(server, "get_inference_statistics", model)["model_stats"][0]["inference_count"]


@pytest.mark.parametrize("lang", languages())
def test_an_unknown_model_is_named_with_the_models_there_are(lab_server, zoo, lang):
    before = ready_models(lab_server)
    at = typed("no_such_model", lang=lang)
    err = LabError("check_model_unknown", model="no_such_model", url=lab_server.url, models=", ".join(sorted(before)))
    expected = problem_text(err, words(lang))
    assert one_error(at) == expected and reads_in(lang, expected, problem_text(err, words(SOURCE_LANGUAGE)))
    assert "no_such_model" in expected and "asr_sequence_direct" in expected
    assert at.button(key="check.run").disabled
    assert ready_models(lab_server) == before and not ready(lab_server, "no_such_model")


def points(values) -> int:
    """How many values a figure's JSON holds in one array (plotly writes numpy arrays as base64 `bdata`)."""
    if isinstance(values, dict):
        return len(np.frombuffer(base64.b64decode(values["bdata"]), dtype=np.dtype(values["dtype"])))
    return len(values or [])


def stream_timeline_shown(at, result, _) -> None:
    """The check's timeline figure on the page is a decoupled model's response streams, with their
    summary under it in the reader's language, not the empty figure of a check without a trace."""
    [timeline] = [c for c in at.get("plotly_chart") if c.proto.id.endswith("-check-timeline")]
    drawn = json.loads(timeline.proto.spec)
    assert drawn["layout"]["title"]["text"] == check_charts.timeline(result, _).layout.title.text
    heard = sum(len(s.times) for s in [*result.streams.alone["a"], *result.streams.alone["b"], *result.streams.staggered])
    assert heard and sum(points(trace.get("x")) for trace in drawn["data"] if trace.get("mode") == "markers") >= heard
    assert check_charts.timeline_summary(result, _) in [c.value for c in at.caption]


@pytest.mark.parametrize("lang", languages())
def test_a_decoupled_model_is_checked_by_its_response_streams(lab_server, zoo, lang):
    before = stats(lab_server, "zoo_decoupled")
    at = run(small(typed("zoo_decoupled", lang=lang), steps=None).button(key="check.run").click())
    result = at.session_state[RESULT_KEY].result
    _ = words(lang)
    assert result.exit_code == 0 and result.streams is not None
    assert stats(lab_server, "zoo_decoupled") - before == 3 * SESSIONS  # alone twice, then staggered
    table = at.dataframe[0].value
    assert _(check_words.CHECKS["stream_staggered"]) in set(table[_(page_words.COLUMNS["check"])])
    assert _(check_words.OUTCOME[0]) in [e.value for e in at.success]
    stream_timeline_shown(at, result, _)
    nothing_left(lab_server, ["zoo_decoupled"])


@pytest.mark.parametrize("lang", languages())
def test_steps_or_a_think_time_for_a_decoupled_model_are_refused_with_what_to_empty_on_this_page(lab_server, zoo, lang):
    _ = words(lang)
    before = stats(lab_server, "zoo_decoupled")
    at = typed("zoo_decoupled", lang=lang)
    assert at.number_input(key="check.think_ms").value is None  # unstated until the user gives one
    at = run(small(at, sessions=SESSIONS, steps=STEPS).button(key="check.run").click())
    message = one_error(at)
    assert message.startswith(_.render(check_words.PROBLEMS["check_stream_steps"], model="zoo_decoupled", steps=STEPS))
    assert _(page_words.PAGE_HINTS["check_stream_steps"]) in message and RESULT_KEY not in at.session_state
    at = run(at.number_input(key="check.steps").set_value(None))
    at = run(at.number_input(key="check.think_ms").set_value(20.0))
    at = run(at.button(key="check.run").click())
    message = one_error(at)
    assert message.startswith(_.render(check_words.PROBLEMS["check_stream_think"], model="zoo_decoupled", think_ms=20.0))
    assert _(page_words.PAGE_HINTS["check_stream_think"]) in message and RESULT_KEY not in at.session_state
    assert stats(lab_server, "zoo_decoupled") == before
    nothing_left(lab_server, ["zoo_decoupled"])


def test_a_broken_streaming_checks_streams_are_shown_with_their_diagnosis_in_every_language(lab_server, zoo):
    """zoo_stream_by_row keys each request's state by its batch row: the page lists each broken stream,
    naming the request whose stream it carried on with, and advises keying state by CORRID."""
    from app.checker.engine import CheckOptions, run
    from app.checker.engine import target as targets
    from tests.checker.conftest import zoo_files

    name = "zoo_stream_by_row"
    result = run.run_check(targets.on_server(lab_server, name, files=zoo_files(name)), CheckOptions(sessions=12))
    broken = result.judgement.verdict("stream_staggered")
    assert broken.verdict == "broken"
    for lang in languages():
        _ = words(lang)
        at = showing(CheckRun(result), lang=lang, model=name)
        shown = [str(m.value) for m in at.markdown]
        lines = check_words.diagnosis_lines(broken, _)
        assert len(lines) > 1 and any(all(f"- {line}" in m for line in lines[1:]) for m in shown), lang
        for d in result.judgement.diagnoses:
            assert _(check_words.DIAGNOSES[d["code"]]) in [w.value for w in at.warning], lang
        assert any(check_words.streams.summary_lines(result, _)[0] in c.value for c in at.caption), lang
        stream_timeline_shown(at, result, _)
        assert check_charts.timeline_summary(result, _) != check_charts.timeline_summary(result, words(SOURCE_LANGUAGE)) or \
            lang == SOURCE_LANGUAGE
        if lang != SOURCE_LANGUAGE:
            found = untranslated(at)
            assert not found, found[:10]
    nothing_left(lab_server, [name])


def test_a_model_that_fails_every_request_stops_the_check_with_tritons_words(lab_server, zoo):
    at = run(small(typed("zoo_fails")).button(key="check.run").click())
    message = one_error(at)
    assert message.startswith("model 'zoo_fails' refused every request") and "the zoo's failing model refuses every request" in message
    assert RESULT_KEY not in at.session_state
    nothing_left(lab_server, ["zoo_fails"])


def test_a_variable_input_without_a_shape_is_checked_with_drawn_sizes_and_a_bad_shape_is_refused_before_run(lab_server, zoo):
    at = run(small(typed("zoo_varlen")).button(key="check.run").click())
    assert not at.error and at.session_state[RESULT_KEY].result.exit_code == 0
    (tokens,) = at.session_state[RESULT_KEY].result.inputs.shapes
    assert tokens.sized_by == "drawn" and 1 <= tokens.smallest[0] < tokens.largest[0] <= 16
    summary = "\n".join(texts(at, ("caption",)))
    assert f"input TOKENS [-1]: [{tokens.smallest[0]}] to [{tokens.largest[0]}], drawn for each session and step" in summary
    assert f"{SESSIONS} sessions of" in summary and "1 instance;" in summary
    before = stats(lab_server, "zoo_varlen")
    at = run(at.text_input(key="check.shapes").input("TOKENS"))  # no dimensions: refused before Run
    assert "--shape takes NAME:d1,d2" in one_error(at) and at.button(key="check.run").disabled
    assert stats(lab_server, "zoo_varlen") == before
    nothing_left(lab_server, ["zoo_varlen"])


def counted_run(instances: int, slots: int, lengths: list[int], rows: Rows, data_name: str | None = None) -> CheckRun:
    t = tables(rows, model_facts=facts(instances=instances, slots=slots))
    t.lengths = lengths
    used = inputs.InputsUsed(None, (inputs.ShapeUsed("TOKENS", (-1,), "data_file" if data_name else "shape", (5,), (5,)),))
    return CheckRun(CheckResult(t.facts, t.options, t, judge(t), "external", "h:8000", 1.5, inputs=used), data_name)


PAGE_SUMMARIES = {
    ("en", 1): ["`m` version 1 on h:8000 (an external server): direct, 1 instance; 1 request in 1.5 s.",
                "Capacity 1 sequence (1 × 1 slot), idle timeout 1.0 s.", "1 session of 1 step, inputs generated from the model's metadata.",
                "input TOKENS [-1]: [5], from --shape"],
    ("en", 2): ["`m` version 1 on h:8000 (an external server): direct, 2 instances; 8 requests in 1.5 s.",
                "Capacity 8 sequences (2 × 4 slots), idle timeout 1.0 s.", "16 sessions of 8 to 24 steps, inputs the uploaded file data.json.",
                "input TOKENS [-1]: [5], from the data file"],
    ("zh", 1): ["h:8000 上的 `m` 版本 1（外部服务器）：direct，1 个实例；1.5 秒 内发送了 1 个请求。", "容量为 1 个序列（1 × 1 个槽位），空闲超时 1.0 秒。",
                "1 个会话，每个 1 步，输入由模型的元数据生成。", "输入 TOKENS [-1]：[5]，来自 --shape"],
    ("zh", 2): ["h:8000 上的 `m` 版本 1（外部服务器）：direct，2 个实例；1.5 秒 内发送了 8 个请求。", "容量为 8 个序列（2 × 4 个槽位），空闲超时 1.0 秒。",
                "16 个会话，每个 8 到 24 步，输入来自上传的文件 data.json。", "输入 TOKENS [-1]：[5]，来自数据文件"],
}


@pytest.mark.parametrize(("lang", "instances"), list(PAGE_SUMMARIES))
def test_the_pages_summary_names_the_version_and_counts_in_the_languages_singular_and_plural(lang, instances):
    """Pure: the summary above the results, for counts of one and of several, in each language."""
    if instances == 1:
        run_ = counted_run(1, 1, [1], Rows().add("reference", pass_="a"))
    else:
        run_ = counted_run(2, 4, [24] + [8] * 15, Rows().reference(sequences=2, steps=2), data_name="data.json")
    assert summary(run_, words(lang)) == PAGE_SUMMARIES[(lang, instances)]


def test_what_the_user_says_about_their_clients_is_checked_before_run(lab_server, zoo):
    """The config review's figures (the CLI's --max-corrid and the rest) sit in an expander; an ID
    that is no number stops the check with one message, a 64-bit one is taken as it is."""
    at = typed("zoo_direct_slot")
    at = run(at.text_input(key="check.max_corrid").input("lots"))
    assert one_error(at).endswith("\n- the largest correlation ID must be a whole number: got 'lots'") and at.button(key="check.run").disabled
    at = run(at.text_input(key="check.max_corrid").input(str(2**64 - 1)))
    assert not at.error and not at.button(key="check.run").disabled
    at = run(at.number_input(key="check.gpus").set_value(0))
    assert not at.error and "Your clients and server (for the config review)" in [e.label for e in at.expander]


def test_a_data_file_that_does_not_match_the_model_is_refused_naming_the_file(lab_server, zoo):
    before = stats(lab_server, "zoo_direct_slot")
    at = small(typed("zoo_direct_slot"), sessions=None, steps=None)
    at.file_uploader(key="check.data").upload("bad.json", json.dumps({"data": [[{"IDS": [1, 2]}]]}).encode(), "application/json")
    at = run(run(at).button(key="check.run").click())
    message = one_error(at)
    assert message.startswith("bad.json: stream 1, step 1 names IDS, which the model does not have")
    assert stats(lab_server, "zoo_direct_slot") == before
    at.file_uploader(key="check.data").set_value(("broken.json", b"{not json", "application/json"))
    at = run(at)
    assert "the data file broken.json cannot be read" in one_error(at) and at.button(key="check.run").disabled
    nothing_left(lab_server, ["zoo_direct_slot"])


def test_without_the_models_files_the_one_instance_variant_is_skipped_and_said(lab_server, zoo):
    streams = [[{"INPUT": [s, k]} for k in range(4)] for s in range(6)]
    at = typed("zoo_direct_slot")
    at.file_uploader(key="check.data").upload("streams.json", json.dumps({"data": streams}).encode(), "application/json")
    at = run(run(at).button(key="check.run").click())
    assert not at.error, [e.value for e in at.error]
    result = at.session_state[RESULT_KEY].result
    assert result.tables.input_source == "data_file" and result.tables.lengths == [4] * 6
    skipped = {v.id: v.reason for v in result.verdicts if v.verdict == "skipped"}
    assert skipped == {**{f"{c}/one_instance": "no_model_files" for c in ("interleaved", "id_reuse", "abandoned", "cancelled")},
                       # the file has no validation_data, and an INT64 output cannot be NaN
                       **{f"golden/{v}": "no_golden_data" for v in ("alone", "all_instances", "one_instance")},
                       **{f"finite/{v}": "no_float_outputs" for v in ("alone", "all_instances", "one_instance")}}
    table = at.dataframe[0].value
    said = table[table["verdict"] == "SKIPPED"]["what the check found"]
    assert list(said)[:4] == ["the checker does not have zoo_direct_slot's files, so it cannot load a one-instance copy"] * 4
    # held, or held without its witness (a freed slot no follower took in this small run): never broken
    assert set(table[table["verdict"] != "SKIPPED"]["verdict"]) <= {"HELD", "NOT EXERCISED"}
    assert any("inputs the uploaded file streams.json" in c.value for c in at.caption)
    nothing_left(lab_server, ["zoo_direct_slot"])


def test_a_broken_sequence_checks_sessions_are_shown_with_their_diagnosis_in_every_language(lab_server, zoo):
    """zoo_evicting_cache keeps state for fewer sequences than its slots: the page lists each diagnosed
    session with its class, and advises on the state store's size rather than on its key."""
    from app.checker.engine import CheckOptions, run
    from app.checker.engine import target as targets
    from tests.checker.conftest import zoo_files

    name = "zoo_evicting_cache"
    target = targets.on_server(lab_server, name, files=zoo_files(name))
    result = run.run_check(target, CheckOptions(steps=STEPS, only=("interleaved",), one_instance=False))
    broken = result.judgement.verdict("interleaved", "all_instances")
    assert {e["class"] for e in broken.values["diagnosis"]["sessions"]} == {"lost"}
    for lang in languages():
        _ = words(lang)
        at = showing(CheckRun(result), lang=lang, model=name)
        shown = [str(m.value) for m in at.markdown]
        assert "**" + _("What the broken sessions show, replayed alone") + "**" in shown, lang
        lines = check_words.diagnosis_lines(broken, _)
        assert any(all(f"- {line}" in m for line in lines[1:]) for m in shown), lang
        assert _(check_words.DIAGNOSES["lost_state"]) in [w.value for w in at.warning], lang
        if lang != SOURCE_LANGUAGE:
            found = untranslated(at)
            assert not found, found[:10]
    nothing_left(lab_server, [name])


def test_a_server_that_does_not_answer_is_said_once_and_nothing_is_offered(env):
    url = f"127.0.0.1:{free_ports(1)[0]}"
    env.setenv(check_servers.ENV, url)
    try:
        at = run(open_check().selectbox(key="check.server").set_value(f"listed:{url}"))
    finally:
        env.delenv(check_servers.ENV)
    assert one_error(at) == words("en").render(page_words.PROBLEMS["check_server_unreachable"], url=url)
    assert not [s for s in at.selectbox if s.key == "check.model"] and not [b for b in at.button if b.key == "check.run"]


@pytest.fixture()
def doomed_server():
    """A server of the zoo's repository to be killed mid-check (the session's must live on)."""
    server = LabServer(model_repository=ZOO).start()
    try:
        server.models.ensure("zoo_batch_dependent")
        yield server
    finally:
        log = server.embedded.log_path if server.embedded else None
        server.stop()
        if log is not None:
            log.unlink(missing_ok=True)  # a killed server keeps its log for a post-mortem; this death was ours


def test_a_server_that_stops_mid_check_stops_it_with_one_message(env, doomed_server):
    server = doomed_server
    env.setenv(check_servers.ENV, server.url)
    killed = threading.Event()

    def kill_once_requests_flow() -> None:
        if seen(lambda: stats(server, "zoo_batch_dependent") >= 10, "ten requests answered"):
            server.embedded.kill_for_demo()
            killed.set()

    try:
        at = run(open_check().selectbox(key="check.server").set_value(f"listed:{server.url}"))
        at = run(at.selectbox(key="check.model").set_value("zoo_batch_dependent"))
        killer = threading.Thread(target=kill_once_requests_flow, name="killer")
        killer.start()
        at = run(at.button(key="check.run").click())
        killer.join(WAIT_S)
    finally:
        env.delenv(check_servers.ENV)
    assert killed.is_set()
    assert one_error(at) == problem_text(LabError("check_server_gone", url=server.url), words("en"))
    assert RESULT_KEY not in at.session_state
    assert "zoo_batch_dependent" not in run_queue.for_server(server.url).busy()


# ---- client faults ------------------------------------------------------------------------------

GAUGE = "gen_state_cells"  # the lab generator's own gauge of the state cells it holds (tests/checker/test_client_faults.py)


@pytest.fixture(scope="module")
def leaky_generator(lab_server, env):
    """The lab's token generator with cancellation handling off (honour_cancel false): a request
    cancelled mid-stream keeps its state cell, which its gauge shows."""
    from app.generation import runs
    from app.generation.exercises.cancelled_generation.engine import SETUP

    name = runs.deploy(lab_server, SETUP, "inflight", 20.0, False)
    try:
        yield name
    finally:
        unload(lab_server, [name])


@pytest.fixture(scope="module")
def fault_run(lab_server, leaky_generator):
    """The leaky generator checked once through the page, its gauge named under Client faults."""
    at = small(open_check(model=leaky_generator), steps=None)
    at = run(at.text_input(key="check.state_metric").input(GAUGE))
    at = run(at.button(key="check.run").click())
    return at, at.session_state[RESULT_KEY]


def test_the_client_faults_are_on_by_default_and_a_bad_gauge_name_is_refused_before_run(lab_server, leaky_generator):
    before = stats(lab_server, leaky_generator)
    at = open_check(model=leaky_generator)
    assert "Client faults" in [e.label for e in at.expander]
    assert at.checkbox(key="check.faults").value is True and at.checkbox(key="check.faults").label == "Client faults"
    assert at.text_input(key="check.state_metric").value == "" and not at.error and not at.button(key="check.run").disabled
    at = run(at.text_input(key="check.state_metric").input("gen state cells"))
    assert one_error(at) == ("These options cannot be used yet; nothing was sent:\n- --state-metric takes a Prometheus metric name "
                             "(letters, digits, _ and :): got 'gen state cells' "
                             + words("en")(page_words.PAGE_HINTS["check_state_metric_bad"]))
    assert at.button(key="check.run").disabled and RESULT_KEY not in at.session_state
    assert stats(lab_server, leaky_generator) == before
    nothing_left(lab_server, [leaky_generator])


def test_a_leaking_fault_is_shown_with_its_witness_and_diagnosis(lab_server, fault_run, leaky_generator):
    at, checked = fault_run
    result, en = checked.result, words("en")
    assert (result.options.faults, result.options.state_metric) == (True, GAUGE)  # the widgets, the name stripped
    v = result.judgement.verdict("stream_cancelled", "all_instances")
    assert (v.verdict, v.reason) == ("broken", "fault_leaks_state"), v
    w = v.values["witness"]
    assert w["exercised"] and w["cancelled_after"] >= 1 and w["state_after"] > w["state_before"] and w["freed"] == "never"
    assert any(e.value == "A check broke." for e in at.error)
    assert check_words.DIAGNOSES["fault_leaks_state"] in [x.value for x in at.warning]
    table = at.dataframe[0].value
    [row] = table[table["check"] == check_words.CHECKS["stream_cancelled"]].to_dict("records")
    sentence = row["what the check found"]
    assert row["verdict"] == "BROKEN" and sentence == check_words.verdict_sentence(v, en)
    # the witness as the learner reads it: the victim, when the cancel landed, Triton's and the model's readings, what settled
    assert sentence.startswith(f"request {w['victim'] + 1} cancelled by its client after {w['cancelled_after']} ")
    assert "; 3 streams beside it; Triton's pending requests " in sentence
    # an earlier fault of the same check may have left its own cell: the reading is relative to the cancel
    before, after = int(w["state_before"]), int(w["state_after"])
    assert after == before + 1, w
    assert f"; the model's gauge {GAUGE} {before} before, {after} after" in sentence, sentence
    assert "; still not settled 10.0 s after the fault" in sentence
    nothing_left(lab_server, [leaky_generator])


def not_exercised_fault(checked: CheckRun) -> CheckRun:
    """The fault run's result with its cancel landing too late: the victim ended first (the witness's
    ended_before_cancel), so the fault held without its situation: not exercised."""
    judgement = checked.result.judgement

    def too_late(v):
        return {**v.values["witness"], "exercised": False, "why": "ended_before_cancel", "advice": "longer_streams",
                "cancelled_after": None, "freed": None, "state_after": v.values["witness"]["state_before"]}
    # the engine's own rule turns a held verdict whose witness saw nothing into not_exercised (each fault's)
    verdicts = [witnessed(dataclasses.replace(x, verdict="held", reason=""), too_late(x))
                if x.check in ("stream_cancelled", "stream_disconnected") else x for x in judgement.verdicts]
    changed = dataclasses.replace(judgement, verdicts=verdicts, diagnoses=[])
    return CheckRun(dataclasses.replace(checked.result, judgement=changed))


@pytest.mark.parametrize("lang", languages())
def test_a_fault_not_exercised_is_shown_apart_from_held_with_what_would_exercise_it(fault_run, lang):
    _ = words(lang)
    shown_run = not_exercised_fault(fault_run[1])
    result = shown_run.result
    assert result.outcome == "not_exercised" and result.exit_code == 3
    at = showing(shown_run, lang=lang, model=result.facts.name)
    outcome = " ".join(check_words.outcome_lines(result, _))
    assert outcome in [x.value for x in at.warning] and not at.success and not at.error
    table = at.dataframe[0].value
    rows = table[table[_(page_words.COLUMNS["check"])] == _(check_words.CHECKS["stream_cancelled"])]
    [(verdict, sentence)] = rows[[_(page_words.COLUMNS["verdict"]), _(page_words.COLUMNS["details"])]].itertuples(index=False)
    v = result.judgement.verdict("stream_cancelled", "all_instances")
    assert verdict == _(check_words.VERDICTS["not_exercised"]) != _(check_words.VERDICTS["held"])
    assert sentence == check_words.not_exercised_sentence(v.values["witness"], _)
    assert _(check_words.NOT_EXERCISED["ended_before_cancel"]) in sentence and _(check_words.WITNESS_ADVICE["longer_streams"]) in sentence
    if lang != SOURCE_LANGUAGE:
        assert reads_in(lang, sentence, check_words.not_exercised_sentence(v.values["witness"], words(SOURCE_LANGUAGE)))
        found = untranslated(at)
        assert not found, found[:10]


@pytest.mark.parametrize("lang", [lang for lang in languages() if lang != SOURCE_LANGUAGE])
def test_the_client_fault_controls_and_the_faults_witness_read_in_the_learners_language(fault_run, leaky_generator, lang):
    _ = words(lang)
    at = showing(fault_run[1], lang=lang, model=leaky_generator)
    assert _("Client faults") in [e.label for e in at.expander] and reads_in(lang, _("Client faults"), "Client faults")
    assert at.checkbox(key="check.faults").label == _("Client faults") and at.checkbox(key="check.faults").help == _(page_words.FAULTS_HELP)
    assert at.text_input(key="check.state_metric").help == _(page_words.STATE_METRIC_HELP)
    v = fault_run[1].result.judgement.verdict("stream_cancelled", "all_instances")
    assert check_words.verdict_sentence(v, _) in list(at.dataframe[0].value.iloc[:, -1])
    assert _(check_words.DIAGNOSES["fault_leaks_state"]) in [x.value for x in at.warning]
    found = untranslated(at)
    assert not found, found[:10]


def test_with_the_client_faults_off_the_leak_goes_unseen(lab_server, leaky_generator):
    """The checkbox is --no-faults: unticked, the page's check has no fault to catch the leak with."""
    at = small(open_check(model=leaky_generator), steps=None)
    at = run(at.checkbox(key="check.faults").uncheck())
    at = run(at.button(key="check.run").click())
    result = at.session_state[RESULT_KEY].result
    assert not result.options.faults and result.options.state_metric is None
    assert all(v.check not in ("stream_cancelled", "stream_disconnected") for v in result.verdicts) and result.exit_code == 0
    assert check_words.CHECKS["stream_cancelled"] not in set(at.dataframe[0].value["check"])
    nothing_left(lab_server, [leaky_generator])
