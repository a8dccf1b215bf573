"""The server log lines that belong to a run, and the recogniser's own state-cell metric,
read from the session's real Triton (plus hand-made lines for what a run cannot show)."""
from __future__ import annotations

import pytest
import tritonclient.http as http

from app.i18n import languages, words
from app.lab.deployment import LabSettings
from app.lab.observation import LogCode, Unavailable, run_log, server_log, state_cells
from app.lab.scenario.ids import unique_ids
from app.lab.scenario.scenario import Scenario, random_texts
from app.lab.server import LabServer
from app.recogniser.engine import driver
from app.text import log_readings
from tests.i18n.text_checks import reads_in

CONFLICT = ('W1130 18:14:54.703582 5187 sequence_batch_scheduler.cc:763] "sequence {id} for model \'{model}\' '
            'has a conflict. The previous sequence did not end before this sequence start. Previous sequence will '
            'be terminated early."')
REAPED = 'I1130 18:11:35.090842 27213 sequence_batch_scheduler.cc:1079] "Reaper: CORRID {id}: max sequence idle exceeded"'
FREED = 'I1130 18:11:35.090900 27213 sequence_batch_scheduler.cc:1100] "Freeing slot in batcher {model}_0_0, slot 1"'


def test_a_collision_run_quotes_its_own_conflict_warning_and_the_next_run_does_not(lab_server):
    shared = unique_ids(1)[0]
    texts = ["HELLO WORLD", "GOODBYE MOON"]
    collide = driver.run(lab_server, Scenario(model="asr_sequence_oldest", texts=texts, think_ms=30.0,
                                              stagger_ms=15.0, corrids=[shared, shared], seed=2))
    assert collide.log.available
    conflicts = [e for e in collide.log.evidence() if e.code == LogCode.SEQUENCE_CONFLICT]
    assert [e.corrid for e in conflicts] == [str(shared)]
    assert conflicts[0].raw.startswith("W") and "has a conflict" in conflicts[0].raw
    assert conflicts[0].model == "asr_sequence_oldest"

    clean = driver.run(lab_server, Scenario(model="asr_sequence_oldest", texts=texts, think_ms=30.0, seed=2))
    assert clean.log.available and clean.log.count(LogCode.SEQUENCE_CONFLICT) == 0


def test_only_lines_of_the_runs_models_and_ids_belong():
    entries = server_log.parse([
        CONFLICT.format(id=11, model="mine"),
        CONFLICT.format(id=12, model="mine"),  # same model, someone else's ID
        CONFLICT.format(id=11, model="theirs"),  # our ID on another model
        REAPED.format(id=11),  # names only the ID
        REAPED.format(id=13),
        FREED.format(model="mine"),  # names only the batcher
        FREED.format(model="theirs"),
    ])
    kept = [e for e in entries if run_log.belongs(e, {"mine"}, {"11"})]
    assert [(e.code, e.corrid, e.model) for e in kept] == [
        (LogCode.SEQUENCE_CONFLICT, "11", "mine"), (LogCode.REAPER_IDLE, "11", None), (LogCode.SLOT_FREED, None, "mine"),
    ]
    log = run_log.RunLog(None, kept)
    assert [e.code for e in log.evidence()] == [LogCode.SEQUENCE_CONFLICT, LogCode.REAPER_IDLE]  # freeing is routine
    assert log.to_json()["counts"] == {"sequence_conflict": 1, "reaper_idle": 1, "slot_freed": 1}
    text = "\n".join(log_readings.summary_lines(log))
    assert CONFLICT.format(id=11, model="mine") in text  # quoted verbatim
    assert "1 × a slot was freed" in text
    english = log_readings.summary_lines(log)
    for lang in languages():  # and in every language: the same lines, the quoted one verbatim
        shown = log_readings.summary_lines(log, words(lang))
        assert len(shown) == len(english) and f"  {CONFLICT.format(id=11, model='mine')}" in shown
        assert reads_in(lang, "\n".join(shown), "\n".join(english))


def test_an_external_servers_log_is_not_available():
    external = LabServer(url="127.0.0.1:9")  # never contacted: the window only asks whether it is embedded
    window = server_log.LogWindow.start(external)
    log = run_log.capture(window, ["asr_sequence_direct"], [1])
    assert not log.available and log.unavailable == Unavailable.EXTERNAL_SERVER and log.entries == []
    assert log.to_json()["available"] is False
    assert log_readings.summary_lines(log) == [log_readings.UNAVAILABLE[Unavailable.EXTERNAL_SERVER]]
    assert log_readings.summary_lines(log, words("zh")) == [words("zh")(log_readings.UNAVAILABLE[Unavailable.EXTERNAL_SERVER])]


@pytest.mark.parametrize("code", list(LogCode))
def test_every_log_code_has_a_reading_that_uses_only_values_the_line_carries(code):
    assert code in log_readings.READINGS
    entry = server_log.LogEntry(server_log.Level.INFO, "1130", "00:00:00.000000", "x.cc:1", "m", "raw", code, {})
    english = log_readings.reading(entry)  # missing values read as '?', never a KeyError
    assert english
    for lang in languages():
        assert reads_in(lang, log_readings.reading(entry, words(lang)), english), lang


def test_the_models_gauge_counts_cells_of_sessions_that_vanished(lab_server, deployer):
    """Ending with END gives a cell back; vanishing without END leaves it (idle_evict_s is 60 s)."""
    model = deployer.apply(LabSettings(scheduler="oldest", instances=1, slots=4, state_key="corrid")).model
    before = state_cells.read(lab_server.metrics_url, model)
    assert list(before["instance"]) == [0], "one instance, one row: the metric is labelled per instance"
    result = driver.run(lab_server, Scenario(model=model, texts=random_texts(4, 6, seed=3), think_ms=20.0,
                                             abandon={0: 2, 1: 2, 2: 3}, seed=3))
    assert (result.requests["error"] == "").all()
    after = state_cells.read(lab_server.metrics_url, model)
    assert int(after["cells"].sum()) - int(before["cells"].sum()) == 3
    frame = result.state_cells
    assert not frame.empty and set(frame["instance"]) == {0}
    assert int(frame["cells"].iloc[-1]) == int(after["cells"].iloc[0])  # the sampler's last reading is the state left


def test_a_server_whose_verbosity_cannot_be_raised_still_runs(tmp_path):
    """raised_verbosity yields False (the run goes on at the server's verbosity) instead of failing."""

    class Unreachable:
        url = "127.0.0.1:9"  # nothing listens: the logging extension cannot be reached
        log_path = tmp_path / "server.log"

        def client(self, timeout_s: float = 10.0):
            return http.InferenceServerClient(self.url, connection_timeout=1.0, network_timeout=1.0)

    with server_log.raised_verbosity(Unreachable(), 1) as raised:
        assert raised is False
    assert Unreachable.url not in server_log._raised
