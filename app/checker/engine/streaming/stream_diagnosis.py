"""What went wrong with one response stream, from the streams alone: pure, model-agnostic, codes and values.

A stream is compared response by response with its reference (the same request alone), every
compared output within its tolerance (compare.py). Where it differs, the class says how:

  never_ended   no final response came: the client heard nothing for the idle limit (or the
                stream ran past streams.MAX_RESPONSES), and gave up;
  failed        the server answered the request with an error;
  foreign       from the first wrong response on, the stream continues ANOTHER request's lone
                stream at some step: `source` names that request and step (the longest run of
                responses that match, at least MIN_RUN, or a single response that matches
                exactly one candidate); `origins` says, response by response, whose lone
                stream each wrong response was, where only one matches, and otherwise
                `among` which requests it was (two requests taking turns on one cell give
                responses that match other streams one at a time, not in runs);
  mixed         the first wrong response matches no lone response whole, but some of its outputs
                equal those of exactly one other request's lone response, more of them than
                any other's: part of that request's state went into it (`source`, `outputs`);
  lost          from the first wrong response on, the stream starts over as its own request's
                lone stream from its first response: the state was lost (the model began afresh);
  ended_early   every response it sent matches, but it ended with fewer than its reference;
  ended_late    every response of its reference matches, and more came after them;
  other         none of these explains what it got.

Nothing here knows the model: a response is compared as a whole, every output at once. Where
the streams were sent together, a request sent after a wrong response arrived cannot be whose
state it read, so it is no candidate (`sent`: each request's send time on the responses' clock).
"""
from __future__ import annotations

from app.checker.engine import compare
from app.checker.engine.aliases import Arrays, Values
from app.checker.engine.streaming.streams import Stream

NEVER_ENDED, FAILED, FOREIGN, MIXED, LOST, ENDED_EARLY, ENDED_LATE, OTHER = (
    "never_ended", "failed", "foreign", "mixed", "lost", "ended_early", "ended_late", "other")
CLASSES = (FOREIGN, MIXED, LOST, NEVER_ENDED, ENDED_EARLY, ENDED_LATE, FAILED, OTHER)  # most telling first
MIN_RUN = 2  # responses in a row that must match another stream to name it

Response = Arrays


class Comparer:
    """Responses compared output by output: `types` {output: datatype}, `limits` {output: tolerance}."""

    def __init__(self, types: dict[str, str], limits: dict[str, float]):
        self.types, self.limits = types, limits

    def differences(self, ref: Response | None, got: Response | None) -> dict[str, float]:
        return {name: compare.difference(None if ref is None else ref.get(name), None if got is None else got.get(name), datatype)
                for name, datatype in self.types.items()}

    def same(self, ref: Response, got: Response) -> bool:
        return all(d <= self.limits[n] for n, d in self.differences(ref, got).items())

    def first_wrong(self, got: list[Response], ref: list[Response]) -> int | None:
        """The first response (from 0) where the two differ, counting a missing or extra one; None: equal."""
        for r in range(min(len(got), len(ref))):
            if not self.same(ref[r], got[r]):
                return r
        return None if len(got) == len(ref) else min(len(got), len(ref))

    def run(self, got: list[Response], start: int, ref: list[Response], at: int) -> int:
        """How many responses in a row, got[start:] against ref[at:], match."""
        n = 0
        while start + n < len(got) and at + n < len(ref) and self.same(ref[at + n], got[start + n]):
            n += 1
        return n


def classify(got: Stream, own: Stream, others: dict[int, Stream], comparer: Comparer,
             sent: dict[int, float] | None = None) -> Values | None:
    """None when `got` matches its reference `own` response for response and ended; else one entry:
    request, class, step (the first wrong response, from 0), responses, expected (the reference's
    count), matched and compared (foreign and lost: responses that matched from step on, of those
    that could), source {request, step} (foreign: whose lone stream it continued, and where)."""
    wrong = comparer.first_wrong(got.responses, own.responses)
    entry: Values = {"request": got.request, "step": wrong, "responses": len(got.responses),
                             "expected": len(own.responses), "matched": 0, "compared": 0, "source": None}
    if got.error:
        return {**entry, "class": FAILED, "step": wrong if wrong is not None else len(got.responses), "error": got.error}
    if not got.ended:
        return {**entry, "class": NEVER_ENDED, "step": len(got.responses) if wrong is None else wrong, "given_up": got.given_up}
    if wrong is None:
        return None
    if wrong >= len(got.responses):
        return {**entry, "class": ENDED_EARLY}
    if wrong >= len(own.responses):
        return {**entry, "class": ENDED_LATE}
    left = len(got.responses) - wrong
    restarted = comparer.run(got.responses, wrong, own.responses, 0)
    if restarted >= min(MIN_RUN, left):
        return {**entry, "class": LOST, "matched": restarted, "compared": min(left, len(own.responses))}
    if sent is not None and wrong < len(got.times):
        others = {r: s for r, s in others.items() if sent.get(r, float("-inf")) <= got.times[wrong]}
    found = _continued(got, wrong, others, comparer)
    entry["origins"] = origins(got, wrong, {**others, got.request: own}, comparer)
    if found is not None:
        source, at, length, compared = found
        return {**entry, "class": FOREIGN, "matched": length, "compared": compared, "source": {"request": source, "step": at}}
    partial = _partly(got.responses[wrong], got.request, others, comparer)
    if partial is not None:
        source, at, outputs = partial
        return {**entry, "class": MIXED, "source": {"request": source, "step": at}, "outputs": outputs}
    return {**entry, "class": OTHER}


def _partly(response: Response, own: int, others: dict[int, Stream], comparer: Comparer) -> tuple[int, int, list[str]] | None:
    """(request, step, outputs) of the one other lone response sharing the most outputs with
    `response` (at least one, not all); None where none does, or two share as many."""
    best: list[tuple[int, int, list[str]]] = []
    top = 0
    for request, other in others.items():
        if request == own:
            continue
        for at, ref in enumerate(other.responses):
            equal = [n for n, d in comparer.differences(ref, response).items() if d <= comparer.limits[n]]
            if len(equal) > top:
                top, best = len(equal), [(request, at, equal)]
            elif len(equal) == top and top:
                best.append((request, at, equal))
    return best[0] if top and len(best) == 1 and top < len(comparer.types) else None


def _continued(got: Stream, wrong: int, others: dict[int, Stream], comparer: Comparer) -> tuple[int, int, int, int] | None:
    """(request, step, matched, compared) of the other lone stream that got continues from its
    first wrong response: the longest run of matching responses, at least MIN_RUN where that many
    remain; a single one only when exactly one candidate matches it."""
    candidates = []
    for request, other in others.items():
        if request == got.request:
            continue
        for at in range(len(other.responses)):
            length = comparer.run(got.responses, wrong, other.responses, at)
            if length:
                compared = min(len(got.responses) - wrong, len(other.responses) - at)
                candidates.append((length, compared, request, at))
    if not candidates:
        return None
    candidates.sort(key=lambda c: (-c[0], c[2], c[3]))
    length, compared, request, at = candidates[0]
    if length >= MIN_RUN or len(candidates) == 1:
        return request, at, length, compared
    return None


def origins(got: Stream, wrong: int, refs: dict[int, Stream], comparer: Comparer, limit: int = 8) -> list[Values]:
    """For each response from the first wrong one on (at most `limit`): the lone stream and step it
    is, where exactly one lone response (of any request, its own included) matches it; where
    several do, `among` lists their requests."""
    out: list[Values] = []
    for r in range(wrong, min(len(got.responses), wrong + limit)):
        found = [(request, at) for request, other in refs.items() for at, response in enumerate(other.responses)
                 if comparer.same(response, got.responses[r])]
        if len(found) == 1:
            out.append({"response": r, "request": found[0][0], "step": found[0][1]})
        else:
            out.append({"response": r, **({"among": sorted({request for request, _at in found})} if found else {})})
    return out


def headline(entries: list[Values]) -> str | None:
    """The most telling class among the entries (CLASSES' order), or None when there are none."""
    found = {e["class"] for e in entries}
    return next((c for c in CLASSES if c in found), None)
