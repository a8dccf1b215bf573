"""What each chart of the app shows, said in a sentence beside it, for a learner who cannot tell
its colours apart or reads the page with a screen reader: the lab's figures (app/recogniser/figures.py),
the replay (replay.py), the checker's (checker.py), the quiz item chart (item_analysis.py) and the
presenter's vote chart (app/presenter/figures.py). The exercises' are in app/recogniser/exercises/<name>/words.py.

Every sentence only reads numbers off the chart it sits beside, so CHART_SUMMARIES is what
tests/content/test_coverage.py leaves out of the text map (lessons/COVERAGE.md says why).
English templates marked with N_(); fields are filled by the chart modules from the same tables
the figures draw.
"""
from __future__ import annotations

from app.i18n import N_

# Between the items of a list in a sentence ("session 2, session 5"), and between clauses that hold commas.
LIST_SEPARATOR = N_(", ")
CLAUSE_SEPARATOR = N_("; ")
MORE = N_("{list:text} and {n:count} more")

CHART_SUMMARIES = {
    # figures.slot_timeline / replay.side_by_side
    "timeline": N_("{chunks:count} chunks of {sessions:sessions} ran in {rows:count} instance × slot rows; "
                   "the longest wait in the queue was {wait:ms}."),
    "timeline_wrong": N_("Letters that came back wrong: {n:count}, in {sessions:text}."),
    "timeline_right": N_("Every letter came back right."),
    "timeline_padding": N_("Padding rows (READY=0) in the same batches: {n:count}."),
    "timeline_other_rows": N_("Rows of another run in the same batches: {n:count}."),
    # figures.batch_sizes
    "batch_sizes": N_("The server counted {executions:count} executions, most often of batch size {usual:count}, the "
                      "largest of {largest:count}; this run's trace counted {traced:count}."),
    # figures.queue_vs_compute
    "queue_vs_compute": N_("Mean time per request: {sources:text}."),
    "queue_vs_compute_item": N_("{source:text}: {queue:ms} waiting, {compute:ms} computing"),
    # figures.latency_percentiles
    "latency": N_("The highest p99 was {p99:ms} ({source:text}, sessions of {length:text}); the lowest p50 was "
                  "{p50:ms} ({low_source:text}, sessions of {low_length:text})."),
    # figures.instance_work
    "instances": N_("Work per instance: {instances:text}."),
    "instances_item": N_("instance {instance:text} ran {requests:count} requests in {executions:count} executions "
                         "(busy {busy:ms}, mean batch {batch:number})"),
    # app/live/sentiment/figures.throughput
    "throughput": N_("Reviews scored per second: {runs:text}."),
    "throughput_item": N_("{mode:text} {rate:count}"),
    "throughput_gain": N_("The fastest way was {ratio:ratio} the slowest."),
    # app/live/sentiment/figures.server_batches
    "server_batches": N_("Batches the server formed: {runs:text}."),
    "server_batches_item": N_("{mode:text}: {reviews:count} reviews in {executions:count} batches, the largest of "
                              "{largest:count}"),
    # figures.state_cells
    "state_cells": N_("State cells the model held: {instances:text}."),
    "state_cells_item": N_("instance {instance:text} at most {peak:count}, {last:count} at the end, {evicted:count} evicted"),
    # replay.replay_figure
    "replay": N_("{batches:count} batches ran in {instances:count} instance(s) × {slots:count} slots; chunks that read "
                 "state someone else wrote: {foreign:count}."),
    "replay_path": N_("{session:session} ran its {chunks:count} chunks in {cells:count} cell(s)."),
    # checker.timeline
    "check_timeline": N_("{executions:count} executions of {sessions:sessions} on {lanes:count} rows; "
                         "steps that differed from their reference: {diverged:count}."),
    # checker.timeline of a decoupled model
    "check_stream_timeline": N_("{requests:requests}, each sent alone twice and staggered once ({streams:streams}): "
                                "{alone:replies} heard alone, {staggered:replies} staggered; responses that differed from "
                                "their lone stream: {diverged:count}; streams given up or failed: {stopped:count}."),
    # checker.errors
    "check_errors": N_("{check:text} — lines beyond their tolerance: {lines:count}; the largest difference was "
                       "{largest:text} ({session:session}, {output:text}, step {step:count})."),
    "check_errors_no_reply": N_("{check:text} — lines beyond their tolerance: {lines:count}; steps with no reply to "
                                "compare: {missing:count}."),
    # item_analysis.option_counts
    "options": N_("Answered by {n:count}; choices of a right option: {right:count}, of a wrong one: {wrong:count}."),
    "options_wrong": N_("The wrong option chosen most: “{option:text}” ({n:count})."),
    # app/presenter/figures.votes_figure
    "votes": N_("{n:count} votes: {options:text}."),
    "votes_item": N_("“{option:text}” {n:count}"),
    "votes_right": N_("Right: {options:text}."),
}
