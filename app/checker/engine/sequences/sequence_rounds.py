"""The sequence batcher's rounds of a check (measure.py runs them on a Measurement): the lone
reference runs, the interleaved run (its start ordered by backlog_gate.py), the ID-reuse waves
and the abandon round with its holders, victims and followers. Each sends through the
Measurement, which records every request; nothing here judges.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from app.checker.engine.aliases import Row
from app.checker.engine.sequences.backlog_gate import BacklogGate
from app.lab.problems import LabError
from app.lab.scenario.transport import Transport
from app.lab.traffic import TIMEOUT_S, open_link

if TYPE_CHECKING:
    from app.checker.engine.sequences.measurement import Measurement, Sequence

GIVE_UP_AFTER_S = 0.0002  # the cancelled request's client timeout: shorter than any reply takes (a reply in 1 ms was seen)
RELEASE_AFTER_IDLE = 2.0  # holders give up holding this many idle timeouts (plus a second) after the victims stopped
HOLD_UNTIL = 1.8  # idle timeouts after the victims stopped that holders spread their steps over
HOLD_GAP = 0.4  # the longest pause between a holder's steps, in idle timeouts


def reference(m: Measurement, model: str) -> None:
    for pass_ in ("a", "b"):
        def body(pass_: str = pass_) -> None:
            for session, corrid in zip(range(len(m.lengths)), m.ids(len(m.lengths)), strict=True):
                c = m.sequence("alone", session, corrid)
                for k in range(c.sends):
                    row = m.send(model, "reference", "alone", "alone", c.number, session, k, corrid, k == 0, k == c.length - 1, pass_=pass_)
                    if row["error"]:
                        break
        m.run_phase("reference", "alone", model, body)
        if pass_ == "a" and not m.references:
            frame = m.recorder.frame()
            raise LabError("check_model_fails", model=m.facts.name, error=str(frame["error"].iloc[0]) if len(frame) else "-")


def interleaved(m: Measurement, model: str, variant: str, capacity: int) -> None:
    n = len(m.lengths)
    workers = min(n, capacity + max(1, math.ceil(capacity / 2)))
    ids = m.ids(n)

    sequences = [m.sequence("interleaved", s, i) for s, i in zip(range(n), ids, strict=True)]
    # the first `workers` start together: their start is ordered so that some wait in the backlog
    gate = BacklogGate.plan(sequences[:workers], capacity, m.facts.idle_timeout_us / 1e6, m.server.metrics_url, model)

    def task(c: Sequence) -> Callable[[], object]:
        gaps = m.gaps("interleaved", c.session, c.number)
        if gate is None:
            return lambda: m.play(model, "interleaved", variant, c, gaps)

        def gated() -> object:
            gate.before_first(c.number)
            return m.play(model, "interleaved", variant, c, gate.pause(c.number, gaps), gate.on_reply(c.number))
        return gated

    tasks = [task(c) for c in sequences]

    def body() -> None:
        watcher = threading.Thread(target=gate.watch, name="check-backlog-gate", daemon=True) if gate else None
        if watcher:
            watcher.start()
        try:
            m.pool(tasks, workers)
        finally:
            if gate and watcher:
                gate.full.set()  # a holder that failed before its reply must not keep the watcher waiting
                watcher.join()
                m.pending_peaks[variant] = gate.pending_peak

    m.run_phase("interleaved", variant, model, body, capacity, workers, log=True)


def id_reuse(m: Measurement, model: str, variant: str, capacity: int, instances: int) -> None:
    n = len(m.lengths)
    wave = min(capacity, max(1, n))
    ids = m.ids(wave)

    def wave_tasks(role: str, offset: int) -> list[Callable[[], object]]:
        tasks: list[Callable[[], object]] = []
        for j, corrid in enumerate(ids):
            c = m.sequence(role, (j + offset) % n, corrid)

            def play(c: Sequence = c) -> None:
                m.play(model, "id_reuse", variant, c, m.gaps("id_reuse", c.session, c.number))
            tasks.append(play)
        return tasks

    def body() -> None:
        m.pool(wave_tasks("first_use", 0), wave)  # every slot taken, then every sequence ends
        m.pool(wave_tasks("reuse", wave), wave)  # each ID again, on whichever freed slot it gets
        for j in range(instances + 1):  # one ID alone, again and again: lone sequences take the lowest free slot
            c = m.sequence("chain", (j + 2 * wave) % n, ids[0])
            m.play(model, "id_reuse", variant, c, lambda k: 0.0)

    m.run_phase("id_reuse", variant, model, body, capacity, wave, log=True)


def abandon_round(m: Measurement, model: str, variant: str, capacity: int) -> None:
    idle_s = m.facts.idle_timeout_us / 1e6
    order = sorted(range(len(m.lengths)), key=lambda s: (-m.lengths[s], s))
    victims_pool = [s for s in order if m.lengths[s] >= 3]
    if not victims_pool:
        for check in ("abandoned", "cancelled"):
            m.skip(check, variant, "sessions_too_short", steps=max(m.lengths))
        return
    rounds = [("abandon", "cancel")] if capacity >= 2 else [("abandon",), ("cancel",)]

    def one_round(kinds: tuple[str, ...]) -> None:
        holders = capacity - len(kinds)
        ids = iter(m.ids(holders + 2 * len(kinds)))
        released, stopped = threading.Event(), threading.Event()
        victims_left = [len(kinds)]
        followers_left = [len(kinds)]
        lock = threading.Lock()
        stopped_at: list[float] = []

        def holder_pause(c: Sequence, normal: Callable[[int], float]) -> Callable[[int], float]:
            def pause(k: int) -> float:
                if not released.is_set() and stopped_at and time.monotonic() > stopped_at[0] + RELEASE_AFTER_IDLE * idle_s + 1.0:
                    released.set()  # the followers never got in: stop holding
                if released.is_set():
                    return normal(k)
                if not stopped_at:
                    return idle_s / 4
                # Spread the steps left over the time until the followers are in (the victims' slots are
                # reaped an idle timeout after they stopped, the followers come half of one later), so a
                # short holder does not end first and hand its own slot to a follower (seen with 4 to 6
                # steps and a 1 s idle timeout); never more than HOLD_GAP of the timeout between steps,
                # so the reaper never takes a holder's slot.
                needed = stopped_at[0] + HOLD_UNTIL * idle_s - time.monotonic()
                return min(HOLD_GAP * idle_s, max(idle_s / 4, needed / max(1, c.sends - k)))
            return pause

        def victim_done() -> None:
            with lock:
                victims_left[0] -= 1
                if victims_left[0] == 0:
                    stopped_at.append(time.monotonic())
                    stopped.set()

        def follower_reply(k: int, row: Row) -> None:
            if k == 0:
                with lock:
                    followers_left[0] -= 1
                    if followers_left[0] == 0:
                        released.set()

        tasks: list[Callable[[], object]] = []
        for h in range(holders):
            c = m.sequence("holder", order[h % len(order)], next(ids))

            def hold(c: Sequence = c) -> None:
                m.play(model, "abandon_round", variant, c, holder_pause(c, m.gaps("abandon_round", c.session, c.number)))
            tasks.append(hold)
        for v, kind in enumerate(kinds):
            session = victims_pool[(holders + v) % len(victims_pool)]
            length = m.lengths[session]
            keep = max(1, min(length - 1, length // 2))
            c = m.sequence(f"victim_{kind}", session, next(ids), length, keep)
            tasks.append(functools.partial(_victim, m, model, variant, c, kind, victim_done))
        for f in range(len(kinds)):
            c = m.sequence("follower", order[(holders + len(kinds) + f) % len(order)], next(ids))

            def follower(c: Sequence = c) -> None:
                # Half an idle timeout after the victims' last requests: the follower then waits
                # about that long in the backlog, well inside its own idle timeout, when a slot frees.
                stopped.wait(timeout=TIMEOUT_S)
                time.sleep(idle_s / 2)
                # A follower holds its slot, as the holders do, until every follower is in: the
                # victims' slots free at their own idle timeouts, and a quick follower that ended
                # first would free a slot for the next follower before the other victim's freed.
                pause = holder_pause(c, m.gaps("abandon_round", c.session, c.number))
                m.play(model, "abandon_round", variant, c, pause, follower_reply)
            tasks.append(follower)
        m.pool(tasks, len(tasks))
        released.set()

    def body() -> None:
        for kinds in rounds:
            one_round(kinds)

    m.run_phase("abandon_round", variant, model, body, capacity, capacity + 2, log=True)


def _victim(m: Measurement, model: str, variant: str, c: Sequence, kind: str, done: Callable[[], None]) -> None:
    """The abandoned victim sends its first steps and goes. The cancelled one sends all but the
    last of them, then gives up on the last (a client timeout shorter than any reply) and goes.
    Whether the server still ran that request, the client cannot know."""
    try:
        plain = c.sends if kind == "abandon" else c.sends - 1
        rows = m.play(model, "abandon_round", variant, dataclasses.replace(c, sends=plain),
                          m.gaps("abandon_round", c.session, c.number)) if plain else []
        if kind == "cancel" and not (rows and rows[-1]["error"]):
            _given_up_request(m, model, variant, c, plain)
    finally:
        done()


def _given_up_request(m: Measurement, model: str, variant: str, c: Sequence, k: int) -> None:
    """One request whose HTTP client stops waiting after GIVE_UP_AFTER_S. Not a gRPC deadline:
    on Triton 2.51 a gRPC request cancelled while it executes can crash the server (SIGSEGV in
    the gRPC handler, server issue 7368, fixed after 24.10 by server PRs 7840 and 8078); seen
    here too, right after "skipping response generation as grpc transaction was cancelled"."""
    link = open_link(Transport.HTTP, m.server.url, in_flight=1, timeout_s=GIVE_UP_AFTER_S)
    try:
        m.send(model, "abandon_round", variant, c.role, c.number, c.session, k, c.corrid, k == 0, k == c.length - 1,
               judged=False, link=link, outcome="cancel_target")
    finally:
        link.close()
