"""Words of the verification exercise (app/lab/exercises/verification.py)."""
from __future__ import annotations

from app.i18n import N_

TITLE = N_("Verify before rollout: what must hold, and what must not be assumed")
SCENARIO = N_(
    "Before a release the team runs the rollout guide's experiments on the real server: interleaved "
    "sessions with recognisable text, a new session on a slot another just ended, a session cancelled "
    "half-way, and the same inputs sent in different arrival orders and batch splits, both to the "
    "stateless sentiment classifier (dynamic batcher) and to the streaming recogniser behind the "
    "dynamic batcher."
)
QUESTION = N_("Which model gives the same answers whatever the arrival order and the way requests are batched?")
OPTIONS = {
    "both": N_("Both: every request is computed the same way in any batch."),
    "sentiment": N_("Only the stateless sentiment classifier."),
    "recogniser": N_("Only the recogniser: its chunks carry all it needs."),
    "neither": N_("Neither: batching changes the numbers."),
}
NUMBERS = {
    "checks_as_expected": N_("checks as expected"),
    "checks": N_("checks run"),
    "sentiment_identical": N_("sentiment identical in every order and split"),
    "sentiment_max_score_diff": N_("sentiment: largest score difference"),
    "recogniser_dynamic_consistent": N_("recogniser behind the dynamic batcher consistent"),
    "recogniser_dynamic_wrong_symbols": N_("recogniser behind the dynamic batcher: wrong symbols"),
}
FINDINGS = {
    # One per check of the guide, in the order they ran.
    "interleaved": N_(
        "As expected: {as_expected:yes_no}. {sessions:count} interleaved sessions stay intact, each reading only "
        "its own state: {verdicts:verdicts}; only their own state read: {own:yes_no}."
    ),
    "after_end": N_(
        "As expected: {as_expected:yes_no}. A new sequence after END inherits nothing (same slot, first chunk "
        "fresh): STATE_IN {state_in:count}, STATE_OWNER {state_owner:text}, slot reused: {reused:yes_no}."
    ),
    "cancelled": N_(
        "As expected: {as_expected:yes_no}. A session cancelled mid-way (no END) does not pollute the next one on "
        "its slot: the next one is {verdict:verdict}, its first chunk read STATE_OWNER {state_owner:text}, and it "
        "waited {wait:ms} for the slot."
    ),
    "sentiment": N_(
        "As expected: {as_expected:yes_no}. The stateless sentiment model gives identical results in any order "
        "and batch split: largest score difference {diff:.2e} (tolerance {tolerance:.0e}); labels identical: "
        "{labels_identical:yes_no}."
    ),
    "recogniser": N_(
        "As expected: {as_expected:yes_no}. The recogniser behind the dynamic batcher is NOT order-invariant "
        "(this must not be assumed): one at a time {alone:verdicts}; all at once {together:verdicts}."
    ),
    # The explanation, sentence by sentence.
    "why_stateless": N_(
        "A request to a stateless model carries everything its answer depends on, so the dynamic batcher may "
        "reorder and group requests freely: the sentiment labels were identical in every order and split, and "
        "scores agreed to {diff:.1e} (float sums over different batch shapes may differ in the last bits, so "
        "compare scores with a tolerance and labels exactly)."
    ),
    "why_recogniser": N_(
        "The recogniser's chunk is not self-contained: its answer depends on state left by the session's earlier "
        "chunks, and behind the dynamic batcher a chunk lands in whatever row of whatever instance is free, so its "
        "transcripts changed with arrival order and were wrong in {wrong:count} symbols."
    ),
    "why_sequence_passed": N_(
        "Under the sequence batcher the same model passed the guide's checks: interleaved sessions read only their "
        "own state, a START on a reused slot began fresh, and a cancelled session's leftover state did not leak, "
        "because START resets the state and the idle timeout freed the slot."
    ),
    "why_sequence_failed": N_(
        "Under the sequence batcher some of the guide's checks failed on this run (see the table): do not roll "
        "out until they pass."
    ),
    "why_every_deployment": N_(
        "Run these checks on every new deployment and after every model change; they take seconds and catch the "
        "failures that unit tests with one client cannot."
    ),
    "why_your_own": N_(
        "The same checks, and those the guide adds (IDs reused after END, sessions abandoned or timed out, one instance "
        "against several), run on a model of your own: [Check a deployment](check?lang=en) under Practice, or "
        "`batching-lab check --model NAME` in a terminal."
    ),
}
STEPS = {
    "interleaved": N_("{sessions:count} interleaved sessions on the direct deployment"),
    "deploy_one_slot": N_("Deploying 1 instance × 1 slot, idle timeout {timeout:seconds}"),
    "after_end": N_("A new session after END, on the same slot"),
    "cancelled": N_("A session cancelled after {chunks:count} chunks, then a new one on its slot"),
    "sentiment": N_("Sentiment: same reviews, {modes:count} orders and batch splits"),
    "recogniser": N_("Recogniser behind the dynamic batcher: one at a time, then all at once"),
    "measuring": N_("Measuring"),
}
