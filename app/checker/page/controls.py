"""The "Check a deployment" page's controls: the model (from the server's repository index) and
the checker's options (app/checker/engine/options.CheckOptions), with what stops a check before it
sends anything said as the engine's problem codes.

Widget keys start with "check."; ?model= in the link picks the model, so a lesson can point at one.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import streamlit as st

from app.checker.engine import (
    COPY_SUFFIX,
    DEFAULT_SIZES,
    DEFAULT_STEPS,
    DEFAULT_THINK_MS,
    MAX_SESSIONS,
    MAX_STEPS,
    MAX_THINK_MS,
    CheckOptions,
    ModelFacts,
    default_ignored_outputs,
    parse_shape,
)
from app.checker.words import page as words
from app.lab.problems import LabError, Problem
from app.ui.language import _, t

if TYPE_CHECKING:
    from streamlit.runtime.uploaded_file_manager import UploadedFile

    from app.i18n import Words
    from app.lab.server import LabServer

OTHER = "\x00other"  # the model selectbox's entry for a name typed by hand (never a model's name)


@dataclass(frozen=True)
class ModelChoice:
    name: str  # "" while a typed name is still empty
    state: str | None  # the index's state ("" never loaded); None: not in the index (a model loaded from files)


@dataclass
class Chosen:
    options: CheckOptions | None  # None while a problem stops the check
    problems: list[Problem] = field(default_factory=list)
    data_name: str | None = None  # the uploaded data file's name


def index(server: LabServer) -> list[dict[str, Any]]:
    """The server's repository index, the checker's own one-instance copies left out."""
    with server.client(timeout_s=10) as client:
        entries = client.get_model_repository_index()
    return [e for e in entries if COPY_SUFFIX not in e.get("name", "")]


def _model_label(name: str, states: dict[str, str], _: Words) -> str:
    if name == OTHER:
        return _(words.OTHER_MODEL)
    state = states.get(name, "")
    return f"{name} ({_(words.STATES.get(state, state))})"


def choose_model(entries: list[dict[str, Any]], key: str = "check") -> ModelChoice:
    states = {e["name"]: str(e.get("state", "") or "") for e in entries}
    names = sorted(states, key=lambda n: (states[n] != "READY", n)) + [OTHER]
    asked = st.query_params.get("model")
    if asked and st.session_state.get(f"{key}.model") is None:
        st.session_state[f"{key}.model"] = asked if asked in states else OTHER
        if asked not in states:
            st.session_state[f"{key}.model_name"] = asked
    name = st.selectbox(_("Model"), names, key=f"{key}.model", format_func=partial(_model_label, states=states, _=t()))
    if name != OTHER:
        st.query_params["model"] = name
        return ModelChoice(name, states[name])
    typed = st.text_input(_("Model name"), key=f"{key}.model_name").strip()
    if typed:
        st.query_params["model"] = typed
    return ModelChoice(typed, states.get(typed))


def _shapes(text: str) -> tuple[dict[str, tuple[int, ...]], list[Problem]]:
    shapes: dict[str, tuple[int, ...]] = {}
    problems: list[Problem] = []
    for entry in re.split(r"[\s;]+", text.strip()):
        if not entry:
            continue
        try:
            name, dims = parse_shape(entry)
        except LabError as err:
            problems += err.problems
            continue
        shapes[name] = dims
    return shapes, problems


def _data(upload: UploadedFile | None) -> tuple[dict[str, Any] | None, list[Problem]]:
    """The uploaded perf_analyzer --input-data JSON, parsed (the engine reads the document itself)."""
    if upload is None:
        return None, []
    try:
        document = json.loads(upload.getvalue().decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        return None, [Problem("check_data_unreadable", {"source": upload.name, "error": str(err)})]
    return document, []


def _clients(key: str) -> tuple[dict[str, Any], list[Problem]]:
    """What the user says about their clients and server, for the config review (the CLI's
    --max-corrid, --string-id-bytes, --backend, --gpus); empty fields stay unstated. The largest ID
    is typed as text: a number input cannot hold a 64-bit ID exactly."""
    with st.expander(_("Your clients and server (for the config review)"),
                     expanded=any(st.session_state.get(f"{key}.{n}") not in (None, "") for n in ("max_corrid", "string_id_bytes", "backend", "gpus"))):
        left, right = st.columns(2)
        corrid_text = left.text_input(_("Largest integer correlation ID your clients send"), key=f"{key}.max_corrid",
                                      placeholder=_("not stated"),
                                      help=_("The review checks that the CORRID data type holds it; a client that picks random 64-bit "
                                             "IDs sends up to 18446744073709551615."))
        string_bytes = right.number_input(_("Longest string correlation ID, in bytes"), min_value=1, max_value=4096, value=None, step=1,
                                          key=f"{key}.string_id_bytes", placeholder=_("not stated"),
                                          help=_("Give it when your clients send string IDs (a UUID is 36 bytes)."))
        backend = left.text_input(_("Backend, when the config names none"), key=f"{key}.backend", placeholder="python, onnxruntime, ...")
        gpus = right.number_input(_("GPUs the server's instances may use"), min_value=0, max_value=64, value=None, step=1,
                                  key=f"{key}.gpus", placeholder=_("not stated"),
                                  help=_("0 on a CPU-only server; needed only when an instance group leaves its devices to Triton."))
    problems: list[Problem] = []
    max_corrid = None
    if corrid_text.strip():
        try:
            max_corrid = int(corrid_text.strip().replace(",", "").replace("_", ""))
        except ValueError:
            problems.append(Problem("check_corrid_not_number", {"value": corrid_text.strip()}))
    return {"max_corrid": max_corrid, "string_id_bytes": int(string_bytes) if string_bytes is not None else None,
            "backend": backend.strip() or None, "gpus": int(gpus) if gpus is not None else None}, problems


def _faults(key: str) -> dict[str, Any]:
    """The client faults (the CLI's --no-faults) and the model's own state gauge (--state-metric), as
    CheckOptions takes them; an empty gauge stays unstated. Folded unless changed: the faults are on
    by default, and only a model that exports such a gauge has one to name."""
    changed = st.session_state.get(f"{key}.faults") is False or bool(st.session_state.get(f"{key}.state_metric"))
    with st.expander(_("Client faults"), expanded=changed):
        faults = st.checkbox(_("Client faults"), value=True, key=f"{key}.faults", help=_(words.FAULTS_HELP))
        metric = st.text_input(_("The model's state gauge (a Prometheus metric name)"), key=f"{key}.state_metric",
                               placeholder=_("not stated"), help=_(words.STATE_METRIC_HELP))
    return {"faults": bool(faults), "state_metric": metric.strip() or None}


def choose_options(facts: ModelFacts | None, key: str = "check") -> Chosen:
    """The options' widgets. `facts` (the chosen model as the server reports it) lists its outputs
    and says which ones the lab already leaves out; without it those widgets wait for a model."""
    left, middle, right = st.columns(3)
    sessions = left.number_input(_("Sessions"), min_value=1, max_value=MAX_SESSIONS, value=None, step=1, key=f"{key}.sessions",
                                 placeholder=_("enough to fill every slot and overflow"),
                                 help=_("How many sessions (sequences) run interleaved; empty: the checker fills every slot of every "
                                        "instance and overflows into the backlog."))
    steps = middle.number_input(_("Steps"), min_value=1, max_value=MAX_STEPS, value=None, step=1, key=f"{key}.steps",
                                placeholder=t().render(words.STEPS_DEFAULT, n=DEFAULT_STEPS),
                                help=_("Requests in the longest session; sessions mix short and long ones. A data file's streams set "
                                       "their own lengths."))
    think = right.number_input(_("Think time (ms)"), min_value=0.0, max_value=MAX_THINK_MS, value=None, step=1.0,
                               key=f"{key}.think_ms", placeholder=t().render(words.THINK_DEFAULT, ms=DEFAULT_THINK_MS),
                               help=t().render(words.THINK_HELP))
    left, middle, right = st.columns(3)
    seed = left.number_input(_("Seed"), min_value=0, max_value=2**31 - 1, value=0, step=1, key=f"{key}.seed")
    tolerance = middle.number_input(_("Tolerance for float outputs"), min_value=0.0, value=None, format="%g", key=f"{key}.tolerance",
                                    placeholder=_("from the measured noise"),
                                    help=_("|got − reference| ≤ tolerance × max(1, |reference|); empty: derived from the model's own "
                                           "noise between two lone runs and the datatype."))
    one_instance = right.checkbox(_("Also run on a one-instance copy"), value=True, key=f"{key}.one_instance",
                                  help=_("The checker loads a temporary copy with count 1 under a name of its own and unloads it "
                                         "afterwards; it needs the model's files, so on another server this run is skipped."))
    shapes_text = st.text_input(_("Shapes of variable inputs (NAME:d1,d2, separated by spaces)"), key=f"{key}.shapes",
                                placeholder="TOKENS:16", help=t().render(words.SHAPES_HELP, low=DEFAULT_SIZES[0], high=DEFAULT_SIZES[1]))
    outputs = [o.name for o in facts.outputs] if facts is not None else []
    by_lab = set(default_ignored_outputs(facts)) if facts is not None else set()
    ignore = st.multiselect(_("Outputs to leave out (they report placement, not an answer)"), [o for o in outputs if o not in by_lab],
                            key=f"{key}.ignore", disabled=facts is None, placeholder=_("none: compare every output"))
    if by_lab:
        st.caption(t().render(words.LEFT_OUT, names=", ".join(sorted(by_lab)), why=_(words.LEFT_OUT_BY["lab"])))
    # Folded: most checks generate their inputs, and Streamlit words the uploader's own button in English only.
    with st.expander(_("Inputs from a data file"), expanded=st.session_state.get(f"{key}.data") is not None):
        upload = st.file_uploader(
            _("Data file (perf_analyzer's --input-data JSON; one stream per session; its validation_data, if any: golden outputs)"),
            type=["json"], key=f"{key}.data")
    clients, client_problems = _clients(key)
    faults = _faults(key)
    shapes, problems = _shapes(shapes_text)
    document, data_problems = _data(upload)
    problems += data_problems + client_problems
    options = CheckOptions(
        sessions=int(sessions) if sessions is not None else None, steps=int(steps) if steps is not None else None,
        think_ms=float(think) if think is not None else None, seed=int(seed), shapes=shapes, input_data=document, ignore_outputs=tuple(ignore),
        tolerance=float(tolerance) if tolerance is not None else None, one_instance=bool(one_instance), **clients, **faults,
    )
    problems += options.problems()
    return Chosen(None if problems else options, problems, upload.name if upload is not None else None)

