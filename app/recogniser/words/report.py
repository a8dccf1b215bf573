"""A run's plain-text summary for the CLI (app/lab/traffic/report.py numbers), in the reader's language."""
from __future__ import annotations

import pandas as pd

from app.i18n import N_, Words
from app.lab import traffic
from app.lab.records import RunResult
from app.recogniser.words.transports import transport


def waits_and_refusals(result: RunResult, _: Words) -> list[str]:
    found = traffic.waits_and_refusals(result)
    lines = []
    if "waited" in found:
        lines.append(_.render(N_("waited for a slot: {waited:count} of {first_chunks:count} sessions queued their "
                                 "first chunk over {limit:ms} (longest {longest:ms})"),
                              limit=traffic.WAITED_MS, longest=found["longest_ms"], **found))
    if "refused" in found:
        lines.append(_.render(N_("refused: {refused:count} session(s); the server said, e.g.: `{refused_example:text}`"), **found))
    if "no_answer" in found:
        lines.append(_.render(N_("no answer: {no_answer:count} session(s) lost a request on the way (did the "
                                 "server stop?), e.g.: {no_answer_example:text}"), **found))
    return lines


def summary_table(result: RunResult, _: Words) -> str:
    s = result.sessions
    scenario = result.scenario
    values = dict(run=result.run_id, model=scenario.model, transport=transport(scenario.transport, _),
                  in_flight=scenario.in_flight, sessions=len(s), requests=len(result.requests), wall=result.wall_s)
    if scenario.in_flight > 1:
        head = _.render(N_("run {run:text} on {model:text} over {transport:text}, {in_flight:count} chunks in flight per session: "
                           "{sessions:count} sessions, {requests:count} requests, {wall:seconds}"), **values)
    else:
        head = _.render(N_("run {run:text} on {model:text} over {transport:text}: {sessions:count} sessions, "
                           "{requests:count} requests, {wall:seconds}"), **values)
    # _() outside the f-string: Babel does not look inside f-strings on Python < 3.12.
    verdict, first, expected, received = _("verdict"), _("first wrong"), _("expected"), _("received")
    lines = [head, f"{'#':>3} {verdict:8} {first:>11}  {expected:30} {received}"]
    for row in s.itertuples():
        first = "-" if pd.isna(row.first_wrong) else str(int(row.first_wrong) + 1)
        lines.append(f"{row.session + 1:>3} {_.render('{v:verdict}', v=row.verdict):8} {first:>11}  "
                     f"{row.expected_text[:30]:30} {row.received_text[:30]}")
    lines.append(_.render(N_("verdicts: {counts:verdicts}"), counts=s["verdict"].value_counts().to_dict()))
    lines += waits_and_refusals(result, _)
    srv = result.server
    lines.append(_.render(
        N_("server: {inferences:count} inferences in {executions:count} executions (average batch {batch:number}), mean "
           "queue {queue:ms}, mean compute {compute:ms}; batch sizes {sizes:text}"),
        inferences=srv["inference_count"], executions=srv["execution_count"], batch=srv["average_batch_size"],
        queue=srv["mean_queue_us"] / 1000, compute=srv["mean_compute_us"] / 1000, sizes=srv["batch_sizes"]))
    return "\n".join(lines)
