"""Each recogniser chart's message in a sentence beside it, for a learner who cannot tell its colours apart
or reads the page with a screen reader: the lab's figures (app/recogniser/figures.py) and the replay (replay.py).
The exercises' are in app/recogniser/exercises/<name>/words.py.

Every sentence only reads numbers off the chart it sits beside, so CHART_SUMMARIES is what
tests/content/test_coverage.py leaves out of the text map (lessons/COVERAGE.md says why).
English templates marked with N_(); fields are filled by the chart modules from the same tables
the figures draw.
"""
from __future__ import annotations

from app.i18n import N_

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
    # figures.state_cells
    "state_cells": N_("State cells the model held: {instances:text}."),
    "state_cells_item": N_("instance {instance:text} at most {peak:count}, {last:count} at the end, {evicted:count} evicted"),
    # replay.replay_figure
    "replay": N_("{batches:count} batches ran in {instances:count} instance(s) × {slots:count} slots; chunks that read "
                 "state someone else wrote: {foreign:count}."),
    "replay_path": N_("{session:session} ran its {chunks:count} chunks in {cells:count} cell(s)."),
}
