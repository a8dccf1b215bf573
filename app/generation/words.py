"""English templates for the generation engine's codes and the CLI's run summary (gettext N_;
Chinese in app/i18n/locale/zh). The engine returns codes and numbers; this says them."""
from __future__ import annotations

from typing import Any

from app.generation.engine import GenerationRun, RunFigures, analysis
from app.i18n import N_, Words

# Problem codes the engine raises (workload.Workload, deployments.GeneratorSettings, the driver's
# RunUnfinished), by code. Pages and the CLI pass them to app.text.errors.explain as `wording`.
PROBLEMS = {
    "gen_requests_range": N_("requests must be {low:count} to {high:count}: got {value:text}"),
    "gen_gap_range": N_("the mean gap between arrivals must be {low:count} to {high:count} ms: got {value:text}"),
    "gen_tokens_range": N_("token lengths must satisfy {low:count} ≤ shortest ≤ longest ≤ {high:count}: got {min:text} to "
                           "{max:text}"),
    "gen_batching_unknown": N_("batching must be one of {choices:text}, not '{value:text}'"),
    "gen_state_key_unknown": N_("state key must be one of {choices:text}, not '{value:text}'"),
    "gen_setting_range": N_("{setting:text} must be {low:text} to {high:text}: got {value:text}"),
    "gen_run_unfinished": N_("{model:text} still had requests open {seconds:count} s after the last one was sent "
                             "(requests {requests:text}): the server answers, but those streams never ended"),
}


def _continued(row: Any, _: Words) -> str:
    if row.continued_owner == 0:
        return _("it continued an empty state cell")
    if row.continued_index < 0:
        return _("it continued the state of a request outside this run")
    return _.render(N_("it continued the state of request {other:count}"), other=row.continued_index)


def summary_lines(run: GenerationRun, _: Words) -> list[str]:
    """What `batching-lab run --model gen_*` prints: the run's figures, then each wrong stream."""
    requests = analysis.requests_table(run.trace, run.plans)
    f: RunFigures = analysis.run_figures(requests, run.trace, run.max_batch_size)
    lines = [
        _.render(N_("run {run:text} on {model:text}: {requests:count} requests, {tokens:count} tokens in {wall:seconds}, "
                    "{rate:number} tokens/s"),
                 run=run.run_id, model=run.model, requests=f.requests, tokens=f.tokens, wall=f.wall_s, rate=f.tokens_per_s),
        _.render(N_("time to first token: median {p50:ms}, 95th percentile {p95:ms}; whole request: median {e50:ms}, "
                    "95th percentile {e95:ms}"),
                 p50=f.ttft_p50_ms, p95=f.ttft_p95_ms, e50=f.e2e_p50_ms, e95=f.e2e_p95_ms),
        _.render(N_("{executions:count} executions, {passes:count} model steps, rows used per step: {fill:percent} on average"),
                 executions=f.executions, passes=f.passes, fill=f.mean_fill),
        _.render(N_("streams as expected: {correct:count} of {requests:count}"), correct=f.correct, requests=f.requests),
    ]
    for row in requests.itertuples():
        if row.status == analysis.CANCELLED:
            lines.append(_.render(N_("request {index:count}: cancelled after {tokens:count} tokens"),
                                  index=row.index, tokens=row.tokens))
        elif not row.correct:
            lines.append(_.render(N_("request {index:count}: wrong from token {step:count}; {why:text}"),
                                  index=row.index, step=row.first_wrong_step, why=_continued(row, _)))
    return lines
