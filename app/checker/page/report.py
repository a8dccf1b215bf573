"""A deployment check's result on the page: the outcome, the checks table, refusals, the config
review with its lesson links, the figures and the two downloads (the engine's JSON and JUnit XML,
the bytes `batching-lab check --json/--junit-xml` writes). Everything is drawn from the engine's
CheckResult and worded when the page is drawn, so it reads in whichever language is chosen.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from app.checker import figures as charts
from app.checker import words as check_words
from app.checker.engine import check_report_text, junit_xml
from app.checker.words import page as words
from app.checker.words.review import finding_words
from app.i18n import N_, Words
from app.lab.progress import Stage
from app.quiz.links import lesson_ref
from app.ui import chart, course
from app.ui.language import _, t
from app.ui.lesson_link import show_lesson_link

if TYPE_CHECKING:
    from app.checker.engine import CheckResult, ReviewFinding
    from app.lab.traffic import Wait

RESULT_KEY = "check-last-run"  # where the page keeps the last check (a CheckRun) for this browser session
SEVERITY_BOX = {"error": st.error, "warning": st.warning, "info": st.info}


@dataclass
class CheckRun:
    result: CheckResult
    data_name: str | None = None  # the uploaded data file, when the inputs came from one


@contextmanager
def progress_bar(model: str) -> Iterator[tuple[Callable[[int, int, Stage], None], Callable[[Wait], None]]]:
    """One bar for a check running in this script thread: yields (progress, on_wait) as
    engine.run_check takes them, the phase and the request count, or the check's place in the run
    queue while another run holds the model; the bar is gone when the check ends."""
    _t = t()
    bar = st.progress(0.0, text=_t.render(words.STARTING, model=model))

    def progress(done: int, planned: int, stage: Stage) -> None:
        bar.progress(min(done / planned, 1.0) if planned else 0.0,
                     text=_t.render(words.PROGRESS, phase=_t(check_words.PHASES[stage.code]),
                                    variant=_t(check_words.VARIANTS[stage.values["variant"]]), done=done, planned=planned))

    def waiting(place: Wait) -> None:
        bar.progress(0.0, text=_t.render(words.WAITING, model=model, ahead=place.position, expected=place.expected_s))

    try:
        yield progress, waiting
    finally:
        bar.empty()


def downloads(result: CheckResult, _: Words) -> tuple[str, str]:
    """(JSON, JUnit XML) exactly as the CLI writes them for `result`, the XML's messages in _'s language."""
    return check_report_text(result), junit_xml(result, describe=lambda v: check_words.junit_message(v, _))


def checks_table(result: CheckResult, _: Words) -> pd.DataFrame:
    """One row per verdict: what it is, and for a broken one where it first diverged and by how much."""
    c = words.COLUMNS
    rows = []
    for v in result.verdicts:
        first = v.values.get("first") if v.verdict == "broken" else None
        execution = (first or {}).get("execution")
        rows.append({
            _(c["verdict"]): _(check_words.VERDICTS[v.verdict]),
            _(c["check"]): _(check_words.CHECKS[v.check]),
            _(c["variant"]): _(check_words.VARIANTS[v.variant]),
            _(c["session"]): _.render(N_("{session:session}"), session=first["session"]) if first else "",
            _(c["step"]): _.render(N_("{step:count}"), step=first["step"] + 1) if first else "",
            _(c["output"]): first["output"] if first else "",
            _(c["difference"]): check_words.number(first["difference"]) if first else "",
            _(c["tolerance"]): check_words.number(first["tolerance"]) if first else "",
            _(c["execution"]): _execution(execution, _) if execution else "",
            _(c["mates"]): _mates(execution, _) if execution else "",
            _(c["details"]): check_words.verdict_sentence(v, _),
        })
    return pd.DataFrame(rows)


def _execution(execution: dict[str, Any], _: Words) -> str:
    return _.render(words.EXECUTION, batch=execution["batch"], lane=words.lane(execution["lane"], _))


def _mates(execution: dict[str, Any], _: Words) -> str:
    if not execution["shared_with"]:
        return _(words.ALONE_IN_BATCH)
    return ", ".join(_.render(N_("{session:session} step {step:count}"), session=o["session"], step=o["step"] + 1)
                     for o in execution["shared_with"])


def diagnosis_markdown(result: CheckResult, _: Words) -> str:
    """Each broken sequence check's diagnosed sessions, their class in words (a Markdown list per
    check); empty where no check was diagnosed."""
    blocks = []
    for v in result.verdicts:
        lines = check_words.diagnosis_lines(v, _)
        if lines:
            title = check_words.check_name(v.check, v.variant, _)
            blocks.append(f"**{title}**: {lines[0]}\n" + "\n".join(f"- {line}" for line in lines[1:]))
    return "\n\n".join(blocks)


def refusals_table(result: CheckResult, _: Words) -> pd.DataFrame:
    """Every request the server refused, with what caused it and Triton's own message."""
    c = words.REFUSAL_COLUMNS
    return pd.DataFrame([{
        _(c["phase"]): _(check_words.PHASES[r.phase]),
        _(c["variant"]): _(check_words.VARIANTS[r.variant]),
        _(c["session"]): _.render(N_("{session:session}"), session=r.session),
        _(c["step"]): _.render(N_("{step:count}"), step=r.step + 1),
        _(c["corrid"]): str(r.corrid),
        _(c["cause"]): _(check_words.REFUSAL_CAUSES[r.cause]),
        _(c["error"]): str(r.error),
    } for r in result.judgement.refusals.itertuples()], columns=[_(name) for name in c.values()])


def summary(run: CheckRun, _: Words) -> list[str]:
    result, f = run.result, run.result.facts
    lines = [_.render(words.SUMMARY, model=f.name, version=f.version or "–", url=result.url, where=_(check_words.WHERE[result.where]),
                      scheduler=f.scheduler, instances=f.instances, requests=result.requests, wall=result.wall_s)]
    if f.sequence:
        lines.append(_.render(words.SEQUENCE_SUMMARY, capacity=f.capacity, instances=f.instances, slots=f.slots_per_instance,
                              idle=f.idle_timeout_us / 1e6))
    lengths = result.tables.lengths
    source = (_.render(words.DATA_FILE_SOURCE, name=run.data_name) if run.data_name
              else _(check_words.SOURCES[result.tables.input_source]))
    if min(lengths) == max(lengths):
        lines.append(_.render(words.INPUTS_SUMMARY_ONE_LENGTH, sessions=len(lengths), steps=lengths[0], source=source))
    else:
        lines.append(_.render(words.INPUTS_SUMMARY, sessions=len(lengths), low=min(lengths), high=max(lengths), source=source))
    lines += check_words.shape_lines(result.inputs, _)
    if result.streams is not None:  # a decoupled model's: how its streams were sent
        lines += check_words.streams.summary_lines(result, _)
    outputs = result.tables.outputs
    for by, group in outputs[outputs["ignored_by"] != ""].groupby("ignored_by"):
        lines.append(_.render(words.LEFT_OUT, names=", ".join(group["name"]), why=_(words.LEFT_OUT_BY[by])))
    for tol in result.judgement.tolerances:
        if tol.source != "exact":
            lines.append(_.render(N_("{output:text} ({datatype:text}): tolerance {value:text} ({source:text}; noise between the lone "
                                     "runs {noise:text})"), output=tol.output, datatype=tol.datatype, value=check_words.number(tol.value),
                                  source=_(check_words.TOLERANCE_SOURCES[tol.source]), noise=check_words.number(tol.noise)))
    return lines


def show(run: CheckRun, key: str = "check") -> None:
    """The check page's last result, under its heading."""
    st.divider()
    st.header(_("Results of the last check"))
    body(run, key)


def body(run: CheckRun, key: str = "check") -> None:
    """A check's report without a heading of its own, for any page that runs the checker (the
    check page, lesson 7's live element, the verification exercise); `key` keeps its widgets apart."""
    result, words_ = run.result, t()
    st.caption("  \n".join(summary(run, words_)))
    # a check not exercised is no success: it is shown apart, as a warning, whatever exit status was chosen for it
    shown = {"broken": st.error, "not_exercised": st.warning}.get(result.outcome, st.success)
    shown(" ".join(check_words.outcome_lines(result, words_)))
    for diagnosis in result.judgement.diagnoses:
        st.warning(_(check_words.DIAGNOSES[diagnosis["code"]]))
    for note in check_words.note_lines(result.judgement.notes, words_):
        st.info(note)

    st.subheader(_("Checks"))
    st.dataframe(checks_table(result, words_), hide_index=True, width="stretch", key=f"{key}-checks")
    diagnosed = diagnosis_markdown(result, words_)
    if diagnosed:
        st.markdown("**" + _("What the broken sessions show, replayed alone") + "**")
        st.markdown(diagnosed)
    if len(result.judgement.refusals):
        st.markdown("**" + _("Requests the server refused (apart from wrong answers)") + "**")
        st.dataframe(refusals_table(result, words_), hide_index=True, width="stretch", key=f"{key}-refusals")

    st.subheader(_("Config review"))
    _review(result.review)

    st.subheader(_("Figures"))
    chart.show(charts.timeline(result, words_), charts.timeline_summary(result, words_), key=f"{key}-timeline", width="stretch")
    for index, drawn in enumerate(charts.errors(result, words_)):
        chart.show(drawn.figure, drawn.summary, key=f"{key}-errors-{index}", width="stretch")

    json_text, xml_text = downloads(result, words_)
    left, right, _spacer = st.columns([1, 1, 2])
    name = result.facts.name
    left.download_button(_("Download the report (JSON)"), json_text, file_name=f"check-{name}.json", mime="application/json",
                         key=f"{key}-json", width="stretch")
    right.download_button(_("Download the checks (JUnit XML)"), xml_text, file_name=f"check-{name}.xml", mime="application/xml",
                          key=f"{key}-junit", width="stretch")


def _review(findings: list[ReviewFinding]) -> None:
    """Each finding: its severity, title and field, why it matters, the fix, and the lesson section that teaches it."""
    words_ = t()
    if not findings:
        st.success(_("The config review found nothing to report."))
        return
    lessons = course.lessons_or_error()
    for finding in findings:
        w = finding_words(finding, words_)
        box = SEVERITY_BOX.get(str(finding.severity), st.info)
        box(words_.render(N_("**{severity:text}: {title:text}** (`{field:text}`)  \n{why:text}  \n*{fix:text}*"),
                          severity=w.severity, title=w.title, field=finding.field, why=w.why, fix=w.fix))
        show_lesson_link(lesson_ref(w.lesson, lessons))
