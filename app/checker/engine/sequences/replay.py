"""Play a broken check's hypotheses on the model and diagnose its sessions (app/checker/engine/sequences/diagnosis.py).

engine.run_check calls diagnose() after the judgement, while the check still holds the model's
lease (nobody else's traffic runs in between). Each hypothesis is one lone sequence: one request
in flight, a fresh correlation ID, START on its first request and END on its last, sent with the
measurement's own machinery (measurement.Measurement.send, the inputs from the check's source). It
runs on the model itself: the one-instance copy is unloaded by then, and a lone sequence takes
a free slot on whichever instance has one, alone as in the references, so its answers do not
depend on how many instances there are. The replies are kept, not recorded: they are no step of
any check.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

from app.checker.engine.aliases import InferResult, Row
from app.checker.engine.sequences import diagnosis, measurement
from app.checker.engine.verdicts import CheckJudgement
from app.lab.problems import LabError
from app.lab.progress import Progress

if TYPE_CHECKING:
    from app.checker.engine.facts import ModelFacts
    from app.checker.engine.inputs import InputSource
    from app.checker.engine.sequences.measure import Tables
    from app.checker.engine.target import Target

PHASE = "diagnosis"  # the progress callback's phase code while hypotheses are replayed


class _Replayer(measurement.Measurement):
    """Measurement's sending, each reply's compared outputs kept in its row instead of judged."""

    def _finish(self, row: Row, result: InferResult | None, error: str) -> None:
        row["t_recv"] = time.perf_counter() - self.t0
        row["error"] = error or ""
        assert error or result is not None  # tritonclient gives a result wherever it gives no error
        row["got"] = {} if error or result is None else {spec.name: result.as_numpy(spec.name) for spec in self.compared}
        self._stop_if_server_gone(error)


def diagnose(target: Target, facts: ModelFacts, source: InputSource, tables: Tables, judgement: CheckJudgement,
             progress: Progress | None = None) -> CheckJudgement:
    """The judgement with every broken sequence check's sessions diagnosed (values["diagnosis"])
    and its advice in `diagnoses`. LabError check_server_gone when the server stops answering."""
    plans = diagnosis.plan(tables, judgement)
    if not plans:
        return judgement
    planned = sum(min(diagnosis.MAX_REQUESTS, sum(h.requests for b in p.sessions for h in b.hypotheses)) for p in plans)
    r = _Replayer(target, facts, source, tables.options, progress, planned)
    counter = _Throttle(progress, planned)
    known: dict[int, diagnosis.Session] = {}  # sequence number -> its entry: a holder or follower is in both abort checks
    diagnosed: dict[str, diagnosis.Summary] = {}
    try:
        for p in plans:
            budget, replayed, entries = diagnosis.MAX_REQUESTS, 0, []
            for b in p.sessions:
                if b.sequence in known:
                    entries.append(known[b.sequence])
                    continue
                tried, complete = [], True
                for h in b.hypotheses:
                    if h.requests > budget:
                        complete = False
                        break
                    replies = _play(r, target.model, b, h)
                    if r.abort.is_set():
                        raise LabError(r.abort_code or "check_server_gone", url=target.server.url)
                    budget -= h.requests
                    replayed += h.requests
                    counter.add(h.requests, b.variant)
                    score = diagnosis.matched(b.observed, replies, judgement.tolerances)
                    tried.append((h, score))
                    if score == len(b.observed):
                        break  # every compared step matched: nothing explains it better
                if complete or any(score for _, score in tried):
                    known[b.sequence] = diagnosis.classify(b, tried)
                    entries.append(known[b.sequence])
            diagnosed[p.verdict.id] = diagnosis.summary(p, entries, replayed, facts.scheduler)
    finally:
        r.close_links()
    return diagnosis.attach(judgement, diagnosed)


def _play(r: _Replayer, model: str, b: diagnosis.Broken, h: diagnosis.Hypothesis) -> list[Row]:
    """One hypothesis as a lone sequence; the replies to its compared requests, in order (fewer
    where a request failed: the sequence stops there)."""
    corrid = r.ids(1)[0]
    sequence = next(r.sequences)
    replies: list[Row] = []
    last = len(h.sends) - 1
    for i, send in enumerate(h.sends):
        row = r.send(model, PHASE, b.variant, "replay", sequence, send.session, send.step, corrid,
                     start=send.start or i == 0, end=i == last, judged=False)
        if row["error"]:
            if i < last:  # END it, or its slot stays taken until the idle timeout (refused too, where it is gone)
                r.send(model, PHASE, b.variant, "replay", sequence, send.session, send.step, corrid, end=True, judged=False)
            break
        if send.compared:
            replies.append(row["got"])
    return replies


class _Throttle:
    """The progress callback, at most every measurement.PROGRESS_EVERY_S."""

    def __init__(self, progress: Progress | None, planned: int):
        self.progress, self.planned, self.done, self.last = progress, planned, 0, 0.0

    def add(self, requests: int, variant: str) -> None:
        self.done += requests
        now = time.monotonic()
        if self.progress and now - self.last >= measurement.PROGRESS_EVERY_S:
            self.last = now
            self.progress(min(self.done, self.planned), self.planned, measurement.stage(PHASE, variant))
