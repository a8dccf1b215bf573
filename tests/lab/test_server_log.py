"""The server's log as evidence: the parser on lines the embedded Triton 2.51 really wrote
(tests/lab/fixtures/triton_2_51.log, captured from it), and the window on the live server."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tritonclient.http as http
from tritonclient.utils import InferenceServerException

from app.lab.observation import server_log
from app.lab.observation.server_log import MIN_VERBOSITY, Level, LogCode, LogWindow, Unavailable, parse, parse_line, raised_verbosity, select
from app.lab.paths import REPO_ROOT
from app.lab.scenario.ids import unique_ids
from app.lab.server import LabServer
from app.recogniser.engine.audio import chunk
from tests.server_calls import ask
from tests.waiting import wait_for

CAPTURED = Path(__file__).parent / "fixtures" / "triton_2_51.log"
# Lines the embedded server wrote under load (a full test run), one entry written inside another.
INTERLEAVED = Path(__file__).parent / "fixtures" / "triton_2_51_interleaved.log"
MODEL = "asr_sequence_direct"


@pytest.fixture(scope="module")
def entries():
    return parse(CAPTURED.read_text().splitlines())


def by_code(entries, code):
    found = [e for e in entries if e.code is code]
    assert len(found) == 1, f"{code}: {len(found)} entries"
    return found[0]


def test_prefix_is_split_into_level_time_source_and_message():
    line = (
        'W1130 18:04:21.428952 7497 sequence_batch_scheduler.cc:763] "sequence 777 for model '
        "'asr_sequence_direct' has a conflict. The previous sequence did not end before this "
        'sequence start. Previous sequence will be terminated early."'
    )
    entry = parse_line(line)
    assert (entry.level, entry.date, entry.time, entry.source) == (
        Level.WARNING, "1130", "18:04:21.428952", "sequence_batch_scheduler.cc:763",
    )
    assert entry.message.startswith("sequence 777 for model 'asr_sequence_direct' has a conflict.")
    assert entry.raw == line
    assert (entry.code, entry.values) == (LogCode.SEQUENCE_CONFLICT, {"corrid": "777", "model": MODEL})


def test_a_line_without_triton_prefix_is_not_an_entry():
    assert parse_line("+---------+------+--------+") is None
    assert parse_line("") is None


def test_every_captured_line_is_an_entry_or_continues_one(entries):
    lines = [line for line in CAPTURED.read_text().splitlines() if line.strip()]
    assert "\n".join(e.raw for e in entries) == "\n".join(lines)  # nothing dropped but blank lines, nothing added
    assert len(entries) == sum(1 for line in lines if parse_line(line) is not None) == 17


def test_an_entry_written_inside_another_is_read_as_two():
    lines = INTERLEAVED.read_text().splitlines()
    inside = lines[1]
    assert inside.count("] \"") == 2 and lines[2] == ""  # as written: two prefixes on a line, then its newline alone
    entries = parse(lines)
    assert [e.source for e in entries] == [
        "infer_request.cc:132", "http_server.cc:4599", "sequence_batch_scheduler.cc:816", "infer_request.cc:132",
        "http_server.cc:1354", "http_server.cc:1354", "infer_response.cc:174", "http_server.cc:4599",
    ]
    backlog = entries[2]
    assert (backlog.code, backlog.values) == (LogCode.BACKLOG_ENQUEUED, {"corrid": "5381763247894431012", "model": "zoo_no_reset"})
    assert entries[1].message == "HTTP request: 2 /v2/models/zoo_no_reset/infer"
    assert "".join(e.raw for e in entries[1:3]) == inside  # each part quoted as written, nothing lost
    assert parse_line(inside).source == "http_server.cc:4599"  # one line read alone: its first entry


def test_a_prefix_inside_an_escaped_message_is_part_of_it():
    line = 'I1202 04:54:28.807806 10751 http_server.cc:4599] "quoted: I1202 04:54:28.807893 10751 x.cc:1] y"'
    assert [e.message for e in parse([line])] == ["quoted: I1202 04:54:28.807893 10751 x.cc:1] y"]
    unescaped = "I1202 04:54:28.807806 10751 model_config_utils.cc:716] Server side I1202 04:54:28.807893 10751 x.cc:1] y"
    assert len(parse([unescaped])) == 1  # no closing quote to end it: kept whole


def test_tables_and_unescaped_configs_stay_with_their_heading(entries):
    table = entries[0]
    assert table.source == "server.cc:631" and "| Backend | Path | Config |" in table.raw
    config = next(e for e in entries if e.source == "model_config_utils.cc:716")
    assert 'name: "h3_bad_probe"' in config.message and 'backend: "nosuchbackend"' in config.message


def test_escaped_messages_are_decoded(entries):
    override = next(e for e in entries if e.source == "infer_request.cc:803")
    assert "\\n" in override.raw and "\n" in override.message and "\\n" not in override.message
    assert override.code is None


@pytest.mark.parametrize(
    ("code", "values", "model"),
    [
        (LogCode.MODEL_LOADING, {"model": MODEL, "version": "1"}, MODEL),
        (LogCode.MODEL_LOADED, {"model": MODEL}, MODEL),
        (LogCode.MODEL_UNLOADED, {"model": MODEL, "version": "1"}, MODEL),
        (LogCode.SEQUENCE_CONFLICT, {"corrid": "777", "model": MODEL}, MODEL),
        (LogCode.SEQUENCE_ENQUEUED, {"corrid": "1001", "batcher": "asr_sequence_direct_0_0", "slot": "0", "model": MODEL}, MODEL),
        (LogCode.BACKLOG_ENQUEUED, {"corrid": "5008", "model": MODEL}, MODEL),
        (LogCode.REAPER_IDLE, {"corrid": "1001"}, None),  # Triton names no model here
        (LogCode.REAPER_FORCE_END, {"corrid": "1001", "batcher": "asr_sequence_direct_0_0", "slot": "0"}, MODEL),
        (LogCode.SLOT_FREED, {"batcher": "asr_sequence_direct_0_0", "slot": "0"}, MODEL),
        (LogCode.START_FLAG_MISSING, {"corrid": "1001", "model": MODEL}, MODEL),
        (LogCode.SEQUENCE_END, {"corrid": "1002", "batcher": "asr_sequence_direct_0_1", "slot": "0"}, MODEL),
    ],
)
def test_lines_that_matter_get_a_code_and_values(entries, code, values, model):
    entry = by_code(entries, code)
    assert entry.values == values
    assert entry.model == model


def test_a_failed_load_is_two_lines_error_then_info(entries):
    failed = [e for e in entries if e.code is LogCode.MODEL_LOAD_FAILED]
    assert [(e.level, e.values.get("version")) for e in failed] == [(Level.ERROR, "1"), (Level.INFO, None)]
    assert failed[0].values["error"].startswith("Invalid argument: unable to find backend library")
    assert {e.model for e in failed} == {"h3_bad_probe"}


def test_unclassified_lines_have_no_code(entries):
    pinned = next(e for e in entries if e.source == "pinned_memory_manager.cc:170")
    assert pinned.level is Level.WARNING and pinned.code is None and pinned.values == {}


def test_select_filters_by_model_corrid_and_code(entries):
    assert [e.code for e in select(entries, corrids=[1001])] == [
        LogCode.SEQUENCE_ENQUEUED, LogCode.REAPER_IDLE, LogCode.REAPER_FORCE_END, LogCode.START_FLAG_MISSING,
    ]
    assert [e.code for e in select(entries, model=MODEL, corrids=["1001"])] == [
        LogCode.SEQUENCE_ENQUEUED, LogCode.REAPER_FORCE_END, LogCode.START_FLAG_MISSING,
    ]
    assert [e.source for e in select(entries, model="h3_bad_probe", codes=[LogCode.MODEL_LOAD_FAILED])] == [
        "model_lifecycle.cc:642", "model_lifecycle.cc:777",
    ]
    assert select(entries, model="h3_bad_probe", codes=[LogCode.MODEL_LOADING]) == []
    assert select(entries, model="asr_sequence_direct_0") == []  # an instance name is not a model
    assert select(entries, corrids=[]) == []


def test_every_code_states_the_verbosity_triton_writes_it_at():
    assert set(MIN_VERBOSITY) == set(LogCode)


def test_window_tolerates_a_missing_file_and_reads_only_complete_lines(tmp_path):
    path = tmp_path / "later.log"
    window = LogWindow(path)
    assert window.available and window.lines() == []
    path.write_text('I1130 18:04:17.246808 7497 model_lifecycle.cc:472] "loading: m:1"\npartial')
    assert window.lines() == ['I1130 18:04:17.246808 7497 model_lifecycle.cc:472] "loading: m:1"']
    later = LogWindow(path)
    with path.open("a") as handle:
        handle.write(' line\n')
    assert later.lines() == ["partial line"]


def test_external_server_has_no_log_and_its_verbosity_is_left_alone():
    external = LabServer(url="127.0.0.1:9")  # never started: nothing may be contacted
    window = LogWindow.start(external)
    assert (window.available, window.unavailable, window.lines(), window.entries()) == (
        False, Unavailable.EXTERNAL_SERVER, [], [],
    )
    assert external.log_path is None
    with raised_verbosity(external) as raised:
        assert raised is False


def test_an_embedded_server_not_started_is_reported_as_such():
    window = LogWindow.start(LabServer())
    assert (window.available, window.unavailable) == (False, Unavailable.NOT_STARTED)


# --- on the live server ---------------------------------------------------------------


def _inputs(tag: int) -> list[http.InferInput]:
    audio = http.InferInput("AUDIO", [1, 160], "FP32")
    audio.set_data_from_numpy(chunk(1, np.random.default_rng(tag % 1000))[None].astype(np.float32))
    session = http.InferInput("SESSION", [1, 1], "UINT64")
    session.set_data_from_numpy(np.array([[tag]], dtype=np.uint64))
    return [audio, session]


def test_window_quotes_this_runs_conflict_warning_at_default_verbosity(lab_server):
    with lab_server.client() as client:
        assert client.get_log_settings()["log_verbose_level"] == 0
        before = LogWindow.start(lab_server)
        (corrid,) = unique_ids(1)
        client.infer(MODEL, _inputs(corrid), sequence_id=corrid, sequence_start=True)
        window = LogWindow.start(lab_server)
        client.infer(MODEL, _inputs(corrid), sequence_id=corrid, sequence_start=True)
        client.infer(MODEL, _inputs(corrid), sequence_id=corrid, sequence_end=True)

        mine = window.select(model=MODEL, corrids=[corrid])
        assert [(e.level, e.code) for e in mine] == [(Level.WARNING, LogCode.SEQUENCE_CONFLICT)]
        assert mine[0].raw in lab_server.log_path.read_text()
        # the earlier window also saw it, a window on another ID does not
        assert len(before.select(corrids=[corrid])) == 1
        assert window.select(corrids=[corrid + 1]) == []


def test_start_flag_refusal_is_logged_only_at_verbosity_one(lab_server):
    with lab_server.client() as client:
        quiet_id, loud_id = unique_ids(2)
        quiet = LogWindow.start(lab_server)
        with pytest.raises(InferenceServerException, match="must specify the START flag"):
            client.infer(MODEL, _inputs(quiet_id), sequence_id=quiet_id)
        assert quiet.select(corrids=[quiet_id]) == []

        with raised_verbosity(lab_server, 1) as raised:
            assert raised and client.get_log_settings()["log_verbose_level"] == 1
            loud = LogWindow.start(lab_server)
            with pytest.raises(InferenceServerException, match="must specify the START flag"):
                client.infer(MODEL, _inputs(loud_id), sequence_id=loud_id)
        assert client.get_log_settings()["log_verbose_level"] == 0
        refused = loud.select(model=MODEL, corrids=[loud_id])
        assert [(e.code, e.source.split(":")[0]) for e in refused] == [(LogCode.START_FLAG_MISSING, "http_server.cc")]


def test_overlapping_raises_share_one_level_and_the_last_restores_it(lab_server):
    with lab_server.client() as client:
        level = lambda: client.get_log_settings()["log_verbose_level"]  # noqa: E731
        assert level() == 0
        with raised_verbosity(lab_server, 1):
            with raised_verbosity(lab_server, 2):
                assert level() == 2
            assert level() == 2  # never lowered under a holder that is still running
        assert level() == 0


RAISER = """
import sys, threading
from app.lab.observation import server_log
from app.lab.server.connection import LabServer
with server_log.raised_verbosity(LabServer.from_env(), 1):
    print("raised", flush=True)
    threading.Event().wait()
"""


def test_replicas_sharing_the_server_keep_its_log_level_until_the_last_raise_ends_and_a_dead_ones_expires(
        lab_server, postgres_url, monkeypatch):
    # Replicas see the session's server as an external one with its log file, on one class database.
    env = {**lab_server.environment(), "TRITON_LAB_DATABASE_URL": postgres_url, "TRITON_LAB_LEASE_TTL_S": "2"}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    one, two = LabServer.from_env(), LabServer.from_env()

    def level() -> int:
        return int(ask(lab_server, "get_log_settings")["log_verbose_level"])

    assert level() == 0
    with server_log.raised_verbosity(one, 1) as raised:
        assert raised
        with server_log.raised_verbosity(two, 1):
            assert level() == 1
        assert level() == 1, "another replica's run still needs the log"
    assert level() == 0, "the last raise restored the server's own level"

    dying = subprocess.Popen([sys.executable, "-c", RAISER], cwd=REPO_ROOT, env={**os.environ, **env},
                             stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert dying.stdout.readline().strip() == "raised" and level() == 1
        os.killpg(dying.pid, signal.SIGKILL)  # it restores nothing
        dying.wait(10)
        assert level() == 1

        def after_a_run_elsewhere() -> bool:
            with server_log.raised_verbosity(two, 1):
                pass
            return level() == 0

        wait_for(after_a_run_elsewhere, "the dead replica's raise to expire and a later run to restore the level", timeout_s=30)
    finally:
        if dying.poll() is None:
            os.killpg(dying.pid, signal.SIGKILL)
            dying.wait(10)
