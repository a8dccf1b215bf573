"""Verdict words (app/recogniser/engine/judgement/verdicts.py codes) as people read them: names, explanations, details."""
from __future__ import annotations

import math
from collections.abc import Mapping

from app.i18n import N_, Words, formats

VERDICT_WORDS = {
    "intact": N_("intact"),
    "lost": N_("lost"),
    "foreign": N_("foreign"),
    "garbage": N_("garbage"),
    "error": N_("refused"),  # the code says a chunk came back with an error: the server refused it
}

EXPLANATIONS = {
    "intact": N_("every symbol right"),
    "lost": N_("its state came back fresh or stale: the chunk reached a cell without its history"),
    "foreign": N_("it read state another session wrote"),
    "garbage": N_("padding or unreadable data was folded into its state"),
    "error": N_("the server refused a chunk"),
}

# The transcript board's badge per verdict.
BADGES = {
    "intact": N_("INTACT"),
    "lost": N_("CORRUPTED · state lost"),
    "foreign": N_("CORRUPTED · read another session's state"),
    "garbage": N_("CORRUPTED · padding/garbage in its state"),
    "error": N_("REFUSED by the server"),
}

# app/recogniser/engine/judgement/verdicts.Detail codes; {chunk} is the first wrong chunk, counted from 1.
DETAILS = {
    "refused": N_("chunk {chunk:count}: `{error:text}`"),
    "not_sent": N_("chunk {chunk:count}: not sent after an earlier refusal"),
    "read_padding": N_("chunk {chunk:count} ran on instance {instance:count}, slot {slot:count} and read state a padding row had written"),
    "misread": N_("chunk {chunk:count} ran on instance {instance:count}, slot {slot:count}; its state was right but its audio was misread"),
    "fresh_cell": N_("chunk {chunk:count} ran on instance {instance:count}, slot {slot:count} and read a fresh "
                     "cell ({state_in:count} instead of {should_read:count})"),
    "own_stale": N_("chunk {chunk:count} ran on instance {instance:count}, slot {slot:count} and read its own stale "
                    "state ({state_in:count} instead of {should_read:count})"),
    "other_session": N_("chunk {chunk:count} ran on instance {instance:count}, slot {slot:count} and read the state of session {other:count}"),
    "earlier_session": N_("chunk {chunk:count} ran on instance {instance:count}, slot {slot:count} and read the "
                          "state of an earlier session (tag {owner_tag:text})"),
}


def verdict(code: str, _: Words) -> str:
    """A verdict code (app/recogniser/engine/judgement/verdicts.SessionVerdict) as a word; also the {x:verdict} kind."""
    return _(VERDICT_WORDS[str(code)])


def explanation(code: str, _: Words) -> str:
    return _(EXPLANATIONS[str(code)])


def badge(code: str, _: Words) -> str:
    return _(BADGES[str(code)]) if str(code) in BADGES else str(code).upper()


def detail(row: object, _: Words) -> str:
    """A judged session's detail (a row of verdicts.judge, as a dict, Series or namedtuple) in _'s
    language; '' for an intact session."""
    get = row.get if hasattr(row, "get") else (lambda k, d=None: getattr(row, k, d))
    code = get("detail_code", "") or ""
    if not code:
        return ""
    first = get("first_wrong")
    chunk = None if first is None or (isinstance(first, float) and math.isnan(first)) else int(first) + 1
    values = dict(get("detail_values") or {})
    if values.get("other_session") is not None:
        values["other"] = int(values["other_session"]) + 1  # as people count sessions
    return _.render(DETAILS[code], chunk=chunk, **values)


def verdicts(value: Mapping[str, int], words: Words) -> str:
    """Verdict counts {code: n}: 'intact 6, foreign 2', the {x:verdicts} kind."""
    return words(N_(", ")).join(words.render(N_("{verdict:verdict} {n:count}"), verdict=k, n=v) for k, v in dict(value).items())


formats.register("verdict", verdict)
formats.register("verdicts", verdicts)
