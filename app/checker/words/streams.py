"""Words of the checker's streaming checks (app/checker/engine/streaming/streams.py, stream_judge.py,
stream_diagnosis.py): the checks, phases, diagnoses, verdict sentences and summary lines.

English templates marked with N_(); app/checker/words/labels.py merges the dictionaries into its own,
verdicts.py and summary.py hand the stream checks' verdicts and results to the functions here. Requests and responses count from 1.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from app.i18n import N_, Words

if TYPE_CHECKING:
    from app.checker.engine import CheckResult, CheckVerdict

CHECKS = {
    "stream_reference": N_("each request's whole response stream alone, twice: the same responses, and a final one"),
    "stream_staggered": N_("the same requests arriving staggered, sharing executions in flight: each stream as it was alone"),
    "stream_golden": N_("every response stream against the golden streams in the data file's validation_data"),
    "stream_finite": N_("every float output of every response a number: no NaN, no Inf"),
    "stream_cancelled": N_("a request cancelled by its client mid-stream: its neighbours stream as alone, Triton's pending "
                           "requests fall to 0 and the model's state gauge back to its baseline"),
    "stream_disconnected": N_("a request whose client vanishes mid-stream (its connection reset, no cancel sent): its neighbours "
                              "stream as alone, Triton's pending requests fall to 0 and the model's state gauge back to its "
                              "baseline"),
}
PHASES = {
    "stream_alone": N_("response streams: every request alone"),
    "staggered": N_("staggered requests sharing executions"),
}
DIAGNOSES = {
    "stream_not_reproducible": N_("A request sent alone twice did not stream the same responses: the model is nondeterministic "
                                  "beyond the tolerance, or keeps something from one request to the next. Nothing else could be "
                                  "judged against its streams."),
    "stream_foreign_state": N_("Part-way through, a stream carried on with another request's state, whole or in part: the model "
                               "read another request's state. Under oldest, requests join and leave running executions at any step, "
                               "so the row a request has in one execution says nothing about which request it is; under direct a row "
                               "stays one sequence's slot, but padding rows (READY 0) and a slot reused after START still break a "
                               "table kept by row. Key each request's state by the CORRID control (or request.correlation_id() in a "
                               "Python model), not by its row."),
    "stream_lost_state": N_("Part-way through, a stream started over from its first response: the model lost the request's state "
                            "and began it afresh. Keep each request's state until its last response, for as many requests as "
                            "run at once (max_candidate_sequences under oldest), and start afresh only when START is set."),
    "stream_never_ended": N_("A stream never ended: no response came for a while and none carried the final flag. A decoupled "
                             "model must close every request's stream with the final flag (on its last response, or alone), "
                             "also when the request is cancelled; a client waiting for it waits for ever."),
    "stream_ended_early": N_("A stream ended with fewer responses than the same request sent alone: the model sent the final flag "
                             "too soon when the request shared its executions with others."),
    "stream_ended_late": N_("A stream sent more responses than the same request alone: the model missed the request's end when it "
                            "shared its executions with others."),
    "stream_failed": N_("The server answered a request with an error instead of its stream."),
    "fault_leaks_state": N_("After a client cancelled a request mid-stream or vanished (the failing check names the fault), "
                            "the model's own state gauge did not fall back to its baseline: the model keeps state for a request Triton has dropped. Ask "
                            "request.is_cancelled() at every step and free the request's state when it says so, and also sweep "
                            "state no step has touched for a while: a cancel that lands while the request waits in Triton's "
                            "queue never reaches the model."),
    "fault_leaves_pending": N_("After a client cancelled a request mid-stream or vanished (the failing check names the fault), "
                               "Triton still held requests for the model: the request was never released. Close every request's "
                               "stream with the final flag, also when it is cancelled."),
    "stream_batch_dependent": N_("Sharing executions with other requests changed a stream's responses: the model's answer for "
                                 "one request depends on the others in flight. Make each request's computation and state "
                                 "independent of the rest of the batch."),
}
SKIP_REASONS: dict[str, str] = {}
DIAGNOSED = {
    # one diagnosed stream; {step} counts responses from 1
    "foreign": N_("request {request:count} from response {step:count}: it carried on with request {source:count}'s stream from "
                  "that request's response {source_step:count} ({matched:count} of {compared:count} responses matched)"),
    "mixed": N_("request {request:count} from response {step:count}: part of request {source:count}'s state went into it ("
                "{outputs:text} equal that request's response {source_step:count} alone)"),
    "lost": N_("request {request:count} from response {step:count}: state lost, it started over as if new ({matched:count} of "
               "{compared:count} responses matched its own first ones)"),
    "never_ended": N_("request {request:count}: never ended ({responses:replies}, then nothing for {idle:seconds}; alone it "
                      "sent {expected:count} and ended)"),
    "never_ended_long": N_("request {request:count}: never ended (more than {responses:replies}; alone it sent "
                           "{expected:count} and ended)"),
    "ended_early": N_("request {request:count}: ended early, after {responses:count} of its {expected:replies}"),
    "ended_late": N_("request {request:count}: ended late, with {responses:replies} where alone it sent {expected:count}"),
    "failed": N_("request {request:count}: the server answered with an error: `{error:text}`"),
    "other": N_("request {request:count} from response {step:count}: differs, and matches no other request's stream nor its own "
                "from the start"),
}

# The lab's paged engine (app/checker/engine/paged_engine.py, streaming/stream_check.annotate_paged): what its own outputs
# showed of the staggered run, and what replaying a diverging stream's tail alone showed.
ENGINE = N_("; the engine: {demand:count} tokens of KV cache asked for at once, its cache holds {cache:count}; up to "
            "{waiting:count} requests waiting at once; {prefix:count} of {streams:streams} found the shared prefix's blocks in "
            "its cache")
CONTINUATION = {
    True: N_(" (replayed alone from there, the rest is the model's own continuation of what it had generated: what a near tie "
             "between two tokens in float arithmetic leaves; the model's outputs carry no scores, so how near cannot be shown)"),
    False: N_(" (replayed alone from there, the model goes on differently: the stream went on from a state that was not its own)"),
}


def number(value: float | str | None) -> str:
    """A difference or tolerance as people read it: 3 significant digits, '∞' for none at all, '–'
    where there is no value (both paths' sentences; the sequence path's verdicts.py imports it)."""
    if value is None:
        return "–"
    if isinstance(value, str) or not math.isfinite(value):
        return "∞"
    return f"{value:.3g}"


def _elements(values: list[Any] | tuple[Any, ...] | None) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]" if values is not None else "–"


def verdict_sentence(v: CheckVerdict, _: Words) -> str:
    """One stream verdict (verdicts.CheckVerdict of a check in CHECKS) as a sentence; skipped ones are
    said by the caller's SKIP_REASONS."""
    values = v.values
    if v.check in FAULT_VICTIM_BY_CHECK:
        return fault_sentence(v, _)
    if v.check == "stream_finite":
        if v.verdict == "held":
            return _.render(N_("{compared:replies} in {sessions:streams}: every float output a number"),
                            compared=values["compared"], sessions=values["sessions"])
        first = values["first"]
        return _.render(N_("first NaN or Inf in request {request:count}, response {step:count}: {output:text} gave {got:text}; "
                           "{wrong:replies} in {sessions:streams}"), request=first["session"] + 1, step=first["step"] + 1,
                        output=first["output"], got=_elements(first["shown"].get("got")), wrong=values["wrong_steps"],
                        sessions=values["wrong_sessions"])
    if v.verdict == "held":
        if v.check == "stream_golden":
            return _.render(N_("{compared:streams} matched their golden streams; largest difference {largest:text}"),
                            compared=values["compared"], largest=number(values.get("largest_difference")))
        text = _.render(N_("{streams:streams} matched their lone streams response for response ({responses:replies}); largest "
                           "difference {largest:text}"), streams=values["streams"], responses=values["responses"],
                        largest=number(values.get("largest_difference")))
        return text + _shared(values, _) + _engine(values, _)
    first = values["first"]
    text = _.render(N_("{wrong:streams} of {sessions:count} broken; the first, request {request:count}, from response {step:count}: "
                       "{output:text} off by {difference:text} (expected {expected:text}, got {got:text})"),
                    wrong=values["wrong_sessions"], sessions=values["sessions"], request=first["session"] + 1, step=first["step"] + 1,
                    output=first["output"], difference=number(first["difference"]),
                    expected=_elements(first["shown"].get("expected")), got=_elements(first["shown"].get("got")))
    text += _shared(values, _) + _engine(values, _)
    lines = diagnosis_lines(v, _)
    return text + ("; " + "; ".join(lines[1:]) if lines else "")


FREED = {
    "at_once": N_("; settled at once ({seconds:seconds} after the fault)"),
    "later": N_("; settled only {seconds:seconds} after the fault: by a sweep of the model's or the idle reaper, not at once"),
    "never": N_("; still not settled {seconds:seconds} after the fault"),
}


# How each client fault (app/checker/engine/streaming/faults.py FAULTS) ended its victim, by its check.
FAULT_VICTIM_BY_CHECK = {
    "stream_cancelled": N_("request {victim:count} cancelled by its client after {after:replies}; {neighbours:streams} beside it"),
    "stream_disconnected": N_("request {victim:count} lost its client after {after:replies} (the connection reset, no cancel "
                              "sent); {neighbours:streams} beside it"),
}


def fault_sentence(v: CheckVerdict, _: Words) -> str:
    """The client fault's verdict: where the cancel landed, the neighbours, and what settled when."""
    w = v.values["witness"]
    text = _.render(FAULT_VICTIM_BY_CHECK[v.check], victim=(w["victim"] or 0) + 1, after=w["cancelled_after"] or 0,
                    neighbours=w["neighbours"])
    if v.verdict == "broken" and "first" in v.values:  # a neighbour's stream went wrong: the stream words say how
        return text + "; " + "; ".join(diagnosis_lines(v, _)[1:])
    text += _.render(N_("; Triton's pending requests {before:text} before, {after:text} after"),
                     before=number(w["pending_before"]), after=number(w["pending_after"]))
    if w["state_metric"]:
        text += _.render(N_("; the model's gauge {metric:text} {before:text} before, {after:text} after"),
                         metric=w["state_metric"], before=number(w["state_before"]), after=number(w["state_after"]))
    else:
        text += _(N_("; no state gauge named (--state-metric NAME), so the model's own state was not read"))
    if w["freed"]:
        seconds = w["settled_s"] if w["settled_s"] is not None else w["settle_s"]
        text += _.render(FREED[w["freed"]], seconds=seconds)
    return text


def _shared(values: dict[str, Any], _: Words) -> str:
    if "gap_s" not in values:
        return ""
    return _.render(N_("; arrivals {gap:ms} apart, {shared:count} of {streams:streams} generating beside another"),
                    gap=values["gap_s"] * 1000, shared=values["shared"], streams=values["streams"])


def _engine(values: dict[str, Any], _: Words) -> str:
    engine = values.get("engine")
    if not engine:
        return ""
    return _.render(ENGINE, demand=engine["demand_tokens"], cache=engine["cache_tokens"], waiting=engine["most_waiting"],
                    prefix=engine["requests_with_prefix_from_cache"], streams=values["streams"])


def diagnosis_lines(v: CheckVerdict, _: Words) -> list[str]:
    """A broken stream check's diagnosis: a heading, then one line per diagnosed stream (empty where there is none)."""
    d = v.values.get("stream_diagnosis")
    if not d:
        return []
    heading = _.render(N_("compared with every request's lone stream, {n:count} of {broken:streams} broken show:"),
                       n=len(d["streams"]), broken=d["broken_streams"])
    return [heading] + [diagnosed_stream(entry, _, idle=v.values.get("idle_s")) for entry in d["streams"]]


def diagnosed_stream(entry: dict[str, Any], _: Words, idle: float | None = None) -> str:
    kind = entry["class"]
    if kind == "never_ended" and entry.get("given_up") == "too_long":
        kind = "never_ended_long"
    source = entry.get("source") or {}
    step = entry["step"] if entry["step"] is not None else 0
    text = _.render(DIAGNOSED[kind], request=entry["request"] + 1, step=step + 1, source=source.get("request", 0) + 1,
                    source_step=source.get("step", 0) + 1, matched=entry["matched"], compared=entry["compared"],
                    responses=entry["responses"], expected=entry["expected"], idle=idle or 0.0, error=entry.get("error") or "",
                    outputs=", ".join(entry.get("outputs") or []))
    own = entry.get("own_continuation")  # the paged engine's replay (stream_check.annotate_paged); None: not replayed
    return text + (_(CONTINUATION[own]) if isinstance(own, bool) else "")


def summary_lines(result: CheckResult, _: Words) -> list[str]:
    """How the streams were sent (result.streams, streams.StreamTables)."""
    s = result.streams
    if s is None:  # not a decoupled model's check
        return []
    lone = [len(x.responses) for x in s.alone["a"]]
    return [_.render(N_("decoupled: {requests:requests}, each alone twice, then staggered {gap:ms} apart over one gRPC stream; "
                        "alone they streamed {low:count} to {high:replies}; a stream silent for {idle:seconds} is given up"),
                     requests=s.requests, gap=s.gap_s * 1000, low=min(lone, default=0), high=max(lone, default=0), idle=s.idle_s)]
