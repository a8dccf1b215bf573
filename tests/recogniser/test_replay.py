"""Replay and side-by-side figures, built from real runs of the mistake and the fix on the
session's Triton. Every expectation is worked out here from the run's own trace (the requests
table), not from the module under test.
"""
from __future__ import annotations

import re

import pandas as pd
import pytest

from app.i18n import words
from app.lab.records import Traffic
from app.recogniser import replay
from app.recogniser.engine import presets
from app.recogniser.engine.judgement.verdicts import PADDING_OWNER
from tests.i18n.text_checks import english_runs, has_cjk
from tests.recogniser.test_figures import Marked

TRAFFIC = Traffic(sessions=6, chunks=10, seed=4)
INSTANCES, SLOTS = 2, 4  # both presets deploy 2 instances x 4 slots


@pytest.fixture(scope="module")
def runs(lab_server, deployer):
    out = {}
    for name in ("the_mistake", "the_fix"):
        applied, result = presets.run_preset(lab_server, deployer, name, traffic=TRAFFIC)
        assert result.traced, "the session's server writes a trace; the replay needs it"
        assert (applied.settings.instances, applied.settings.slots) == (INSTANCES, SLOTS)
        out[name] = result
    return out


def executed(requests: pd.DataFrame) -> pd.DataFrame:
    return requests[(requests["instance"] >= 0) & requests["exec_start"].notna()]


def trace_batches(requests: pd.DataFrame) -> list[set[tuple[int, int, int, int]]]:
    """The run's executions from its trace, in time order: {(session, chunk, instance, slot)} each."""
    groups = sorted(executed(requests).groupby(["instance", "exec_start"]), key=lambda g: (g[0][1], g[0][0]))
    return [{(int(r.session), int(r.chunk), int(r.instance), int(r.slot)) for r in g.itertuples()} for _key, g in groups]


def rows(trace) -> list[tuple]:
    data = trace.customdata if trace.customdata is not None else []
    return [tuple(row) for row in data]


def named(traces, name):
    found = [t for t in traces if t.name == name]
    assert len(found) == 1, [t.name for t in traces]
    return found[0]


def frame_trace(fig, frame, name):
    """A frame's trace by the name the figure's trace at that index carries."""
    index = [t.name for t in fig.data].index(name)
    return frame.data[list(frame.traces).index(index)]


def test_one_frame_per_execution_showing_exactly_the_chunks_it_ran(runs):
    for name, result in runs.items():
        fig = replay.replay_figure(result, instances=INSTANCES, slots=SLOTS)
        expected = trace_batches(result.requests)
        assert len(expected) > TRAFFIC.chunks, name  # several batches per chunk round, or the test proves little
        assert len(fig.frames) == len(expected), name
        shown = [{tuple(int(v) for v in row) for row in rows(frame_trace(fig, f, "chunk this batch ran"))} for f in fig.frames]
        assert shown == expected, name
        assert sum(len(s) for s in shown) == len(executed(result.requests)) == TRAFFIC.sessions * TRAFFIC.chunks
        # Each frame's running chunks are drawn in their own instance x slot cell.
        for frame in fig.frames:
            just = frame_trace(fig, frame, "chunk this batch ran")
            cells = {(round(b + 0.45), int(x)) for b, x in zip(just.base, just.x, strict=True)}
            assert cells == {(int(r[2]), int(r[3])) for r in rows(just)}


def test_every_cell_holds_the_last_chunk_that_ran_there(runs):
    result = runs["the_mistake"]
    fig = replay.replay_figure(result, instances=INSTANCES, slots=SLOTS)
    batches = trace_batches(result.requests)
    held: dict[tuple[int, int], tuple[int, int]] = {}
    for k, batch in enumerate(batches):
        for session, chunk, instance, slot in batch:
            held[instance, slot] = (session, chunk)
        cells = frame_trace(fig, fig.frames[k], "chunk a cell holds")
        assert len(cells.x) == INSTANCES * SLOTS
        for x, base, text in zip(cells.x, cells.base, cells.text, strict=True):
            cell = (round(base + 0.45), int(x))
            if cell in held:
                session, chunk = held[cell]
                assert text.startswith(f"<b>session {session + 1}, chunk {chunk + 1}</b>"), (k, cell, text)
            else:
                assert text == "", (k, cell, text)


def test_the_highlighted_path_is_that_sessions_chunks_in_order(runs):
    for name, result in runs.items():
        session = 2
        fig = replay.replay_figure(result, highlight=session, instances=INSTANCES, slots=SLOTS)
        mine = executed(result.requests)
        mine = mine[mine["session"] == session].sort_values("chunk")
        visited = [(session, int(r.chunk), int(r.instance), int(r.slot)) for r in mine.itertuples()]
        assert len(visited) == TRAFFIC.chunks
        last = frame_trace(fig, fig.frames[-1], "the highlighted session's path")
        assert [tuple(int(v) for v in row) for row in rows(last)] == visited, name
        assert list(last.text) == [str(k + 1) for k in range(TRAFFIC.chunks)]
        # The path grows with the replay: each frame shows the chunks run so far, in order.
        lengths = [len(rows(frame_trace(fig, f, "the highlighted session's path"))) for f in fig.frames]
        assert lengths == sorted(lengths) and lengths[0] <= 1
        # The others fade: every cell another session holds is fainter than any the highlighted one holds.
        ours, theirs = [], []
        for frame in fig.frames:
            cells = frame_trace(fig, frame, "chunk a cell holds")
            for opacity, text in zip(cells.marker.opacity, cells.text, strict=True):
                if text:
                    (ours if text.startswith(f"<b>session {session + 1},") else theirs).append(opacity)
        assert ours and theirs and max(theirs) < min(ours), name
    plain = replay.replay_figure(runs["the_fix"], instances=INSTANCES, slots=SLOTS)
    assert all(not rows(frame_trace(plain, f, "the highlighted session's path")) for f in plain.frames)


def foreign_reads(result) -> set[tuple[int, int]]:
    """(session, chunk) of every chunk whose state another writer left: not fresh, not its own."""
    ran = executed(result.requests)
    owner = ran["state_owner"].astype("uint64")
    bad = ran[(owner != 0) & (owner != ran["tag"].astype("uint64"))]
    return {(int(s), int(c)) for s, c in zip(bad["session"], bad["chunk"], strict=True)}


def test_reads_of_someone_elses_state_are_marked_in_the_mistake_and_not_in_the_fix(runs):
    marked = {}
    for name, result in runs.items():
        fig = replay.replay_figure(result, instances=INSTANCES, slots=SLOTS)
        marks = [frame_trace(fig, f, "read state someone else wrote") for f in fig.frames]
        marked[name] = {(int(r[0]), int(r[1])) for m in marks for r in rows(m)}
        assert marked[name] == foreign_reads(result), name
        assert sum(len(m.x) for m in marks) == len(marked[name])  # one mark per chunk, in the batch that ran it
    assert marked["the_mistake"], "the mistake's sessions read each other's state"
    assert not marked["the_fix"]
    assert runs["the_fix"].all_intact and not runs["the_mistake"].all_intact
    # Whose state: another session of this run, named by its index.
    tags = {int(t): int(s) for t, s in zip(runs["the_mistake"].requests["tag"], runs["the_mistake"].requests["session"], strict=True)}
    ran = executed(runs["the_mistake"].requests).set_index(["session", "chunk"])
    fig = replay.replay_figure(runs["the_mistake"], instances=INSTANCES, slots=SLOTS)
    for f in fig.frames:
        for session, chunk, code, other in rows(frame_trace(fig, f, "read state someone else wrote")):
            owner = int(ran.loc[(int(session), int(chunk)), "state_owner"])
            if owner in tags:
                assert (code, int(other)) == ("session", tags[owner])
            else:
                assert code == ("padding" if owner == PADDING_OWNER else "earlier")


def test_controls_play_pause_speeds_and_a_slider_step_per_batch(runs):
    fig = replay.replay_figure(runs["the_fix"], instances=INSTANCES, slots=SLOTS)
    (menu,) = fig.layout.updatemenus
    plays = [b for b in menu.buttons if b.args[0] is None]
    assert len(plays) >= 3
    durations = [b.args[1]["frame"]["duration"] for b in plays]
    assert durations == sorted(durations, reverse=True) and len(set(durations)) == len(durations)
    assert all(b.args[1]["fromcurrent"] for b in plays)  # a new speed carries on from where it is
    pauses = [b for b in menu.buttons if b.args[0] is not None and list(b.args[0]) == [None]]
    assert len(pauses) == 1
    (slider,) = fig.layout.sliders
    assert [list(s.args[0]) for s in slider.steps] == [[f.name] for f in fig.frames]
    # The strip's cursor walks the time axis batch by batch.
    cursor = [f.data[-1].x[0] for f in fig.frames]
    starts = sorted(executed(runs["the_fix"].requests).groupby(["instance", "exec_start"]).groups, key=lambda g: (g[1], g[0]))
    assert cursor == pytest.approx([s * 1000 for _i, s in starts])


def test_side_by_side_puts_both_runs_on_one_time_axis_and_one_row_layout(runs):
    a, b = runs["the_mistake"], runs["the_fix"]
    fa, fb = replay.side_by_side(a, b, schedulers=("dynamic", "direct"), titles=("The mistake", "The fix"))
    assert tuple(fa.layout.xaxis.range) == tuple(fb.layout.xaxis.range)
    lo, hi = fa.layout.xaxis.range
    for result in (a, b):
        assert lo <= 0 and hi >= executed(result.requests)["exec_end"].max() * 1000
    assert list(fa.layout.yaxis.ticktext) == list(fb.layout.yaxis.ticktext)
    # Without a grid given, both show every cell either run used (the fix's 6 sessions leave slot 3 empty).
    used = {(int(i), int(s)) for r in (a, b) for i, s in zip(executed(r.requests)["instance"], executed(r.requests)["slot"], strict=True)}
    assert {f"instance {i} · slot {s}" for i, s in used} <= set(fa.layout.yaxis.ticktext)
    ga, gb = replay.side_by_side(a, b, instances=INSTANCES, slots=SLOTS)
    assert list(ga.layout.yaxis.ticktext) == list(gb.layout.yaxis.ticktext) == [
        f"instance {i} · slot {s}" for i in range(INSTANCES) for s in range(SLOTS)]
    assert fa.layout.height == fb.layout.height
    assert (fa.layout.title.text, fb.layout.title.text) == ("The mistake", "The fix")
    assert tuple(replay.shared_range(a, b)) == tuple(fa.layout.xaxis.range)
    # The replays take the same axis, so two of them line up with the timelines.
    ra = replay.replay_figure(a, x_range=replay.shared_range(a, b))
    assert tuple(ra.layout.xaxis2.range) == tuple(fa.layout.xaxis.range)
    # The longer run alone sets the end; the shorter one's own range ends earlier or equal.
    assert replay.shared_range(a, b)[1] == max(replay.shared_range(a)[1], replay.shared_range(b)[1])


def test_projector_mode_writes_larger(runs):
    small = replay.replay_figure(runs["the_fix"], instances=INSTANCES, slots=SLOTS)
    large = replay.replay_figure(runs["the_fix"], instances=INSTANCES, slots=SLOTS, projector=True)
    assert large.layout.font.size >= 20 and (small.layout.font.size or 12) < large.layout.font.size
    assert large.data[0].textfont.size > small.data[0].textfont.size
    assert large.layout.height > small.layout.height
    fa, _fb = replay.side_by_side(runs["the_mistake"], runs["the_fix"], projector=True)
    assert fa.layout.font.size >= 20


def test_an_untraced_run_says_so(runs):
    result = runs["the_fix"]
    bare = type("Run", (), {"requests": result.requests.drop(columns=["exec_start", "exec_end", "queued_from"])})()
    fig = replay.replay_figure(bare)
    assert not fig.frames and "No server trace" in fig.layout.annotations[0].text


def strings(fig) -> list[str]:
    """Every piece of text a reader can see in a figure: titles, axes, names, cells, hovers, controls."""
    out = [fig.layout.title.text or ""]
    out += [a.text for a in fig.layout.annotations]
    for axis in ("xaxis", "yaxis", "xaxis2", "yaxis2"):
        ax = getattr(fig.layout, axis, None)
        if ax is not None:
            out += [ax.title.text or ""] + list(ax.ticktext or [])
    for menu in fig.layout.updatemenus:
        out += [b.label for b in menu.buttons]
    traces = list(fig.data) + [t for f in fig.frames for t in f.data]
    for t in traces:
        out.append(t.name or "")
        for field in ("text", "hovertext"):
            value = getattr(t, field, None)
            out += [value] if isinstance(value, str) else list(value or [])
        out.append(re.sub(r"%\{[^}]*\}", " ", getattr(t, "hovertemplate", None) or ""))
    out += [fig.layout.title.subtitle.text or ""]
    out += [text for f in fig.frames for text in (f.layout.title.text, f.layout.title.subtitle.text) if text]
    return [re.sub(r"<[^>]+>", " ", s) for s in out if s]


def test_chinese_figures_show_no_english_prose(runs):
    zh = words("zh")
    figs = [replay.replay_figure(runs["the_mistake"], _=zh, highlight=1, instances=INSTANCES, slots=SLOTS, projector=True),
            *replay.side_by_side(runs["the_mistake"], runs["the_fix"], _=zh, schedulers=("dynamic", "direct"))]
    for fig in figs:
        texts = strings(fig)
        assert texts and has_cjk(fig.layout.title.text)
        english = {s: english_runs(s) for s in texts if english_runs(s)}
        assert not english, english


def test_every_replay_label_goes_through_the_readers_words(runs):
    _ = Marked()
    fig = replay.replay_figure(runs["the_mistake"], _=_, highlight=0, instances=INSTANCES, slots=SLOTS)
    assert fig.layout.title.text.startswith("«")
    assert fig.layout.xaxis2.title.text.startswith("«")
    assert all(t.startswith("«") for t in [*fig.layout.xaxis.ticktext, *fig.layout.yaxis.ticktext])
    assert all(b.label.startswith("«") for b in fig.layout.updatemenus[0].buttons)
    assert all(t.name.startswith("«") for t in fig.data if t.name)
    assert all(f.layout.title.text.startswith("«") for f in fig.frames)
    assert all(f.layout.title.subtitle.text.count("«") == 2 for f in fig.frames)  # the batch, the tally
    cells = fig.frames[-1].data[0]
    assert all(t.startswith("<b>«") for t in cells.text if t)
