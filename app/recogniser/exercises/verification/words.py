"""Words of the verification exercise (engine.py beside it); the checker's reports it
shows speak app/checker/words/labels.py's words."""
from __future__ import annotations

from app.i18n import N_

TITLE = N_("Verify before rollout: what must hold, and what must not be assumed")
SCENARIO = N_(
    "Before a release the team runs the rollout guide's checks with the lab's deployment checker. On the streaming "
    "recogniser under the sequence batcher: every session alone for its reference, then interleaved past the slots "
    "into the backlog, IDs reused after END, a session abandoned and one whose client gave up on a request. On the "
    "stateless sentiment classifier and on the same recogniser, both behind the dynamic batcher: every request alone "
    "twice, the same requests concurrently in batches of other compositions, and alone again after that traffic. "
    "Every answer is compared with the reference."
)
QUESTION = N_("Which model gives the same answers whatever the arrival order and the way requests are batched?")
OPTIONS = {
    "both": N_("Both: every request is computed the same way in any batch."),
    "sentiment": N_("Only the stateless sentiment classifier."),
    "recogniser": N_("Only the recogniser: its chunks carry all it needs."),
    "neither": N_("Neither: batching changes the numbers."),
}
NUMBERS = {
    "checks_held": N_("checks held"),
    "checks_broken": N_("checks broken"),
    "checks_skipped": N_("checks skipped"),
    "sequence_held": N_("recogniser under the sequence batcher: every check held"),
    "sentiment_same": N_("sentiment under the dynamic batcher: the same answers in every check"),
    "recogniser_same": N_("recogniser under the dynamic batcher: the same answers in every check"),
    "recogniser_wrong_steps": N_("recogniser under the dynamic batcher: requests that answered differently"),
}
FINDINGS = {
    # One per deployment checked, in the order they ran.
    "sequence": N_(
        "As expected: {as_expected:yes_no}. The recogniser under the sequence batcher (`{model:text}`, the lab's fix): "
        "{held:count} of {checks:count} checks held, {broken:count} broke, {skipped:count} skipped."
    ),
    "sentiment": N_(
        "As expected: {as_expected:yes_no}. The stateless sentiment model under the dynamic batcher (`{model:text}`): "
        "{held:count} of {checks:count} checks held, {broken:count} broke, {skipped:count} skipped; largest difference "
        "from its reference {diff:.1e}, tolerance {tolerance:.0e}."
    ),
    "recogniser": N_(
        "As expected: {as_expected:yes_no}. The recogniser under the dynamic batcher (`{model:text}`, the lab's "
        "mistake) must not be assumed to answer the same however it is batched: {held:count} of {checks:count} checks "
        "held, {broken:count} broke, {skipped:count} skipped."
    ),
    # The explanation, sentence by sentence.
    "why_stateless": N_(
        "A request to a stateless model carries everything its answer depends on, so it may share a batch with any "
        "others: the dynamic batcher groups requests freely (taking them from its queue in arrival order within a "
        "priority level), and the sentiment model answered every request as it did alone, within {diff:.1e} of "
        "its reference (the checker's tolerance {tolerance:.0e}: float sums over batches of other shapes may differ in "
        "the last bits, so float outputs are compared within a tolerance and labels exactly)."
    ),
    "why_sentiment_differed": N_(
        "The sentiment model answered a request differently on this run (its report names the first): a stateless "
        "model must not, so find what its answer depends on besides the request before it goes behind the dynamic "
        "batcher."
    ),
    "why_recogniser": N_(
        "The recogniser's chunk is not self-contained: the model keeps a running state per batch row of each "
        "instance, and behind the dynamic batcher no START ever resets it, so the same chunk sent alone a second time "
        "read what the chunks before it had left there: {wrong:count} of {compared:count} requests answered "
        "differently, and answers that do not repeat leave nothing to judge the other checks against."
    ),
    "why_recogniser_broke": N_(
        "The recogniser behind the dynamic batcher broke a check (its report says which, and what that says about the "
        "model): its answers depend on more than the request."
    ),
    "why_recogniser_held": N_(
        "The recogniser behind the dynamic batcher gave the same answers on this run, but its chunks still depend on "
        "state the dynamic batcher does not keep for them: that must not be assumed; run it again and compare."
    ),
    "why_sequence_passed": N_(
        "Under the sequence batcher the same recogniser held every check that ran: each session keeps one slot for its "
        "life, START resets the state the model keeps for that slot, and a slot left by an abandoned session is freed "
        "by the idle timeout and begins fresh with the next session's START."
    ),
    "why_sequence_failed": N_(
        "Under the sequence batcher some of the guide's checks broke on this run (see its report): do not roll out "
        "until they hold."
    ),
    "why_every_deployment": N_(
        "Run these checks on every new deployment and after every model change: they are cheap, and they catch the "
        "failures that unit tests with one client cannot."
    ),
    "why_your_own": N_(
        "The checker that ran here runs on a model of your own too: [Check a deployment](check?lang=en) under "
        "Practice, or `batching-lab check --model NAME` in a terminal."
    ),
}
STEPS = {
    "sequence": N_("The recogniser under the sequence batcher (`{model:text}`): the guide's checks"),
    "sentiment": N_("The sentiment model under the dynamic batcher (`{model:text}`): the guide's checks"),
    "recogniser": N_("The recogniser under the dynamic batcher (`{model:text}`): the guide's checks"),
    "waiting": N_("Waiting for `{model:text}`: {ahead:count} run(s) ahead of this check (about {expected:seconds})"),
}

# Each chart's message in words, beside it (figures.py beside it): numbers read off the chart.
CHART_SUMMARIES = {
    "counts": N_("The checker's verdicts: {deployments:text}."),
    "counts_item": N_("{deployment:text}: {held:count} held, {broken:count} broken, {skipped:count} skipped"),
    "broken": N_("{n:count} of {checks:count} checks broke: {which:text}."),
    "broken_item": N_("{check:text} ({variant:text}) on {deployment:text}"),
    "none_broken": N_("None of the {checks:count} checks broke."),
}
