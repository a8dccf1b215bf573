"""The checker's account of a check in the CLI's lines (app/checker/engine/run.CheckResult): the run,
the inputs' shapes, the verdicts, the routing through a balancer, the outcome the exit status gives,
the config review's findings, and the words of the export and of JUnit.

English templates marked with N_(); a verdict's own sentence comes from verdicts.py.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.checker.engine import LAB_TRITON_VERSION, dims_text
from app.checker.words import streams
from app.checker.words.labels import DIAGNOSES, REFUSAL_CAUSES, VERDICTS, WITNESS_ADVICE
from app.checker.words.review import finding_words
from app.checker.words.streams import number
from app.checker.words.verdicts import check_name, note_lines, verdict_sentence
from app.i18n import N_, Words

if TYPE_CHECKING:
    from app.checker.engine import CheckResult, CheckVerdict, InputsUsed, ReviewFinding

# How an input's variable dimensions were sized (ShapeUsed.sized_by; drawn ones by DrawnSizes.per).
SIZED_BY = {
    "shape": N_("from --shape"),
    "data_file": N_("from the data file"),
    "request": N_("drawn for each session and step, {low:count} to {high:elements} per variable dimension (no --shape given)"),
    "run": N_("one size for every request, drawn from {low:count} to {high:elements} per variable dimension (no --shape given): "
              "the dynamic batcher batches requests together only when each variable input has the same shape in all of them, "
              "unless allow_ragged_batch is set"),
}
WHERE = {"embedded": N_("the checker's own server"), "external": N_("an external server")}
SOURCES = {"generated": N_("generated from the model's metadata"), "data_file": N_("from the data file")}
TOLERANCE_SOURCES = {"user": N_("yours"), "derived": N_("from the measured noise and the datatype")}
OUTCOME = {0: N_("Every check held."), 1: N_("A check broke.")}
OUTCOME_NOT_EXERCISED = N_("No check broke, but {n:count} check(s) were not exercised: their situation never happened, so "
                           "they show nothing (exit status {exit:count}; --not-exercised-exit chooses it).")
ROUTING = {
    "balancer_splits_sequences": N_("Every session held directly on one replica, and broke through the balancer: the balancer "
                                    "splits sequences. Requests of one sequence reached replicas that never saw its START. Route "
                                    "every request of a sequence to one replica: send the session's ID in a header "
                                    "(--session-header) and hash on it (nginx: `hash $http_x_session_id consistent`)."),
    "balancer_breaks": N_("Every check held directly on one replica, and a check broke through the balancer: the routing, or "
                          "what the balancer does to requests, breaks the sessions, not the model."),
    "model_breaks": N_("The check broke directly on one replica as well: the model or its config breaks sessions, whatever "
                       "the routing. Fix the model first, then check through the balancer again."),
    "held": N_("Every check held through the balancer and directly on one replica."),
    "not_exercised": N_("Every check held through the balancer and directly on one replica, but the routing was not exercised:"),
    "direct_only_broke": N_("Every check held through the balancer, and one broke directly on one replica: the model answers "
                            "differently from run to run; look at that run's verdicts."),
}
# Why the routing was not exercised (app/checker/engine/routing.py); its advice is in WITNESS_ADVICE.
ROUTING_NOT_EXERCISED = {
    "one_replica_served": N_("only {serving:count} of the {replicas:count} replicas served requests, so nothing shows how the "
                             "balancer routes one sequence's requests across replicas"),
    "no_statistics": N_("the replicas' statistics did not say how many requests each served, so nothing shows that more than "
                        "one served"),
}
REVIEW_FAILED = N_("The config review found {n:count} error(s): the check fails (--allow-review-errors lets the verdicts alone "
                   "decide).")
REVIEW_ALLOWED = N_("The config review found {n:count} error(s); --allow-review-errors: they do not fail the check.")
# What the CLI's export of the failing sessions wrote (app/cli.py).
EXPORT_WROTE = N_("wrote {path:text}: {n:count} failing sessions as perf_analyzer --input-data, their lone references as "
                  "validation_data")
EXPORT_NOTHING = N_("no session failed: nothing written to {path:text}")


def summary_lines(result: CheckResult, _: Words) -> list[str]:
    """The CLI's account of a check (app/checker/engine/run.CheckResult)."""
    f = result.facts
    lines = [_.render(
        N_("Checked {model:text} version {version:text} on {url:text} ({where:text}): scheduler {scheduler:text}, "
           "{instances:instances}; {requests:requests} in {wall:seconds}"),
        model=f.name, version=f.version or "–", url=result.url, where=_(WHERE[result.where]), scheduler=f.scheduler,
        instances=f.instances, requests=result.requests, wall=result.wall_s)]
    if f.sequence:
        lines.append(_.render(N_("capacity {capacity:sequences} ({instances:count} × {slots:slots}), idle timeout {idle:seconds}"),
                              capacity=f.capacity, instances=f.instances, slots=f.slots_per_instance, idle=f.idle_timeout_us / 1e6))
    lengths = result.tables.lengths
    source = _(SOURCES[result.tables.input_source])
    if min(lengths) == max(lengths):
        lines.append(_.render(N_("{sessions:sessions} of {steps:steps}, inputs {source:text}"), sessions=len(lengths), steps=lengths[0],
                              source=source))
    else:
        lines.append(_.render(N_("{sessions:sessions} of {low:count} to {high:steps}, inputs {source:text}"), sessions=len(lengths),
                              low=min(lengths), high=max(lengths), source=source))
    lines += shape_lines(result.inputs, _)
    if getattr(result, "streams", None) is not None:
        lines += streams.summary_lines(result, _)
    ignored = result.tables.outputs[~result.tables.outputs["compared"]]
    if len(ignored):
        lines.append(_.render(N_("left out: {names:text}"), names=", ".join(ignored["name"])))
    for tol in result.judgement.tolerances:
        if tol.source != "exact":
            lines.append(_.render(N_("{output:text} ({datatype:text}): tolerance {value:text} ({source:text}; noise between the lone runs {noise:text})"),
                                  output=tol.output, datatype=tol.datatype, value=number(tol.value), source=_(TOLERANCE_SOURCES[tol.source]),
                                  noise=number(tol.noise)))
    lines.append("")
    for v in result.verdicts:
        lines.append(f"{_(VERDICTS[v.verdict]):8} {check_name(v.check, v.variant, _)}")
        lines.append(f"         {verdict_sentence(v, _)}")
    for d in result.judgement.diagnoses:
        lines += ["", _(DIAGNOSES[d["code"]])]
    for note in note_lines(result.judgement.notes, _):
        lines += ["", note]
    refusals = result.judgement.refusals
    if len(refusals):
        lines.append("")
        for cause, group in refusals.groupby("cause"):
            lines.append(_.render(N_("{n:requests} refused: {cause:text}; Triton said `{error:text}`"),
                                  n=len(group), cause=_(REFUSAL_CAUSES[cause]), error=group.iloc[0]["error"]))
    lines += routing_lines(result, _)
    lines += ["", _.render(N_("Config review: {n:findings}"), n=len(result.review)),
              review_version_line(result.triton_version, _, live=True)]
    lines += _finding_lines(result.review, _)
    return lines


def routing_lines(result: CheckResult, _: Words) -> list[str]:
    """Through a balancer (--replica): how the replicas' statistics say the traffic spread, the
    direct run's outcome, and the routing diagnosis. Empty for a check on one server."""
    r = result.routing
    if r is None:
        return []
    lines = ["", _.render(N_("Through the balancer {url:text} over {transport:text}, session header {header:text}:"), url=r.balancer,
                          transport=r.transport, header=r.session_header or "–")]
    for replica in r.replicas:
        if replica.served is None:
            lines.append(_.render(N_("  replica {url:text}: its statistics did not say"), url=replica.url))
        else:
            lines.append(_.render(N_("  replica {url:text} served {n:requests}"), url=replica.url, n=replica.served))
    lines.append(witness_line(r.witness, len(r.replicas), _))
    direct = r.direct
    broken = [v for v in direct.verdicts if v.verdict == "broken"]
    lines.append(_.render(N_("Directly on {url:text}: {held:count} of {all:count} checks held, {broken:count} broke"), url=direct.url,
                          held=sum(v.verdict == "held" for v in direct.verdicts), all=len(direct.verdicts), broken=len(broken)))
    diagnosis = _(ROUTING[r.diagnosis])
    if r.not_exercised:
        w = r.witness
        diagnosis += " " + _.render(ROUTING_NOT_EXERCISED[w["why"]], serving=w["replicas_serving"], replicas=len(r.replicas))
        diagnosis += _(N_("; ")) + _(WITNESS_ADVICE[w["advice"]]) if w.get("advice") else ""
    lines += ["", diagnosis]
    return lines


def witness_line(witness: dict[str, Any], replicas: int, _: Words) -> str:
    """The routing's witness (app/checker/engine/routing.py): how many replicas served, and
    how many sequences reached more than one, where their logs say."""
    if witness.get("source") == "log":
        return _.render(N_("  {serving:count} of {replicas:count} replicas served; {split:count} of {placed:count} sequences split "
                           "across replicas (their logs)"), serving=witness["replicas_serving"], replicas=replicas,
                        split=witness["sequences_split"], placed=witness["sequences_placed"])
    return _.render(N_("  {serving:count} of {replicas:count} replicas served (their statistics; which replica served each sequence "
                       "is known only from their logs: --replica-log)"), serving=witness.get("replicas_serving") or 0, replicas=replicas)


def shape_lines(used: InputsUsed, _: Words) -> list[str]:
    """Each input with variable dimensions (app/checker/engine/inputs.InputsUsed): the shapes it was
    sent with and what sized them: --shape, the data file, or the sizes the checker drew."""
    lines = []
    for shape in used.shapes:
        if shape.sized_by == "model":
            continue
        if shape.smallest == shape.largest:
            shapes = dims_text(shape.smallest)
        else:
            shapes = _.render(N_("{smallest:text} to {largest:text}"), smallest=dims_text(shape.smallest), largest=dims_text(shape.largest))
        how = SIZED_BY[used.sizes.per if shape.sized_by == "drawn" and used.sizes else shape.sized_by]
        sizes = used.sizes.to_json() if used.sizes else {}
        lines.append(_.render(N_("input {name:text} {dims:text}: {shapes:text}, {how:text}"), name=shape.name, dims=dims_text(shape.dims),
                              shapes=shapes, how=_.render(how, **sizes)))
    return lines


def outcome_lines(result: CheckResult, _: Words) -> list[str]:
    """The outcome the exit status gives: every check held or one broke, and whether the review's errors fail it."""
    if "checks" in result.failed_by or not result.not_exercised:
        lines = [_(OUTCOME[1 if "checks" in result.failed_by else 0])]
    else:  # never "every check held" when one was not exercised
        lines = [_.render(OUTCOME_NOT_EXERCISED, n=len(result.not_exercised), exit=result.exit_code)]
    errors = len(result.review_errors)
    if errors:
        lines.append(_.render(REVIEW_FAILED if "review" in result.failed_by else REVIEW_ALLOWED, n=errors))
    return lines


def junit_message(v: CheckVerdict, _: Words) -> str:
    """A JUnit test case's message: the check, its variant, and what the verdict says."""
    return f"{check_name(v.check, v.variant, _)}: {_(VERDICTS[v.verdict])}: {verdict_sentence(v, _)}"


def review_version_line(version: str | None, _: Words, live: bool = False) -> str:
    """Which Triton version the review judged the config for."""
    if version:
        return _.render(N_("reviewed for Triton {version:text}"), version=version)
    if live:
        return _(N_("the server reported no Triton version: the checks that depend on the release were not made"))
    return _.render(N_("no Triton version given (--triton-version, e.g. {example:text} for release 24.10): the checks that "
                       "depend on the release were not made"), example=LAB_TRITON_VERSION)


def review_lines(findings: dict[str, list[ReviewFinding]], _: Words, triton_version: str | None = None) -> list[str]:
    """The config review's findings per model (`batching-lab check --config`), after the version
    it reviewed for."""
    lines = [review_version_line(triton_version, _)]
    for model, found in findings.items():
        lines.append(_.render(N_("{model:text}: {n:findings}"), model=model, n=len(found)))
        lines += _finding_lines(found, _)
    return lines


def _finding_lines(found: list[ReviewFinding], _: Words) -> list[str]:
    """Each finding in the review's own words (app/checker/words/review.py): title, why, fix."""
    lines = []
    for finding in found:
        w = finding_words(finding, _)
        lines += [f"  {w.severity}: {w.title} ({finding.field})", f"    {w.why}", f"    {w.fix}"]
    return lines
