"""A client slower than the idle timeout, played on the sequence path: the `slow_client` check.

Clients stall (a user who walks away, a client stuck behind a slow network) and come back. After the
abandon round, with nothing else of the check's on the model, a victim session (the longest, of at
least 3 steps) sends its first half of steps, then its client goes quiet longer than the model's
idle timeout (max_sequence_idle_microseconds; 1 s when 0 or unset), while NEIGHBOURS sessions play
normally beside it, paced at a quarter of the idle timeout so they stay inside it. With the server's
log at verbosity 1 the quiet lasts until the log shows the idle reaper freeing the victim's slot
("Reaper: force-ending CORRID c in batcher b, slot s", sequence_batch_scheduler.cc at r24.10), or
LOG_WAIT idle timeouts at most; without the log, OVER_IDLE idle timeouts plus QUIET_EXTRA_S. Then:

  the late step   the victim's next step, without START: Triton no longer knows the sequence and
                  refuses it ("... must specify the START flag on the first request of the
                  sequence"); the refusal is the witness. It is sent judged=False with outcome
                  LATE, so the judge never counts it as the model's refusal;
  the restart     the victim's client starts over as a real client does: the whole session from
                  START under the same correlation ID, whose replies must match the lone reference
                  (a model that keeps state per ID and does not reset it on START carries the reaped
                  sequence's state into it: broken, slow_client_keeps_state);
  settling        Triton's pending requests for the model (witness.readings_at) must fall to 0 and,
                  with --state-metric, the model's gauge back to its reading before the fault,
                  within witness.SETTLE_S (else broken: LEAKS_STATE or LEAVES_PENDING).

Where cheap: an idle timeout above LONGEST_IDLE_S is not waited for (skipped, idle_timeout_long).
Codes and values only.
"""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.checker.engine.sequences import placement
from app.checker.engine.witness import POLL_S, SETTLE_S, FaultReadings, readings_at
from app.lab.observation import START_REFUSAL, LogCode, server_log

if TYPE_CHECKING:

    from app.checker.engine.sequences.measurement import Measurement

CHECK = PHASE = FAULT = "slow_client"
VICTIM, NEIGHBOUR, RESTART = "victim_slow", "neighbour", "restart"  # the rows' roles
LATE = "late_step"  # the late step's outcome: the fault's own request, never judged nor counted as a refusal
LEAKS_STATE, LEAVES_PENDING = "slow_client_leaks_state", "slow_client_leaves_pending"  # the diagnoses of what it left behind
LEAK_DIAGNOSES = (LEAKS_STATE, LEAVES_PENDING)
NEIGHBOURS = 3  # at most; fewer where the slots are fewer, so none waits in the backlog (where the reaper would end it too)
LONGEST_IDLE_S = 10.0  # a longer idle timeout is not waited for: skipped (idle_timeout_long)
OVER_IDLE = 1.5  # without the log, the client is quiet this many idle timeouts plus QUIET_EXTRA_S
QUIET_EXTRA_S = 1.0
LOG_WAIT = 3.0  # with the log, the reaper's line is waited for this many idle timeouts plus QUIET_EXTRA_S at most
REFUSAL_SHOWN = 300  # characters of Triton's refusal kept in the witness


class SlowClientWitness(FaultReadings):
    idle_timeout_s: float
    quiet_s: float | None
    reaped_logged: bool | None
    late_refused: bool
    refusal: str | None  # Triton's refusal of the late step, its first REFUSAL_SHOWN characters
    restarted_matched: bool | None  # the judge's to fill (judge._slow_client)


@dataclass
class SlowRun:
    """The fault as it happened: how long the victim's client was quiet, whether the log showed the
    reaper end its sequence (None: no log), what became of the late step, and the readings."""

    idle_timeout_s: float
    neighbours: int
    state_metric: str | None = None
    quiet_s: float | None = None
    reaped_logged: bool | None = None
    late_error: str | None = None  # None: the late step was not sent (the victim was refused before)
    pending_before: float | None = None
    pending_after: float | None = None
    state_before: float | None = None
    state_after: float | None = None
    settled_s: float | None = None  # from the restart's end until pending 0 and the state back (None: not within settle_s)
    settle_s: float = SETTLE_S

    @property
    def late_refused(self) -> bool:
        return bool(self.late_error) and START_REFUSAL in str(self.late_error)

    def witness(self) -> SlowClientWitness:
        """The fault's evidence, for the verdict's values["witness"] (report schema $defs/witness);
        restarted_matched is the judge's to fill."""
        why = None if self.late_refused else "not_reaped" if self.late_error == "" else "late_step_failed"
        return {"source": "client" if self.reaped_logged is None else "log", "exercised": self.late_refused, "why": why,
                "advice": "reaper_late" if why == "not_reaped" else None, "fault": FAULT,
                "idle_timeout_s": self.idle_timeout_s, "quiet_s": _round(self.quiet_s), "reaped_logged": self.reaped_logged,
                "late_refused": self.late_refused, "refusal": (self.late_error or "")[:REFUSAL_SHOWN] or None,
                "restarted_matched": None, "neighbours": self.neighbours, "pending_before": self.pending_before,
                "pending_after": self.pending_after, "state_metric": self.state_metric, "state_before": self.state_before,
                "state_after": self.state_after, "settled_s": _round(self.settled_s), "settle_s": self.settle_s}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def leak(evidence: SlowClientWitness) -> str | None:
    """What the fault left behind (a diagnosis code), from its witness: the state gauge above its
    reading before the fault, or Triton still holding requests for the model; None: nothing."""
    before, after = evidence.get("state_before"), evidence.get("state_after")
    if before is not None and after is not None and after > before:
        return LEAKS_STATE
    pending = evidence.get("pending_after")
    return LEAVES_PENDING if pending is not None and pending > 0 else None


def play(m: Measurement, model: str, variant: str, capacity: int) -> None:
    """Play the fault as the phase PHASE, and record its witness (or why it was skipped)."""
    idle_s = m.facts.idle_timeout_us / 1e6
    if idle_s > LONGEST_IDLE_S:
        m.skip(CHECK, variant, "idle_timeout_long", idle_timeout_s=idle_s, limit_s=LONGEST_IDLE_S)
        return
    order = sorted(range(len(m.lengths)), key=lambda s: (-m.lengths[s], s))
    if m.lengths[order[0]] < 3:
        m.skip(CHECK, variant, "sessions_too_short", steps=max(m.lengths))
        return
    session, others = order[0], order[1:] or order
    run = SlowRun(idle_s, max(0, min(NEIGHBOURS, capacity - 1)), m.options.state_metric)
    ids = m.ids(1 + run.neighbours)

    def victim() -> None:
        length = m.lengths[session]
        keep = max(1, length // 2)
        first = m.sequence(VICTIM, session, ids[0], length, keep)
        window = server_log.LogWindow.start(m.server)
        rows = m.play(model, PHASE, variant, first, m.gaps(PHASE, session, first.number))
        if rows[-1]["error"]:
            return  # refused before it went quiet: the judge counts it as the model's refusal
        _quiet(m, window, model, first.corrid, run)
        late = m.send(model, PHASE, variant, VICTIM, first.number, session, keep, first.corrid, False, keep == length - 1,
                      judged=False, outcome=LATE)
        run.quiet_s = float(late["t_send"] - rows[-1]["t_recv"])
        run.late_error = str(late["error"])
        again = m.sequence(RESTART, session, first.corrid)
        m.play(model, PHASE, variant, again, m.gaps(PHASE, session, again.number))

    def neighbour(j: int) -> None:
        c = m.sequence(NEIGHBOUR, others[j % len(others)], ids[1 + j])
        m.play(model, PHASE, variant, c, lambda k: idle_s / 4)  # beside the quiet one, inside their own idle timeout

    def body() -> None:
        run.pending_before, run.state_before = readings_at(m.server.metrics_url, model, run.state_metric)
        m.pool([victim, *(functools.partial(neighbour, j) for j in range(run.neighbours))], 1 + run.neighbours)
        if run.late_error is not None:
            _settle(m, model, run)

    m.run_phase(PHASE, variant, model, body, capacity, 1 + run.neighbours, log=True)
    m.witnesses[(CHECK, variant)] = run.witness()


def _quiet(m: Measurement, window: server_log.LogWindow, model: str, corrid: int | str, run: SlowRun) -> None:
    """Stay quiet until the log shows the reaper ending the victim's sequence (LOG_WAIT idle
    timeouts at most), or without the log for OVER_IDLE idle timeouts, plus QUIET_EXTRA_S."""
    idle_s = run.idle_timeout_s
    if not window.available:
        time.sleep(OVER_IDLE * idle_s + QUIET_EXTRA_S)
        return
    run.reaped_logged = False
    deadline = time.monotonic() + LOG_WAIT * idle_s + QUIET_EXTRA_S
    while time.monotonic() < deadline and not m.abort.is_set():
        if _reaped(window, model, corrid):
            run.reaped_logged = True
            return
        time.sleep(POLL_S)


def _reaped(window: server_log.LogWindow, model: str, corrid: int | str) -> bool:
    """Whether the log since `window` opened holds the reaper's force-end of `corrid` in one of `model`'s batchers."""
    for entry in server_log.parse(placement.log_lines(window)):
        if entry.code == LogCode.REAPER_FORCE_END and entry.corrid == str(corrid) and entry.model == model:
            return True
    return False


def _settle(m: Measurement, model: str, run: SlowRun) -> None:
    """Read the metrics until Triton holds no pending request for the model and the state gauge is
    back to its reading before the fault, or settle_s has passed."""
    began = time.monotonic()
    while True:
        run.pending_after, run.state_after = readings_at(m.server.metrics_url, model, run.state_metric)
        since = time.monotonic() - began
        if leak(run.witness()) is None:
            run.settled_s = since
            return
        if since >= run.settle_s:
            return
        time.sleep(POLL_S)
