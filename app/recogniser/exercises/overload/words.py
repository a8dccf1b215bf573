"""Words of the overload exercise (engine.py beside it).

SCENARIO and QUESTION quote the exercise's constants (1 instance x 4 slots, capacity 4,
IDLE_TIMEOUT_US 2000000, 32 clients at 8x, 10 chunks 40 ms apart); its test checks they still match.
"""
from __future__ import annotations

from app.i18n import N_

TITLE = N_("Overload: the backlog and the idle timeout")
SCENARIO = N_(
    "A recogniser on the direct sequence batcher has 1 instance × 4 slots (capacity 4 sequences) and "
    "max_sequence_idle_microseconds = 2000000 (2 s). A burst of 32 clients (8× capacity) opens streams at the "
    "same moment; each sends 10 chunks, 40 ms apart, and ends with END. Each stream holds its slot for about "
    "half a second."
)
QUESTION = N_("What happens to the 32 sessions?")
OPTIONS = {
    "refused": N_("Triton refuses the sessions beyond capacity at once: the server is busy."),
    "wait": N_("All of them wait their turn in the backlog and complete; only their start is delayed."),
    "reaped": N_(
        "None is refused at the door, but the waits grow with the backlog, and sessions that waited longer than the "
        "idle timeout are reaped right after they get a slot: their next chunk lacks START."
    ),
    "corrupt": N_("The extra sessions share slots and read each other's state."),
}
NUMBERS = {
    "capacity_sequences": N_("capacity (sequences)"),
    "idle_timeout_s": N_("idle timeout (s)"),
    "max_wait_s_2x": N_("2× capacity: longest wait (s)"),
    "max_wait_s_4x": N_("4× capacity: longest wait (s)"),
    "max_wait_s_8x": N_("8× capacity: longest wait (s)"),
    "reaped_2x": N_("2× capacity: sessions reaped"),
    "reaped_4x": N_("4× capacity: sessions reaped"),
    "reaped_8x": N_("8× capacity: sessions reaped"),
    "refused_at_start": N_("sessions refused at the start"),
    "first_load_with_reaping": N_("first load with reaping"),
    "shortest_wait_s_of_a_reaped_session": N_("shortest wait of a reaped session (s)"),
    "chunks_a_reaped_session_got": N_("chunks a reaped session got answered"),
    "reaped_with_admission_limit": N_("admission limit: sessions reaped"),
    "reaped_with_more_slots": N_("more slots: sessions reaped"),
    "reaped_with_longer_idle_timeout": N_("longer idle timeout: sessions reaped"),
    "max_wait_s_with_admission_limit": N_("admission limit: longest wait (s)"),
    "max_wait_s_with_more_slots": N_("more slots: longest wait (s)"),
    "max_wait_s_with_longer_idle_timeout": N_("longer idle timeout: longest wait (s)"),
}
FINDINGS = {
    # One per load.
    "load": N_(
        "Load {load:count}× ({sessions:count} sessions): longest wait {max_wait:seconds}, mean {mean_wait:seconds}, "
        "{reaped:count} reaped, {refused:count} refused at the start."
    ),
    "reaped_sessions": N_(
        "Reaped sessions had waited at least {wait:seconds} (the idle timeout is {timeout:seconds}) and got "
        "{chunks:text} chunks answered before their next one was refused for lacking START."
    ),
    "none_reaped": N_("No session was reaped: no wait came near the {timeout:seconds} timeout."),
    "log_heavy": N_("Triton's log at {load:count}×: {backlog:count} backlog entries, {reaped:count} reaper force-ends."),
    # One per remedy, with what it costs.
    "remedy_admission_limit": N_(
        "Remedy 'admission limit': longest wait {max_wait:seconds}, {reaped:count} reaped, run took {wall:seconds}; "
        "cost: sessions still wait to start, in the client now (at most {limit:count} in flight), so the client "
        "must queue or shed them."
    ),
    "remedy_more_slots": N_(
        "Remedy 'more slots': longest wait {max_wait:seconds}, {reaped:count} reaped, run took {wall:seconds}; cost: "
        "bigger batches per execution (direct pads them) and more state held at once; each instance is a process."
    ),
    "remedy_longer_idle_timeout": N_(
        "Remedy 'longer idle timeout': longest wait {max_wait:seconds}, {reaped:count} reaped, run took "
        "{wall:seconds}; cost: a client that dies without END now holds its slot for 10 s, and the backlog wait is "
        "as long as before."
    ),
    # The explanation, sentence by sentence.
    "why_no_queue_policy": N_(
        "The sequence batcher has no queue policy and no limit on its backlog: a sequence that finds every slot "
        "taken waits, without an error, until one frees. Nothing was refused at the door ({refused:count} refusals "
        "at the start), and the wait grew with the load, about one stream's length per wave of sessions ahead."
    ),
    "why_idle_clock": N_(
        "The idle timeout does not stop while a sequence waits: Triton stamps a sequence's idle clock when its "
        "request arrives, and the reaper ends an assigned sequence whose clock has run past the timeout."
    ),
    "why_reaped": N_(
        "So at {load:count}× the sessions that had waited about as long as the timeout were reaped right after they "
        "got a slot: their first chunk was answered, their second refused for lacking START, and their slots went "
        "to the sessions behind them."
    ),
    "why_none_reaped": N_("No wait came near the timeout on this run, so nobody was reaped."),
    "why_remedies": N_(
        "Remedies and what they cost: an admission limit in the client (at most as many sessions in flight as there "
        "are slots) keeps the server's backlog empty, so nobody is reaped, but sessions still wait as long to start, "
        "only in the client, where it can show progress or shed load; more slots or instances shorten the wait, at "
        "the price of bigger batches and more processes; a longer idle timeout stops the reaping but not the wait, "
        "and lets a dead client hold its slot longer (see never_ending)."
    ),
}
STEPS = {
    "deploy": N_("Deploying direct, {instances:count} × {slots:count} slots, idle timeout {timeout:seconds}"),
    "load": N_("{sessions:count} sessions at once ({load:count}× capacity)"),
    "deploy_admission_limit": N_("Remedy: admission limit"),
    "deploy_more_slots": N_("Remedy: more slots"),
    "deploy_longer_idle_timeout": N_("Remedy: longer idle timeout"),
    "run_admission_limit": N_("{sessions:count} sessions with an admission limit of {limit:count}"),
    "run_more_slots": N_("{sessions:count} sessions with {slots:count} slots"),
    "run_longer_idle_timeout": N_("{sessions:count} sessions with an idle timeout of {timeout:seconds}"),
    "measuring": N_("Measuring"),
}

# Each chart's message in words, beside it (figures.py beside it): numbers read off the chart.
CHART_SUMMARIES = {
    "wait": N_("The longest wait before the first chunk ran, per load: {loads:text}. The idle timeout is {timeout:seconds}."),
    "load_item": N_("{sessions:count} sessions at once waited up to {wait:seconds}, {reaped:count} reaped, {refused:count} "
                    "refused at the start"),
    "remedies": N_("At the heaviest load: {runs:text}."),
    "remedy_item": N_("{run:text}: longest wait {wait:seconds}, {reaped:count} sessions reaped"),
}
