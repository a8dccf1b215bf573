"""A verdict of the checker (app/checker/engine/verdicts.CheckVerdict) as a sentence: what matched or
where it first differed, the batch it ran in, the refusals, its witness, the replayed diagnosis, and
the notes beside the verdicts. The stream checks' verdicts are worded by streams.py.

English templates marked with N_(); the tables they fill are in labels.py.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.checker.words import streams
from app.checker.words.labels import (
    CHECKS,
    DIAGNOSED,
    NOT_EXERCISED,
    NOTE_GOLDEN_WRAP,
    NOTES,
    PHASES,
    REFUSAL_CAUSES,
    ROLES,
    SKIP_REASONS,
    VARIANTS,
    WITNESS_ADVICE,
)
from app.checker.words.streams import number
from app.i18n import N_, Words

if TYPE_CHECKING:
    from app.checker.engine import CheckVerdict


def check_name(check: str, variant: str, _: Words) -> str:
    return _.render(N_("{check:text} ({variant:text})"), check=_(CHECKS[check]), variant=_(VARIANTS[variant]))


def verdict_sentence(v: CheckVerdict, _: Words) -> str:
    """One verdict (app/checker/engine/verdicts.CheckVerdict) as a sentence."""
    values = v.values
    if v.verdict == "skipped":
        return _.render(SKIP_REASONS[v.reason], **values)
    if v.verdict == "not_exercised":
        return not_exercised_sentence(values["witness"], _)
    if v.check in streams.CHECKS:
        return streams.verdict_sentence(v, _)
    if v.check == "slow_client" and v.reason in ("slow_client_leaks_state", "slow_client_leaves_pending"):
        return slow_client_clause(values["witness"], _)  # every reply matched: what it left behind broke it
    if v.verdict == "broken" and "first" not in values:  # broken on refusals alone
        return refusal_sentence(values, _)
    if v.check == "golden":
        text = _golden_sentence(v, _)
    elif v.check == "finite":
        text = _finite_sentence(v, _)
    elif v.verdict == "held":
        text = _.render(N_("{compared:steps} of {sessions:sessions} matched their references; largest difference {largest:text}"),
                        compared=values["compared"], sessions=values["sessions"], largest=number(values.get("largest_difference")))
    else:
        first = values["first"]
        text = _.render(
            N_("first differed at {where:text}: {output:text} off by {difference:text}, tolerance {tolerance:text}; "
               "{wrong:steps} of {sessions:sessions} differ"),
            where=_where(first, _), output=first["output"], difference=number(first["difference"]), tolerance=number(first["tolerance"]),
            wrong=values["wrong_steps"], sessions=values["wrong_sessions"])
        shown = first.get("shown")
        if shown:
            text += _.render(N_(" (expected {expected:text}, got {got:text})"), expected=str(shown["expected"]), got=str(shown["got"]))
    if v.verdict == "broken" and "first" in values:
        text += _execution_text(values["first"], _)
        if values.get("refusals"):
            text += _(N_("; ")) + refusal_sentence(values, _)
    elif values.get("refusals"):
        text += _.render(N_("; {n:requests} refused"), n=values["refusals"])
    extra = _extra(v, _)
    text += _(N_("; ")) + extra if extra else ""
    text += witness_clause(values.get("witness"), _)
    diagnosed = diagnosis_lines(v, _)
    return text + (_(N_("; ")) + diagnosed[0] + " " + _(N_("; ")).join(diagnosed[1:]) if diagnosed else "")


def not_exercised_sentence(witness: dict[str, Any], _: Words) -> str:
    """What a check not exercised did not see (its witness's why), and what would exercise it."""
    sizes = ", ".join(f"{size}×{n}" for size, n in (witness.get("batch_sizes") or {}).items()) or "–"
    text = _.render(NOT_EXERCISED[witness["why"]], executions=witness.get("executions") or 0, sizes=sizes,
                    overlapping=witness.get("overlapping") or 0, largest=str(witness.get("largest_batch") or "–"),
                    capacity=witness.get("capacity") or 0, max_open=witness.get("max_open") or 0,
                    quiet=witness.get("quiet_s") or 0, idle=witness.get("idle_timeout_s") or 0)
    if witness.get("advice"):
        text += _(N_("; ")) + _.render(WITNESS_ADVICE[witness["advice"]], max_batch_size=witness.get("max_batch_size") or 0)
    return text


def witness_clause(witness: dict[str, Any] | None, _: Words) -> str:
    """A held check's evidence that its situation happened: the batch sizes the server ran, or the
    requests Triton counted pending while every slot was held."""
    if witness and witness.get("pending_peak"):
        return _.render(N_("; up to {pending:count} requests waited in the backlog with all {capacity:count} slots taken "
                           "(Triton's pending-request metric)"),
                        pending=int(witness["pending_peak"]), capacity=witness.get("capacity") or 0)
    if not witness or not witness.get("batch_sizes"):
        return ""
    sizes = ", ".join(f"{size}×{n}" for size, n in witness["batch_sizes"].items())
    return _.render(N_("; the server ran batches of up to {largest:count} requests ({sizes:text})"),
                    largest=witness["largest_batch"], sizes=sizes)


def refusal_sentence(values: dict[str, Any], _: Words) -> str:
    """A verdict's refusals: how many, the first (where and why) and what Triton said."""
    first = values["first_refusal"]
    return _.render(N_("{n:requests} refused, the first at {where:text}: {cause:text} (`{error:text}`); {compared:replies} "
                       "compared matched"), n=values["refusals"], where=_where(first, _), cause=_(REFUSAL_CAUSES[first["cause"]]),
                    error=first["error"], compared=values["compared"])


def diagnosis_lines(v: CheckVerdict, _: Words) -> list[str]:
    """A broken check's diagnosis (values["diagnosis"], app/checker/engine/sequences/diagnosis.py): a heading,
    then one line per diagnosed session; empty where there is none."""
    if v.check in streams.CHECKS:
        return streams.diagnosis_lines(v, _)
    d = v.values.get("diagnosis")
    if not d or not d["sessions"]:
        return []
    lines = [_.render(N_("replayed alone, {n:count} of {broken:count} broken sessions (at most {cap:count} per check) show:"),
                      n=d["diagnosed"], broken=d["broken_sessions"], cap=d["caps"]["sessions"])]
    return lines + [diagnosed_session(entry, _) for entry in d["sessions"]]


def diagnosed_session(entry: dict[str, Any], _: Words) -> str:
    """One diagnosed session: its class, and for foreign and stale the session whose state it carried."""
    kind = entry["class"]
    source = entry.get("source") or {}
    if kind == "foreign" and entry.get("form") == "mix":
        kind = "foreign_mix"
    elif kind == "foreign" and entry["step"] == 0 and source.get("ended_before"):
        kind = "foreign_left"
    return _.render(DIAGNOSED[kind], session=entry["session"], corrid=entry["corrid"], step=entry["step"] + 1,
                    matched=entry["matched"], compared=entry["compared"], source=source.get("session", 0),
                    source_corrid=source.get("corrid", ""))


def _where(first: dict[str, Any], _: Words) -> str:
    """A step as the sentences name it: its session, step, role and, on the sequence path, its ID."""
    role = _(ROLES.get(first["role"], first["role"]))
    if first["corrid"]:
        return _.render(N_("{session:session}, step {step:count} ({role:text}, ID {corrid:text})"), session=first["session"],
                        step=first["step"] + 1, role=role, corrid=first["corrid"])
    return _.render(N_("{session:session}, request {step:count} ({role:text})"), session=first["session"], step=first["step"] + 1, role=role)


def _execution_text(first: dict[str, Any], _: Words) -> str:
    execution = first.get("execution")
    if execution and execution["shared_with"]:
        others = ", ".join(_.render(N_("{session:session} step {step:count}"), session=o["session"], step=o["step"] + 1)
                           for o in execution["shared_with"])
        return _.render(N_("; it ran in a batch of {batch:count} on {lane:text} with {others:text}"),
                        batch=execution["batch"], lane=str(execution["lane"]), others=others)
    if execution:
        return _.render(N_("; it ran alone in its batch on {lane:text}"), lane=str(execution["lane"]))
    return ""


def elements(values: list[Any] | tuple[Any, ...] | None) -> str:
    """A reply's first elements as the report keeps them (measurement._first): [1.5, nan, abc]."""
    return "[" + ", ".join(str(v) for v in values) + "]" if values is not None else "–"


def _golden_sentence(v: CheckVerdict, _: Words) -> str:
    values = v.values
    if v.verdict == "held":
        text = _.render(N_("{compared:replies} of {sessions:sessions} matched their golden outputs; largest difference "
                           "{largest:text}"), compared=values["compared"], sessions=values["sessions"],
                        largest=number(values.get("largest_difference")))
    else:
        first = values["first"]
        text = _.render(
            N_("first differed from its golden output at {where:text}, stream {stream:count} ({phase:text}): {output:text} off by "
               "{difference:text}, tolerance {tolerance:text}; {wrong:replies} of {sessions:sessions} differ"),
            where=_where(first, _), stream=first.get("stream", 0) + 1, phase=_(PHASES[first["phase"]]), output=first["output"],
            difference=number(first["difference"]), tolerance=number(first["tolerance"]), wrong=values["wrong_steps"],
            sessions=values["wrong_sessions"])
        shown = first.get("shown")
        if shown:
            text += _.render(N_(" (expected {expected:text}, got {got:text})"), expected=elements(shown["expected"]), got=elements(shown["got"]))
    floats = {name: value for name, value in (values.get("tolerances") or {}).items() if value}
    if floats:
        text += _.render(N_("; float outputs within {tolerances:text}"),
                         tolerances=", ".join(f"{name} {number(value)}" for name, value in floats.items()))
    if values.get("wrapped_streams"):
        text += _.render(N_("; streams shorter than their sessions ({streams:text}): {n:count} later replies replayed earlier "
                            "inputs and were not compared"), streams=streams_text(values["wrapped_streams"]), n=values["uncompared_steps"])
    return text


def _finite_sentence(v: CheckVerdict, _: Words) -> str:
    values = v.values
    alone = v.variant == "alone"
    if v.verdict == "held":
        if alone:
            return _.render(N_("{compared:replies} of {sessions:sessions}: every float output a number"),
                            compared=values["compared"], sessions=values["sessions"])
        text = _.render(N_("{compared:replies} of {sessions:sessions}: no NaN or Inf appeared where the lone runs "
                           "answered numbers"), compared=values["compared"], sessions=values["sessions"])
        if values.get("non_finite_alone"):
            text += _.render(N_(" ({n:replies} held NaN or Inf alone too)"), n=values["non_finite_alone"])
        return text
    first = values["first"]
    template = (N_("first NaN or Inf at {where:text} ({phase:text}): {output:text} gave {got:text}; {wrong:replies} of "
                   "{sessions:sessions} hold NaN or Inf") if alone else
                N_("first NaN or Inf appearing under traffic at {where:text} ({phase:text}): {output:text} gave {got:text} where "
                   "alone it gave numbers; {wrong:replies} of {sessions:sessions}"))
    return _.render(template, where=_where(first, _), phase=_(PHASES[first["phase"]]), output=first["output"],
                    got=elements((first.get("shown") or {}).get("got")), wrong=values["wrong_steps"], sessions=values["wrong_sessions"])


def streams_text(streams: list[int]) -> str:
    """Data streams as people count them, from 1: 2, 4."""
    return ", ".join(str(s + 1) for s in streams)


def note_lines(notes: list[dict[str, Any]], _: Words) -> list[str]:
    """What the reader should know beside the verdicts (verdicts.CheckJudgement.notes)."""
    lines = []
    for note in notes:
        values = note["values"]
        if note["code"] == "streams_wrap":
            text = _.render(NOTES["streams_wrap"], streams=streams_text(values["streams"]), steps=values["steps"])
            lines.append(text + (" " + _(NOTE_GOLDEN_WRAP) if values.get("golden") else ""))
        else:
            lines.append(_.render(NOTES[note["code"]], **values))
    return lines


def _extra(v: CheckVerdict, _: Words) -> str:
    values = v.values
    if v.check == "interleaved" and "overflow" in values:
        if values["overflow"]:
            return _.render(N_("{n:sessions} in flight on {capacity:slots}, so the backlog was used"),
                            n=values["in_flight"], capacity=values["capacity"])
        return _.render(N_("only {n:sessions} in flight on {capacity:slots}: the backlog was not reached (more --sessions reach it)"),
                        n=values["in_flight"], capacity=values["capacity"])
    if v.check == "id_reuse" and values.get("same_instance") is not None:
        return _.render(N_("reused after END: {reused:ids}; back on the same instance: {same:count}, on the same slot: {slot:count}"),
                        same=values["same_instance"], reused=values["reused"], slot=values["same_slot"])
    if v.check in ("abandoned", "cancelled") and values.get("next_on_slot") is not None:
        return _.render(N_("the next session on its slot ran there: {yes:yes_no}"), yes=values["next_on_slot"])
    if v.check == "slow_client" and values.get("witness"):
        return slow_client_clause(values["witness"], _)
    return ""


def slow_client_clause(w: dict[str, Any], _: Words) -> str:
    """The slow client's fault as it happened (its witness): the quiet, the late step, the restart, the readings."""
    text = _.render(N_("the client was quiet for {quiet:seconds} (idle timeout {idle:seconds}); its late step was refused as a "
                       "sequence the server no longer knew: {refused:yes_no}"),
                    quiet=w.get("quiet_s") or 0, idle=w["idle_timeout_s"], refused=bool(w.get("late_refused")))
    if w.get("restarted_matched") is not None:
        text += _.render(N_("; started over from START under the same ID, it answered as alone: {yes:yes_no}"),
                         yes=w["restarted_matched"])
    if w.get("pending_after") is not None:
        text += _.render(N_("; Triton's pending requests afterwards: {n:count}"), n=int(w["pending_after"]))
    if w.get("state_metric") and w.get("state_before") is not None and w.get("state_after") is not None:
        text += _.render(N_("; {metric:text} {before:text} before the fault, {after:text} after"), metric=w["state_metric"],
                         before=number(w["state_before"]), after=number(w["state_after"]))
    return text
