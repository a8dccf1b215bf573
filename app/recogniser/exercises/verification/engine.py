"""Verification before rollout: which model gives the same answers however its requests are batched?

The measure runs the lab's one verification engine, the deployment checker
(app/checker/engine/run.run_check, through app/live/rollout/engine.check, with lesson 7's short
options), on the three deployments the question needs: the recogniser under the sequence batcher
(the guide's sequence checks: what must hold), and the stateless sentiment model and the same
recogniser under the dynamic batcher (what must not be assumed). Its tables are the checks'
verdicts, diagnoses and tolerances; the judge decides from them alone, checking nothing itself.
The checker's results travel with the exercise's (Measured.checks), so the page shows each report.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from app.exercise_kit import Exercise, ExerciseJudgement, Finding, Measured, Number, Tables
from app.lab.observation import run_log, server_log
from app.lab.progress import Progress, Stage
from app.live.rollout import engine as rollout
from app.live.sentiment import engine as sentiment_case
from app.recogniser.engine import presets

if TYPE_CHECKING:
    from app.checker.engine import CheckResult
    from app.lab.deployment import Deployer
    from app.lab.server import LabServer
    from app.lab.traffic import Wait

EXERCISE = Exercise(
    name="verification",
    options=("both", "sentiment", "recogniser", "neither"),
    correct="sentiment",
)
# The deployments checked, in the order they run (codes of the tables' `deployment` column).
DEPLOYMENTS = ("sequence", "sentiment", "recogniser")
VERDICT_COLUMNS = ["deployment", "model", "check", "variant", "verdict", "reason", "compared", "wrong_steps", "difference", "output"]


class _Steps:
    """The bar: one step per deployment checked, moved along within it by the checker's request
    count; a wait in the run queue is shown in place. Called from the measuring (script) thread."""

    def __init__(self, progress: Progress | None, total: int):
        self.progress, self.total, self.index = progress, total, -1
        self.current: Stage | None = None  # the step under way: what the bar says while requests go out

    def __call__(self, code: str, **values: object) -> None:
        if code != "waiting":
            self.index += 1
            self.current = Stage(code, values)
        self._show(0, 0, Stage(code, values))

    def requests(self, done: int, planned: int, _stage: Stage) -> None:
        if self.current is not None:
            self._show(min(done, planned), planned, self.current)

    def _show(self, done: int, planned: int, stage: Stage) -> None:
        """The steps behind plus `done` of this step's `planned` requests, counted in requests."""
        if self.progress:
            per_step = planned or 1  # nothing planned (yet): the step has just begun
            total = self.total * per_step
            self.progress(min(max(self.index, 0) * per_step + done, total), total, stage)


def measure(server: LabServer, deployer: Deployer, progress: Progress | None = None) -> Measured:
    """The checker on each deployment, each loaded just before its check (a small stub budget
    may unload an idle one to make room for the next)."""
    steps = _Steps(progress, len(DEPLOYMENTS))
    window = server_log.LogWindow.start(server)
    results: dict[str, CheckResult] = {}

    def check(model: str) -> CheckResult:
        def waiting(place: Wait) -> None:
            steps("waiting", model=model, ahead=place.position, expected=place.expected_s)
        return rollout.check(server, model, progress=steps.requests, on_wait=waiting)

    fix = deployer.apply(presets.get("the_fix").settings).model
    steps("sequence", model=fix)
    results["sequence"] = check(fix)
    deployer.ensure(sentiment_case.MODEL)
    steps("sentiment", model=sentiment_case.MODEL)
    results["sentiment"] = check(sentiment_case.MODEL)
    mistake = deployer.apply(presets.get("the_mistake").settings).model
    steps("recogniser", model=mistake)
    results["recogniser"] = check(mistake)
    return Measured(tables=tabulate(results), checks=results, log=_log(window, results))


def tabulate(results: dict[str, CheckResult]) -> Tables:
    """The judge's tables from the checker's results ({deployment code: engine.CheckResult})."""
    verdicts, diagnoses, tolerances = [], [], []
    for code, result in results.items():
        for v in result.verdicts:
            first = v.values.get("first") or {}
            # held: the largest difference from the reference; broken: the first one beyond tolerance
            # (a finite verdict's first NaN or Inf has no difference: None, as nothing compared)
            difference = v.values.get("largest_difference", first.get("difference"))
            verdicts.append({
                "deployment": code, "model": result.facts.name, "check": v.check, "variant": v.variant, "verdict": v.verdict,
                "reason": v.reason, "compared": int(v.values.get("compared", 0)), "wrong_steps": int(v.values.get("wrong_steps", 0)),
                "difference": float("nan") if difference is None else float(difference),
                "output": v.values.get("largest_output") or first.get("output") or "",
            })
        diagnoses += [{"deployment": code, "code": d["code"], "checks": ", ".join(d["checks"])} for d in result.judgement.diagnoses]
        tolerances += [{"deployment": code, "output": t.output, "datatype": t.datatype, "value": t.value, "source": t.source}
                       for t in result.judgement.tolerances]
    return {"verdicts": pd.DataFrame(verdicts, columns=VERDICT_COLUMNS),
            "diagnoses": pd.DataFrame(diagnoses, columns=["deployment", "code", "checks"]),
            "tolerances": pd.DataFrame(tolerances, columns=["deployment", "output", "datatype", "value", "source"])}


def _log(window: server_log.LogWindow, results: dict[str, CheckResult]) -> run_log.RunLog:
    """The server's lines for the checked models, their one-instance copies and the IDs the checks sent."""
    models = {m for r in results.values() for m in r.tables.phases["model"]} | {r.facts.name for r in results.values()}
    corrids = {c for r in results.values() for c in r.tables.steps["corrid"] if c}
    return run_log.capture(window, models, corrids)


def _of(table: pd.DataFrame, deployment: str) -> pd.DataFrame:
    return table[table["deployment"] == deployment]


def _same(verdicts: pd.DataFrame) -> bool:
    """The same answers as the reference in every check: none broke, and at least one compared
    answers (checks that were all skipped show nothing)."""
    return bool((verdicts["verdict"] != "broken").all() and (verdicts["verdict"] == "held").any())


def _counts(verdicts: pd.DataFrame) -> dict[str, Number]:
    tally = verdicts["verdict"].value_counts()
    return {"model": str(verdicts["model"].iloc[0]) if len(verdicts) else "", "checks": len(verdicts),
            **{name: int(tally.get(name, 0)) for name in ("held", "broken", "skipped")}}


def _float_tolerance(tolerances: pd.DataFrame) -> float:
    """The tolerance the checker compared the deployment's float outputs with (0 when all are exact)."""
    return float(tolerances["value"].max()) if len(tolerances) else 0.0


def judge(tables: Tables) -> ExerciseJudgement:
    """Which model gave the same answers, from the checker's verdicts on each deployment."""
    verdicts, diagnoses = tables["verdicts"], tables["diagnoses"]
    per = {code: _of(verdicts, code) for code in DEPLOYMENTS}
    same = {code: _same(rows) for code, rows in per.items()}
    outcome = {(True, False): "sentiment", (True, True): "both", (False, True): "recogniser"}.get(
        (same["sentiment"], same["recogniser"]), "neither")
    sentiment = per["sentiment"]
    # held: the largest difference any check saw; broken: the first beyond tolerance (NaN: nothing compared)
    diff = float(sentiment.loc[sentiment["verdict"] != "skipped", "difference"].max())
    tolerance = _float_tolerance(_of(tables["tolerances"], "sentiment"))
    recogniser = per["recogniser"]
    wrong = int(recogniser.loc[recogniser["verdict"] == "broken", "wrong_steps"].sum())
    compared = int(recogniser.loc[recogniser["verdict"] == "broken", "compared"].sum())
    findings = [
        Finding("sequence", {"as_expected": same["sequence"], **_counts(per["sequence"])}),
        Finding("sentiment", {"as_expected": same["sentiment"], **_counts(sentiment), "diff": diff, "tolerance": tolerance}),
        Finding("recogniser", {"as_expected": not same["recogniser"], **_counts(recogniser)}),
    ]
    numbers = {
        "checks_held": int((verdicts["verdict"] == "held").sum()),
        "checks_broken": int((verdicts["verdict"] == "broken").sum()),
        "checks_skipped": int((verdicts["verdict"] == "skipped").sum()),
        "sequence_held": same["sequence"],
        "sentiment_same": same["sentiment"],
        "recogniser_same": same["recogniser"],
        "recogniser_wrong_steps": wrong,
    }
    keeps_state = bool(((diagnoses["deployment"] == "recogniser") & (diagnoses["code"] == "keeps_state")).any())
    explanation = [
        Finding("why_stateless", {"diff": diff, "tolerance": tolerance}) if same["sentiment"] else Finding("why_sentiment_differed"),
        (Finding("why_recogniser_held") if same["recogniser"]
         else Finding("why_recogniser", {"wrong": wrong, "compared": compared}) if keeps_state
         else Finding("why_recogniser_broke")),
        Finding("why_sequence_passed") if same["sequence"] else Finding("why_sequence_failed"),
        Finding("why_every_deployment"),
        Finding("why_your_own"),  # the same checker on the learner's own model: the "Check a deployment" page
    ]
    return ExerciseJudgement(outcome=outcome, numbers=numbers, findings=findings, explanation=explanation,
                     tables={"verdicts": verdicts})
