"""Sticky routing: the judge on hand-made tables, one test per outcome; then two real Triton replicas
behind a real nginx: round robin breaks sessions, hashing keeps them."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from app.exercise_kit import ExerciseResult, Finding, Measured
from app.i18n import words
from app.lab.observation import START_REFUSAL
from app.lab.server import proxy
from app.recogniser.exercises.sticky_routing import engine as sticky_routing
from app.registry import exercise_words as text
from app.registry import families
from app.text import problems as problems_text
from tests.exercises.renderings import TRANSLATED, untranslated, untranslated_figures

REFUSAL = "inference request for sequence 9 to model 'asr_sequence_direct' must specify the START flag on the first request of the sequence"
# Per policy, per session: the replica of each chunk and what it got ("ok", "wrong", "refused"); None: not in nginx's log.
SCATTERED = {0: [("A", "ok"), ("B", "refused")], 1: [("B", "ok"), ("A", "refused")], 2: [("A", "ok"), ("A", "ok")]}
HASHED = {0: [("A", "ok"), ("A", "ok")], 1: [("B", "ok"), ("B", "ok")], 2: [("A", "ok"), ("A", "ok")]}
UPSTREAMS = {"A": "127.0.0.1:8001", "B": "127.0.0.1:8002"}


def _routes(policy: str, chunks: dict) -> list[dict]:
    rows = []
    for session, got in chunks.items():
        for k, (replica, answer) in enumerate(got):
            refused = answer == "refused"
            rows.append({"request_id": f"r:{session}:{k}", "session": session, "chunk": k, "error": REFUSAL if refused else "",
                         "upstream": UPSTREAMS.get(replica), "status": (400 if refused else 200) if replica else float("nan"),
                         "replica": replica or sticky_routing.NOT_LOGGED, "right": answer == "ok", "policy": policy})
    return rows


def _tables(rr=SCATTERED, rr_verdicts=("error", "error", "intact"), sticky=HASHED, sticky_verdicts=("intact",) * 3) -> dict:
    """Hand-made measurements: which replica served each chunk under each policy, and each session's verdict."""
    sessions = [{"session": i, "verdict": v, "policy": policy}
                for policy, verdicts in (("round_robin", rr_verdicts), ("sticky", sticky_verdicts)) for i, v in enumerate(verdicts)]
    return {"routes": pd.DataFrame(_routes("round_robin", rr) + _routes("sticky", sticky)), "sessions": pd.DataFrame(sessions)}


def test_judge_refused_when_the_other_replica_never_saw_the_start():
    judged = sticky_routing.judge(_tables())
    n = judged.numbers
    assert judged.outcome == "refused"
    assert (n["rr_sessions_broken"], n["rr_sessions_on_both_replicas"], n["rr_refused_chunks"]) == (2, 2, 2)
    assert n["rr_requests_per_replica"] == "A 4 / B 2" and n["sticky_requests_per_replica"] == "A 4 / B 2"
    assert (n["sticky_intact"], n["sticky_sessions_on_one_replica"], n["sessions"]) == (True, 3, 3)
    assert judged.findings == [
        Finding("rr_spread", {"both": 2, "sessions": 3, "broken": 2, "verdicts": {"error": 2, "intact": 1}}),
        Finding("rr_per_replica", {"per_replica": "A 4 / B 2"}),
        Finding("sticky_intact", {"one": 3, "sessions": 3, "verdicts": {"intact": 3}, "per_replica": "A 4 / B 2"}),
        Finding("refusal", {"who": 0, "chunk": 2, "replica": "B", "status": 400, "message": REFUSAL}),
    ]
    assert [f.code for f in judged.explanation] == ["one_process", "per_request", "refused", "hash_intact", "consistent"]
    assert judged.explanation[3].values == {"per_replica": "A 4 / B 2"}


def test_judge_intact_when_round_robin_happened_to_keep_every_session_whole():
    judged = sticky_routing.judge(_tables(rr=HASHED, rr_verdicts=("intact",) * 3))
    assert judged.outcome == "intact"
    assert judged.numbers["rr_sessions_on_both_replicas"] == 0 and judged.numbers["rr_refused_chunks"] == 0
    assert "refusal" not in [f.code for f in judged.findings]


def test_judge_garbled_when_sessions_broke_without_a_refusal():
    # A chunk nginx did not log, another answered wrong: broken, but no replica refused anything.
    rr = {0: [("A", "ok"), ("B", "wrong")], 1: [("B", "ok"), (None, "ok")], 2: [("A", "ok"), ("A", "ok")]}
    hashed_wrong = {0: [("A", "ok"), ("A", "wrong")], 1: [("B", "ok"), ("B", "ok")], 2: [("A", "ok"), ("A", "ok")]}
    judged = sticky_routing.judge(_tables(rr=rr, rr_verdicts=("lost", "intact", "intact"), sticky=hashed_wrong,
                                          sticky_verdicts=("lost", "intact", "intact")))
    n = judged.numbers
    assert judged.outcome == "garbled"
    assert (n["rr_sessions_broken"], n["rr_sessions_on_both_replicas"], n["rr_refused_chunks"]) == (1, 2, 0)
    assert n["rr_requests_per_replica"] == f"A 3 / B 2 / {sticky_routing.NOT_LOGGED} 1"
    assert not n["sticky_intact"]
    assert judged.findings[2] == Finding("sticky_verdicts", {"one": 3, "sessions": 3, "verdicts": {"lost": 1, "intact": 2},
                                                             "per_replica": "A 4 / B 2"})
    assert judged.explanation[3] == Finding("hash_verdicts", {"verdicts": {"lost": 1, "intact": 2}, "per_replica": "A 4 / B 2"})


@pytest.mark.parametrize("lang", TRANSLATED)
def test_judged_findings_and_figures_render_translated(lang):
    """Every template the judge can pick, on the hand-made tables, in every translated language."""
    refused = sticky_routing.judge(_tables())
    garbled = sticky_routing.judge(_tables(rr_verdicts=("lost",) * 3, sticky_verdicts=("lost",) * 3))
    found = [f for j in (refused, garbled) for f in j.findings + j.explanation]
    assert {f.code for f in found} == set(text.module("sticky_routing").FINDINGS)
    assert not untranslated("sticky_routing", found, lang)
    assert not untranslated_figures(ExerciseResult.of(sticky_routing.EXERCISE, Measured(tables=_tables()), refused), lang)


needs_nginx = pytest.mark.skipif(
    not (shutil.which("nginx") or any(os.access(p, os.X_OK) for p in proxy.SEARCH)),
    reason="nginx is not installed (apt-get install nginx-light)",
)


def _ours(exclude_group: int | None) -> list[str]:
    """nginx / tritonserver processes descended from this test process, outside the session server."""
    me, found = os.getpid(), []
    procs = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        procs[int(entry.name)] = (int(fields[1]), int(fields[2]), fields[0], cmd)  # ppid, pgid, state, cmd
    for pid, (ppid, pgid, state, cmd) in procs.items():
        if state == "Z" or pgid == exclude_group or not ("nginx" in cmd or "tritonserver" in cmd):
            continue
        parent = ppid
        while parent > 1 and parent != me and parent in procs:
            parent = procs[parent][0]
        if parent == me:
            found.append(f"{pid}: {cmd[:120]}")
    return found


@pytest.fixture(scope="module")
def session_group(lab_server):
    embedded = lab_server.embedded
    return os.getpgid(embedded.pid) if embedded is not None and embedded.running else None


@pytest.fixture(scope="module")
def before(session_group):
    return set(_ours(session_group))  # whatever earlier tests left is not this exercise's doing


@pytest.fixture(scope="module")
def result(exercise_result, before):
    """One real run. Why what these tests pin is certain:
    - `refused` under round robin: nginx runs one worker (proxy.render_config: worker_processes 1,
      max_fails=0, proxy_next_upstream off), so requests alternate A, B, A, ... whatever their timing.
      For no session to change replica, each session's 8 chunks would all take even or all odd places
      in that order: 12 even and 12 odd places cannot be filled by sessions of 8 chunks each, so some
      session's chunk reaches the replica that never saw its START and is refused there (HTTP 400).
    - hash on X-Session-ID (consistent): one session, one replica, so every session is intact (direct,
      slot-keyed, READY honoured); nginx writes each request to its access log as it completes."""
    return exercise_result("sticky_routing")


@needs_nginx
def test_round_robin_scatters_sessions_and_the_other_replica_refuses(result):
    n = result.numbers
    assert result.outcome == "refused"
    assert n["rr_sessions_on_both_replicas"] >= 1
    assert n["rr_sessions_broken"] >= 1
    routes = result.tables["routes"]
    refused = routes[(routes["policy"] == "round_robin") & (routes["error"] != "")]
    assert refused["error"].str.contains(START_REFUSAL).all()
    assert set(refused["status"]) == {400}
    assert set(routes["replica"]) == {"A", "B"}
    first = next(f for f in result.findings if f.code == "refusal")
    assert first.values["status"] == 400 and first.values["replica"] in {"A", "B"}
    assert START_REFUSAL in first.values["message"]
    spread = result.findings[0]
    assert spread.code == "rr_spread"
    assert spread.values["both"] == n["rr_sessions_on_both_replicas"] and spread.values["broken"] == n["rr_sessions_broken"]
    assert "error" in spread.values["verdicts"]
    rr = routes[routes["policy"] == "round_robin"]
    assert n["rr_requests_per_replica"] == " / ".join(f"{k} {v}" for k, v in rr.groupby("replica").size().items())


@needs_nginx
def test_hash_on_session_keeps_each_session_on_one_replica_and_intact(result):
    n = result.numbers
    assert n["sticky_intact"]
    assert n["sticky_sessions_on_one_replica"] == sticky_routing.SESSIONS
    routes = result.tables["routes"]
    assert not (routes["replica"] == sticky_routing.NOT_LOGGED).any(), "every request must appear in nginx's access log"
    sticky = next(f for f in result.findings if f.code.startswith("sticky_"))
    assert sticky.code == "sticky_intact" and sticky.values["one"] == sticky_routing.SESSIONS
    assert [f.code for f in result.explanation] == ["one_process", "per_request", "refused", "hash_intact", "consistent"]


@needs_nginx
def test_every_finding_renders_in_every_language(result):
    for lang in TRANSLATED:
        assert not untranslated("sticky_routing", result.findings + result.explanation, lang)
        assert not untranslated_figures(result, lang)
    assert set(result.numbers) == set(text.module("sticky_routing").NUMBERS)
    assert set(sticky_routing.EXERCISE.options) == set(text.module("sticky_routing").OPTIONS)


@needs_nginx
def test_no_nginx_or_replica_is_left_behind(result, session_group, before):
    assert set(_ours(session_group)) - before == set()


def test_missing_nginx_says_how_to_install_it(monkeypatch, lab_server, deployer):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(proxy, "SEARCH", ())
    with pytest.raises(proxy.ProxyError) as raised:
        families.run("sticky_routing", lab_server, deployer)
    assert raised.value.code == "nginx_missing"
    assert "apt-get install nginx-light" in problems_text.error(raised.value, words("en"))


def test_generated_config_is_private_and_foreground(tmp_path):
    sticky = proxy.render_config(tmp_path, 12345, ["127.0.0.1:1", "127.0.0.1:2"], "sticky")
    assert "daemon off;" in sticky and "listen 127.0.0.1:12345;" in sticky
    assert "hash $http_x_session_id consistent;" in sticky
    assert f"pid {tmp_path / 'nginx.pid'};" in sticky
    assert "$http_x_request_id" in sticky and "$upstream_addr" in sticky
    assert "hash " not in proxy.render_config(tmp_path, 1, ["127.0.0.1:1"], "round_robin")
    with pytest.raises(ValueError):
        proxy.render_config(tmp_path, 1, ["127.0.0.1:1"], "random")


def hand_made_tables() -> dict:
    """This exercise's judge tables made by hand, for its figures and their summaries
    (tests/recogniser/exercises/test_exercise_chart_summaries.py)."""
    return _tables()
