"""Two real Triton replicas behind a real nginx: round robin breaks sessions, hashing keeps them."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from app.charts import exercises as charts
from app.i18n import words
from app.lab import exercises
from app.lab.exercises import sticky_routing
from app.lab.server import proxy
from app.text import exercises as text

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
    return exercise_result("sticky_routing")


@needs_nginx
def test_round_robin_scatters_sessions_and_the_other_replica_refuses(result):
    n = result.numbers
    assert result.outcome == "refused"
    assert n["rr_sessions_on_both_replicas"] >= 1
    assert n["rr_sessions_broken"] >= 1
    routes = result.tables["routes"]
    refused = routes[(routes["policy"] == "round_robin") & (routes["error"] != "")]
    assert refused["error"].str.contains(sticky_routing.START_REFUSAL).all()
    assert set(refused["status"]) == {400}
    assert set(routes["replica"]) == {"A", "B"}
    first = next(f for f in result.findings if f.code == "refusal")
    assert first.values["status"] == 400 and first.values["replica"] in {"A", "B"}
    assert sticky_routing.START_REFUSAL in first.values["message"]
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
def test_every_finding_renders_in_both_languages(result):
    rendered = [text.finding("sticky_routing", f, words(lang)) for f in result.findings + result.explanation for lang in ("en", "zh")]
    assert all(rendered)
    assert set(result.numbers) == set(text.module("sticky_routing").NUMBERS)
    assert set(sticky_routing.EXERCISE.options) == set(text.module("sticky_routing").OPTIONS)
    for lang in ("en", "zh"):
        assert all(fig.layout.title.text for _, fig in charts.figures(result, words(lang)))


@needs_nginx
def test_no_nginx_or_replica_is_left_behind(result, session_group, before):
    assert set(_ours(session_group)) - before == set()


def test_missing_nginx_says_how_to_install_it(monkeypatch, lab_server, deployer):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(proxy, "SEARCH", ())
    with pytest.raises(proxy.ProxyError, match="apt-get install nginx-light"):
        exercises.run("sticky_routing", lab_server, deployer)


def test_generated_config_is_private_and_foreground(tmp_path):
    sticky = proxy.render_config(tmp_path, 12345, ["127.0.0.1:1", "127.0.0.1:2"], "sticky")
    assert "daemon off;" in sticky and "listen 127.0.0.1:12345;" in sticky
    assert "hash $http_x_session_id consistent;" in sticky
    assert f"pid {tmp_path / 'nginx.pid'};" in sticky
    assert "$http_x_request_id" in sticky and "$upstream_addr" in sticky
    assert "hash " not in proxy.render_config(tmp_path, 1, ["127.0.0.1:1"], "round_robin")
    with pytest.raises(ValueError):
        proxy.render_config(tmp_path, 1, ["127.0.0.1:1"], "random")
