"""The headless CLI, run as a user would (a subprocess), against real servers."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import urllib.request

import pytest

from app.cli import print_exercise
from app.i18n import N_, languages, words
from app.lab.observation import LogCode
from app.lab.server import free_ports
from app.lab.traffic import run_queue
from app.registry import exercise_words as text
from app.registry import families
from app.text.errors import NEXT_STEPS
from tests.checker.conftest import ZOO
from tests.i18n.text_checks import reads_in
from tests.server_calls import ask
from tests.waiting import wait_for

pytestmark = pytest.mark.server  # the CLI runs in a process of its own, most on a real server

CLI = [sys.executable, "-m", "app.cli"]
SERVED = "zoo_stateless"  # what `serve` is given in a repository of its own
HEADLESS = "id_collision"  # the exercise the subprocess test runs: the quickest (about 2 s)


def run_cli(args, env_extra, timeout=300):
    env = {**os.environ, **env_extra}
    return subprocess.run(CLI + args, capture_output=True, text=True, env=env, timeout=timeout)


def test_run_writes_sessions_and_the_per_request_trace(server_env, tmp_path):
    out = tmp_path / "run.json"
    done = run_cli(["run", "--model", "asr_sequence_direct", "--sessions", "3", "--chunks", "6", "--json", str(out)], server_env)
    assert done.returncode == 0, done.stderr
    assert "verdicts: intact 3" in done.stdout
    data = json.loads(out.read_text())
    assert data["schema"] == 2 and data["model"] == "asr_sequence_direct"
    assert [s["verdict"] for s in data["sessions"]] == ["intact"] * 3
    assert len(data["requests"]) == 18
    first = data["requests"][0]
    assert {"instance", "slot", "batch", "state_in", "state_owner", "queue_ms", "latency_ms"} <= set(first)


def test_run_over_a_grpc_stream_pipelined(server_env, tmp_path):
    out = tmp_path / "run.json"
    args = ["run", "--model", "asr_sequence_direct", "--sessions", "2", "--chunks", "5", "--transport", "grpc_stream", "--in-flight", "3"]
    done = run_cli(args + ["--json", str(out)], server_env)
    assert done.returncode == 0, done.stderr
    assert "gRPC bidirectional stream, 3 chunks in flight" in done.stdout and "verdicts: intact 2" in done.stdout
    data = json.loads(out.read_text())
    assert data["transport"] == "grpc_stream" and data["in_flight"] == 3 and len(data["requests"]) == 10


def test_run_on_a_generator_deployment_streams_a_workload_and_writes_its_tables(server_env, lab_server, tmp_path):
    out = tmp_path / "gen.json"
    args = ["run", "--model", "gen_inflight", "--requests", "4", "--tokens", "2,5", "--gap-ms", "10", "--cancel", "1:1",
            "--lang", "en", "--json", str(out)]
    try:
        done = run_cli(args, server_env)  # the CLI loads gen_inflight on the suite's server ...
    finally:
        ask(lab_server, "unload_model", "gen_inflight")  # ... which does not keep it
    assert done.returncode == 0, done.stderr
    assert re.search(r"on gen_inflight: 4 requests, \d+ tokens in", done.stdout) and "request 1: cancelled after 1 tokens" in done.stdout
    data = json.loads(out.read_text())
    assert data["kind"] == "generation_run" and data["model"] == "gen_inflight" and data["max_batch_size"] == 4
    assert {"trace", "requests", "passes", "timeline", "figures", "plans", "server"} <= set(data)
    assert [r["status"] for r in data["requests"]] == ["complete", "cancelled", "complete", "complete"]
    assert all(r["correct"] for r in data["requests"]) and data["figures"]["tokens"] == sum(r["tokens"] for r in data["requests"])


def test_a_bad_workload_is_refused_in_the_chosen_language_before_a_server_starts():
    from app.generation.words import PROBLEMS

    for lang in languages():
        done = run_cli(["run", "--model", "gen_inflight", "--tokens", "9,3", "--lang", lang], {}, timeout=120)
        expected = words(lang).render(PROBLEMS["gen_tokens_range"], low=1, high=64, min=9, max=3)
        assert done.returncode == 2 and done.stderr.strip() == f"batching-lab: {expected}"


def test_run_with_own_text_and_a_bad_character_says_which(server_env):
    done = run_cli(["run", "--model", "asr_sequence_direct", "--text", "HELLO 2 YOU"], server_env)
    assert done.returncode == 2
    assert "character '2' at position 7 is not in the alphabet" in done.stderr
    assert "Traceback" not in done.stderr


def test_models_lists_schedulers(server_env):
    done = run_cli(["models"], server_env)
    assert done.returncode == 0, done.stderr
    assert re.search(r"asr_sequence_oldest\s+READY\s+sequence/oldest\s+2", done.stdout)
    assert re.search(r"asr_dynamic\s+READY\s+dynamic", done.stdout)


def _as_a_background_job() -> None:
    """What a shell gives a job started with '&': SIGINT ignored (and, here, blocked too)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


@pytest.mark.parametrize("start", [None, _as_a_background_job], ids=["plain", "background_job"])
def test_serve_serves_any_repository_given_to_it_and_ctrl_c_stops_it(tmp_path, start):
    # A repository of the user's own: one of the checker's test models (numpy, no torch to import).
    repo = tmp_path / "repo"
    shutil.copytree(ZOO / SERVED, repo / SERVED)
    proc = subprocess.Popen(CLI + ["serve", "--model-repository", str(repo)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=start)
    try:
        line = proc.stdout.readline()
        url = re.search(r"http://(127\.0\.0\.1:\d+)", line).group(1)
        with urllib.request.urlopen(f"http://{url}/v2/models/{SERVED}/ready", timeout=5) as reply:
            assert reply.status == 200
        index = json.loads(urllib.request.urlopen(urllib.request.Request(f"http://{url}/v2/repository/index", method="POST"), timeout=5).read())
        assert [m["name"] for m in index] == [SERVED]
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:  # a serve that ignores Ctrl-C must not outlive the test: its guardian
            proc.kill()                    # ends the server once serve is gone
            proc.wait(10)
            raise
    assert proc.returncode == 0
    # serve waited for its server; the SIGKILL to what was left of its group lands a moment later.
    wait_for(lambda: subprocess.run(["pgrep", "-f", str(repo)], capture_output=True).returncode == 1,
             "serve's server and its stubs to be gone", timeout_s=10)


def test_default_language_follows_the_environment():
    from app.cli import default_language

    assert default_language({"LANG": "zh_CN.UTF-8"}) == "zh"
    assert default_language({"LC_ALL": "en_US.UTF-8", "LANG": "zh_CN.UTF-8"}) == "en"  # LC_ALL wins
    assert default_language({"LANG": "fr_FR.UTF-8"}) == "en"  # a language the lab lacks
    assert default_language({}) == "en"


def test_exercise_lists_names_and_titles_in_the_chosen_language():
    for lang in languages():
        done = run_cli(["exercise", "--lang", lang], {}, timeout=120)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert [line.split()[0] for line in lines] == families.names()
        for name, line in zip(families.names(), lines, strict=True):
            assert line.endswith(text.title(name, words(lang)))


def test_bad_input_is_refused_in_the_chosen_language_before_a_server_starts():
    from app.lab.problems import Problem
    from app.text.problems import problem

    refused = Problem("in_flight_range", {"low": 1, "high": 16, "value": 0})
    assert problem(refused, words("en")) == "chunks in flight per session must be 1 to 16: got 0"
    for lang in languages():
        done = run_cli(["run", "--model", "asr_sequence_direct", "--in-flight", "0", "--lang", lang], {}, timeout=120)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert done.stderr.strip() == f"batching-lab: {problem(refused, words(lang))}"
    unknown = run_cli(["exercise", "no_such_exercise", "--lang", "en"], {}, timeout=120)
    assert unknown.returncode == 2 and "no exercise 'no_such_exercise'" in unknown.stderr


@pytest.mark.parametrize("name", ["id_collision", "leaked_state"])
def test_an_exercise_result_is_printed_in_every_language_and_written_as_json(name, exercise_result, capsys, tmp_path):
    """What `batching-lab exercise NAME` prints, through the function it prints with, on the
    session's one real run of the exercise (the subprocess test below checks the command itself)."""
    result = exercise_result(name)
    english_title = f"{text.title(name, words('en'))} ({name})"
    for lang in languages():
        _ = words(lang)
        out = tmp_path / f"{name}-{lang}.json"
        print_exercise(result, _, out)
        printed = capsys.readouterr().out.splitlines()
        assert printed[0] == f"{text.title(name, _)} ({name})" and reads_in(lang, printed[0], english_title)
        observed = [line for line in printed if line.startswith(f"  [{result.outcome}] ")]
        assert len(observed) == 1 and _("observed") in observed[0].split("<- ")[-1]
        log_at = printed.index(_("server log:"))
        assert printed[log_at + 1].startswith(_.render(N_("{n:count} line(s) of evidence"), n=len(result.log.evidence())))
        for code in {e.code for e in result.log.evidence()}:  # each kind of evidence, its first line verbatim
            first = next(e for e in result.log.evidence() if e.code is code)
            assert f"  {first.raw.splitlines()[0]}" in printed[log_at:], code
        assert printed[-1] == _.render(N_("wrote {path:text}"), path=out)
        data = json.loads(out.read_text())
        assert data == json.loads(json.dumps(result.to_json(), default=str))
        assert data["exercise"] == name and data["outcome"] == result.outcome
    if name == "leaked_state":
        assert any(e.code is LogCode.REAPER_FORCE_END for e in result.log.evidence()), "the reaper's lines are the evidence"


def test_an_exercise_runs_headless_and_exits_0(server_env, tmp_path):
    """The command itself, once: it starts, runs the exercise on the server, prints and writes the
    JSON, and exits 0 (unknown names exit 2: test_bad_input_is_refused...)."""
    out = tmp_path / "result.json"
    done = run_cli(["exercise", HEADLESS, "--json", str(out), "--lang", "en"], server_env, timeout=600)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"{text.title(HEADLESS, words('en'))} ({HEADLESS})" and "server log:" in lines
    data = json.loads(out.read_text())
    assert data["exercise"] == HEADLESS and data["outcome"] in families.get(HEADLESS).options
    assert lines[-1] == f"wrote {out}"


def test_two_cli_runs_on_one_database_take_turns_and_each_counts_only_its_own_requests(server_env, lab_server, tmp_path,
                                                                                        postgres_url, monkeypatch):
    # Two processes, as two replicas or two terminals, on one Triton and one class database. The
    # test holds the deployment first, so both runs are sure to arrive while it is taken.
    monkeypatch.setenv("TRITON_LAB_DATABASE_URL", postgres_url)
    env = {**server_env, "TRITON_LAB_DATABASE_URL": postgres_url}
    queue = run_queue.for_server(lab_server.url)
    assert isinstance(queue, run_queue.SharedRunQueue)
    outs = [tmp_path / f"run-{n}.json" for n in range(2)]
    args = ["run", "--model", "asr_sequence_direct", "--sessions", "8", "--chunks", "30", "--seed"]
    with queue.lease("asr_sequence_direct"):
        runs = [subprocess.Popen(CLI + args + [str(n + 1), "--json", str(out)], env={**os.environ, **env},
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for n, out in enumerate(outs)]
        wait_for(lambda: queue.waiting() == 2, "both runs to wait for the deployment", timeout_s=120)
    done = [(run.wait(300), run.communicate()) for run in runs]
    assert [code for code, _ in done] == [0, 0], [err for _, (_, err) in done]
    data = [json.loads(out.read_text()) for out in outs]
    for run in data:
        assert len(run["requests"]) == 240 and [s["verdict"] for s in run["sessions"]] == ["intact"] * 8
        # Overlapping runs each counted both (480 and 461 for 240 requests, before the shared lease).
        assert run["server"]["inference_count"] == 240, "the server's statistics count this run's requests only"


def test_a_class_database_that_cannot_be_reached_is_said_in_the_chosen_language_and_nothing_runs(server_env):
    away = {**server_env, "TRITON_LAB_DATABASE_URL": f"postgresql+psycopg://lab:secret@127.0.0.1:{free_ports(1)[0]}/lab"}
    said = {}
    for lang in languages():
        done = run_cli(["run", "--model", "asr_sequence_direct", "--sessions", "1", "--chunks", "2", "--lang", lang], away)
        assert done.returncode == 2 and done.stdout == "", done.stderr
        # The password, not the word: the next step names .streamlit/secrets.toml.
        assert "Traceback" not in done.stderr and ":secret@" not in done.stderr and "127.0.0.1" in done.stderr
        said[lang] = done.stderr
    assert "class database" in said["en"] and "cannot be reached" in said["en"]
    for lang, shown in said.items():
        assert reads_in(lang, shown, said["en"])
        # What to do next, on a line of its own (app/text/errors.NEXT_STEPS): the address to check.
        message, step = shown.splitlines()
        assert message.startswith("batching-lab: ") and step == f"batching-lab: {words(lang)(NEXT_STEPS['database_unreachable'])}"
