"""The live lab's controls, kept in step with the URL query string.

Widgets hold the values while the page is open; on the first visit they are filled from
the query string (so a shared link reproduces a set-up), afterwards from the last set-up
this browser used, and every rerun writes the current set-up back to the URL.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

import streamlit as st

from app.i18n import N_, Words
from app.lab.deployment import FIELD, FIELDS, PARTS, Field, LabSettings, values_from_query
from app.lab.records import Traffic
from app.recogniser.engine.setup import QUERY_KEYS, LabSetup, parse_texts
from app.recogniser.words import presets as preset_words
from app.recogniser.words.transports import transport as transport_words
from app.ui.language import _, t

P = "lab."  # widget key prefix
PREDICTION_KEY = P + "prediction"
PRESET_LABELS = preset_words.LABELS  # {preset name: N_ label}, in button order


def _default(name: str) -> Any:
    return getattr(getattr(LabSetup(), FIELD[name].part), name)


def _held(f: Field, value: Any) -> Any:
    """The value f's widget can hold: a number within the table's range, one of its choices, else the default."""
    default = _default(f.name)
    if f.choices:
        return value if value in f.choices else default
    if f.low is None:
        return bool(value)
    low, high = f.limits
    return type(default)(min(max(value, low), high))  # int or float, as the field and its widget


def _widget_values(setup: LabSetup) -> dict[str, Any]:
    return {**{f.name: _held(f, getattr(getattr(setup, f.part), f.name)) for f in FIELDS}, "own_text": "\n".join(setup.texts)}


def _apply_values(setup: LabSetup, only_missing: bool) -> None:
    for name, value in _widget_values(setup).items():
        if not only_missing or P + name not in st.session_state:
            st.session_state[P + name] = value


# A problem code (app/lab/problems) that is about one query parameter alone: that parameter.
_PROBLEM_PARAMETER = {f.problem: f.name for f in FIELDS if f.problem}


def _with(setup: LabSetup, name: str, value: Any) -> LabSetup:
    part = FIELD[name].part
    return replace(setup, **{part: replace(getattr(setup, part), **{name: value})})


def from_link(query: dict[str, Any]) -> tuple[LabSetup, list[tuple[str, dict[str, Any]]]]:
    """The set-up a link asks for, with each value it cannot use put back to its default, and
    a (code, values) fallback for each: unreadable {name, asked, used}, range {name, asked, low,
    high, used} or unknown {name, asked, choices, used}. Problems of combinations (corrid under
    dynamic) and of typed utterances are left for the page's set-up error."""
    setup = LabSetup.from_query(query)
    fallbacks: list[tuple[str, dict[str, Any]]] = []
    read = {**values_from_query(LabSettings, query), **values_from_query(Traffic, query)}

    def asked(name: str) -> str:
        raw = query.get(name)
        return str(raw[0] if isinstance(raw, list) else raw)

    for f in FIELDS:
        if f.name in query and f.name not in read:
            fallbacks.append(("unreadable", {"name": f.name, "asked": asked(f.name), "used": _default(f.name)}))
    for problem in setup.problems():
        name = _PROBLEM_PARAMETER.get(problem.code)
        if name is None or name not in query:
            continue
        used = _default(name)
        setup = _with(setup, name, used)
        if problem.code.endswith("_unknown"):
            fallbacks.append(("unknown", {"name": name, "asked": asked(name), "choices": problem.values["choices"],
                                          "used": used}))
        else:
            fallbacks.append(("range", {"name": name, "asked": asked(name), "low": problem.values["low"],
                                        "high": problem.values["high"], "used": used}))
    return setup, fallbacks


FALLBACK_WORDS = {
    "unreadable": N_("The link's `{name:text}={asked:text}` is not a value this setting can take; "
                     "the default `{used:text}` is used instead."),
    "range": N_("The link's `{name:text}={asked:text}` is outside {low:text} to {high:text}; "
                "the default `{used:text}` is used instead."),
    "unknown": N_("The link's `{name:text}={asked:text}` is not one of {choices:text}; "
                  "the default `{used:text}` is used instead."),
}


def fallback_message(code: str, values: dict[str, Any], words: Words | None = None) -> str:
    """One link fallback in the learner's language (words: a Words, else this session's)."""
    words = words or t()
    shown = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in values.items()}
    if "choices" in shown:  # config values, shown as code in every language
        shown["choices"] = ", ".join(f"`{c.strip()}`" for c in shown["choices"].split(","))
    return words.render(FALLBACK_WORDS[code], **shown)


def init_widgets() -> list[tuple[str, dict[str, Any]]]:
    """Fill missing widget values from the URL (first visit) or this session's last set-up.

    Returns the link's values that could not be used (empty unless the URL was read just now)."""
    fallbacks: list[tuple[str, dict[str, Any]]] = []
    if "lab-setup" not in st.session_state and any(k in st.query_params for k in QUERY_KEYS):
        start, fallbacks = from_link(st.query_params.to_dict())
    else:
        start = st.session_state.get("lab-setup", LabSetup.from_preset("the_fix"))
    _apply_values(start, only_missing=True)
    return fallbacks


def load_preset(name: str) -> None:
    """Button callback: put a preset's deployment and traffic into the controls."""
    _apply_values(LabSetup.from_preset(name), only_missing=False)
    st.session_state[PREDICTION_KEY] = None  # a new set-up deserves a fresh prediction
    st.session_state["lab-preset-loaded"] = name


def preset_buttons() -> None:
    st.markdown(_("**Presets**: load a ready-made set-up, then predict and run it."))
    for column, (name, label) in zip(st.columns(len(PRESET_LABELS)), PRESET_LABELS.items(), strict=True):
        column.button(_(label), key=f"{P}preset.{name}", on_click=load_preset, args=(name,),
                      help=_(preset_words.TITLES[name]), width="stretch")


def _number(column: Any, label: str, name: str, **options: Any) -> None:
    """A number's widget, its range and step from the lab's table (app/lab/deployment/setup_table.py)."""
    f, kind = FIELD[name], type(_default(name))  # int or float: a widget's numbers all have its type
    low, high = f.limits
    column.number_input(label, min_value=kind(low), max_value=kind(high), step=kind(f.step), key=P + name, **options)


def _slider(column: Any, label: str, name: str, **options: Any) -> None:
    low, high = FIELD[name].limits
    column.slider(label, int(low), int(high), step=int(FIELD[name].step or 1), key=P + name, **options)


def _range_help(template: str, name: str) -> str:
    """A help text that names the setting's range, from the table rather than its words."""
    low, high = FIELD[name].limits
    return t().render(template, low=low, high=high)


def _read(name: str, held: Any) -> Any:
    """A widget's value as its field holds it; a widget not drawn yet holds nothing, so the field's default."""
    default = _default(name)
    return default if held is None or held == "" else type(default)(held)


def controls() -> LabSetup:
    """Render the controls and return the set-up they describe (not yet checked)."""
    get: Callable[..., Any] = st.session_state.get  # widget values: whatever each widget holds
    deploy, traffic = st.columns(2, gap="large")
    with deploy:
        st.markdown(_("**Deployment** (one setting changes one line of config.pbtxt)"))
        st.radio(_("Scheduler"), FIELD["scheduler"].choices, key=P + "scheduler", horizontal=True,
                 help=_("dynamic: any request in any row of any instance. direct: a sequence keeps one slot. "
                        "oldest: a sequence keeps one instance, rows vary."))
        dynamic = get(P + "scheduler") == "dynamic"
        a, b = st.columns(2)
        _number(a, _("Instances"), "instances",
                help=_range_help(N_("Copies of the model ({low:count} to {high:count})"), "instances"))
        _number(b, _("Slots (max batch size)"), "slots",
                help=_range_help(N_("Rows per execution ({low:count} to {high:count})"), "slots"))
        direct = get(P + "scheduler") == "direct"
        utilisation = float(get(P + "min_slot_utilization") or 0.0)
        delay_ignored = direct and utilisation <= 0  # model_config.proto: direct ignores it then
        _number(a, _("Queue delay (µs)"), "queue_delay_us", disabled=delay_ignored,
                help=_("How long the scheduler may hold a request back to fill a batch. dynamic and "
                       "oldest: always. direct: only with a minimum slot utilisation above 0."))
        _number(b, _("Idle timeout (µs)"), "idle_timeout_us", disabled=dynamic,
                help=_("A sequence silent this long is ended by Triton (sequence batcher only)"))
        _number(a, _("Min slot utilisation (direct)"), "min_slot_utilization", format="%.2f", disabled=not direct,
                help=_("direct only: a batch waits, up to the queue delay, until this share of the "
                       "slots has a ready request. 0 runs as soon as one slot is ready."))
        if delay_ignored:
            st.caption(_("Queue delay: ignored under direct while minimum slot utilisation is 0, so "
                         "none is written to config.pbtxt. Set a utilisation above 0 to make batches wait."))
        st.radio(_("State key (how the model finds a session's state)"), FIELD["state_key"].choices, key=P + "state_key",
                 horizontal=True, help=_("slot: by batch row. corrid: by correlation ID. session: by the client's own tag."))
        st.checkbox(_("Honour READY (skip padding rows)"), key=P + "honour_ready", disabled=dynamic)
    with traffic:
        st.markdown(_("**Traffic**"))
        own_text = get(P + "own_text", "").strip() != ""
        a, b = st.columns(2)
        _slider(a, _("Sessions"), "sessions", disabled=own_text)
        _slider(b, _("Chunks per session (a letter each)"), "chunks", disabled=own_text)
        st.text_area(_("Or your own utterances, one per line (letters and spaces)"), key=P + "own_text", height=80,
                     placeholder="HELLO WORLD\nSTREAMING SPEECH")
        a, b, c = st.columns(3)
        _number(a, _("Think time (ms)"), "think_ms", help=_("Pause between a session's chunks"))
        _number(b, _("Jitter (± ms)"), "jitter_ms")
        _number(c, _("Seed"), "seed", help=_("Same seed, same words and pauses"))
        st.checkbox(_("Spread think times across sessions (5 to 65 ms)"), key=P + "spread_think")
        with st.expander(_("Advanced: transport")):
            a, b = st.columns(2)
            a.selectbox(_("Transport"), FIELD["transport"].choices, key=P + "transport",
                        format_func=partial(transport_words, _=t()),
                        help=_("HTTP and gRPC make one call per chunk; the gRPC stream is one stream per session"))
            _number(b, _("Chunks in flight per session"), "in_flight",
                    help=_("1 waits for each answer. Above 1 a session sends ahead (pipelining): "
                           "separate calls may then reach Triton out of order; a stream keeps its order."))

    held = {part: {f.name: _read(f.name, get(P + f.name)) for f in FIELDS if f.part == part} for part in PARTS}
    texts = parse_texts(get(P + "own_text", ""))
    if texts:  # typed utterances set the session count; the slider is disabled meanwhile
        held["traffic"]["sessions"] = len(texts)
    setup = LabSetup(LabSettings(**held["settings"]), Traffic(**held["traffic"]), texts)
    st.session_state["lab-setup"] = setup
    return setup


def sync_query(setup: LabSetup) -> None:
    """Write the set-up to the URL so the address bar always reproduces it."""
    wanted = setup.to_query()
    current = st.query_params.to_dict()
    if "text" in current and "text" not in wanted:
        del st.query_params["text"]
    changed = {k: v for k, v in wanted.items() if current.get(k) != v}
    if changed:
        st.query_params.update(changed)
