"""Words of the "Check a deployment" page (app/views/check.py) beyond the checker's own (app/checker/words/):
which server, a model's state on it, what a learner can do about a refusal on this page, and the
page's summary of a check. English templates marked with N_()."""
from __future__ import annotations

from app.i18n import N_, Words

# Which server a check goes to (app/checker/page/servers.py).
SERVERS = {
    "own": N_("this app's server ({url:text})"),
    "listed": N_("{url:text} (listed in TRITON_LAB_CHECK_URLS)"),
    "entered": N_("another server: type its address"),
}
# Why no free-form address is offered (app/checker/page/servers.py).
NO_FREE_FORM = {
    "no_key": N_("This app listens beyond this computer and no instructor key is set, so only the servers above can be "
                 "checked: whoever starts the app lists more in TRITON_LAB_CHECK_URLS (comma-separated)."),
    "locked": N_("This app listens beyond this computer: to check a server that is not listed above, enter the instructor key."),
}
# A model's state in the server's repository index (Triton's words READY, UNAVAILABLE, LOADING, UNLOADING).
STATES = {
    "READY": N_("ready"),
    "UNAVAILABLE": N_("unavailable"),
    "LOADING": N_("loading"),
    "UNLOADING": N_("unloading"),
    "": N_("not loaded"),
}
STEPS_DEFAULT = N_("{n:count} (the default)")
THINK_DEFAULT = N_("{ms:ms} (the default)")
THINK_HELP = N_("Your clients' mean pause between a reply and the next request; the config review compares it with the idle "
                "timeout. Leave it empty for a decoupled model: its requests are sent once each, with no pause to set.")
SHAPES_HELP = N_("Left empty, the checker draws the size of every variable dimension from {low:count} to {high:elements}, "
                 "from the seed: anew for each session and step, or one size for the whole check where the dynamic batcher "
                 "must stack the requests (a variable input without allow_ragged_batch). The results say which shapes were sent.")
FAULTS_HELP = N_("After the staggered run, a decoupled model's request is cancelled by its client mid-stream, then another's "
                 "client vanishes mid-stream (its connection reset), each beside three neighbours: their streams must match "
                 "their lone ones, and Triton's pending requests must fall back to 0. Under the sequence batcher, a client "
                 "goes quiet past the idle timeout and then starts its session over from START under the same ID: its late "
                 "step must be refused, and every session answer as alone. Off: the client faults are left out.")
STATE_METRIC_HELP = N_("Your model's own Prometheus gauge of the state it holds, labelled by model on Triton's metrics endpoint "
                       "(the lab's generator exports gen_state_cells): after each client fault it must fall back to its reading "
                       "before the fault. Empty: the model's state is not read.")
OTHER_MODEL = N_("another model: type its name (a model loaded from files is not in the index)")

# Problems of this page; the checker's own are in app/checker/words/problems.py (PROBLEMS).
PROBLEMS = {
    "check_address_syntax": N_("'{value:text}' is not a server address: give host:port, for example 127.0.0.1:8000"),
    "check_address_not_allowed": N_("{url:text} is neither this app's server nor listed in TRITON_LAB_CHECK_URLS, and this "
                                    "app does not check other addresses: list it there, or enter the instructor key"),
    "check_server_unreachable": N_("the server at {url:text} does not answer, so nothing was checked: start it, or choose "
                                   "another server"),
    "check_model_name_missing": N_("type the name of the model to check"),
}
# What the learner does on this page where a checker problem names a command-line option.
PAGE_HINTS = {
    "check_data_shape_needed": N_("On this page: write its size under Shapes (NAME:d1,d2), or give \"shape\" in the data file."),
    "check_datatype_unsupported": N_("On this page: upload a data file in perf_analyzer's --input-data format."),
    "check_shape_unknown_input": N_("On this page: correct the name under Shapes."),
    "check_shape_syntax": N_("On this page: write each entry under Shapes as NAME:d1,d2, entries separated by spaces."),
    "check_ignore_unknown_output": N_("On this page: choose the outputs to leave out from the list."),
    "check_nothing_to_compare": N_("On this page: leave at least one output in."),
    "check_stream_steps": N_("On this page: empty the Steps field; Sessions sets how many requests are sent."),
    "check_stream_think": N_("On this page: empty the Think time field."),
    "check_state_metric_bad": N_("On this page: correct the name under Client faults, or empty it."),
    "check_model_not_ready": N_("On this page: a model of this app's own lab can be loaded with the Load button; the check itself "
                                "never loads or unloads a model it did not create."),
}
NOT_LOADED_HERE = {
    "own": N_("`{model:text}` is {state:text} on this server. It is one of the lab's own deployments: load it (the lab loads it "
              "as any lesson does, within its memory budget), then check it. The check itself never loads or unloads a model it "
              "did not create."),
    "other": N_("`{model:text}` is {state:text} on {url:text}. The checker never loads or unloads a model it did not create: "
                "load it on that server first."),
}

SUMMARY = N_("`{model:text}` version {version:text} on {url:text} ({where:text}): {scheduler:text}, {instances:instances}; "
             "{requests:requests} in {wall:seconds}.")
SEQUENCE_SUMMARY = N_("Capacity {capacity:sequences} ({instances:count} × {slots:slots}), idle timeout {idle:seconds}.")
INPUTS_SUMMARY = N_("{sessions:sessions} of {low:count} to {high:steps}, inputs {source:text}.")
INPUTS_SUMMARY_ONE_LENGTH = N_("{sessions:sessions} of {steps:steps}, inputs {source:text}.")  # every session equally long
LEFT_OUT = N_("Left out of the comparison: {names:text} ({why:text}).")
LEFT_OUT_BY = {"lab": N_("the lab knows they report placement"), "user": N_("your choice")}
DATA_FILE_SOURCE = N_("the uploaded file {name:text}")

# The checks table's columns (app/checker/page/report.py).
COLUMNS = {
    "verdict": N_("verdict"),
    "check": N_("check"),
    "variant": N_("run on"),
    "session": N_("first diverging session"),
    "step": N_("step"),
    "output": N_("output"),
    "difference": N_("difference"),
    "tolerance": N_("tolerance"),
    "execution": N_("execution"),
    "mates": N_("batch mates"),
    "details": N_("what the check found"),
}
REFUSAL_COLUMNS = {
    "phase": N_("phase"),
    "variant": N_("run on"),
    "session": N_("session"),
    "step": N_("step"),
    "corrid": N_("correlation ID"),
    "cause": N_("cause"),
    "error": N_("Triton's message"),
}
EXECUTION = N_("batch of {batch:count} on {lane:text}")
ALONE_IN_BATCH = N_("alone in its batch")
LANE = N_("lane {n:count}")


def lane(value: object, _: Words) -> str:
    """A timeline lane in words: an instance's name as the log gave it, else the checker's packed lane ('lane 0')."""
    text = str(value)
    if text.startswith("lane ") and text[5:].isdigit():
        return _.render(LANE, n=int(text[5:]) + 1)
    return text

INTRO = N_("The rollout guide's verification, run on a model of your choice: every session alone for its reference, then "
           "interleaved past the slots into the backlog, IDs reused after END, a session abandoned and one that gave up, on all "
           "instances and on one (sequence batcher); or every request alone, concurrently in shuffled batches, and alone again "
           "after that traffic (dynamic batcher, or none). Each reply is compared with the reference, and the config is reviewed "
           "for the sequence batcher's pitfalls. The same checks run in a terminal: `batching-lab check --model NAME`.")
PROGRESS = N_("{phase:text} ({variant:text}): {done:count} of about {planned:requests}")
STARTING = N_("Checking {model:text}")
WAITING = N_("Waiting for {model:text}: {ahead:runs} ahead of this check (about {expected:seconds})")
LOAD_FAILED = N_("The lab could not load {model:text}: {reason:text}")
