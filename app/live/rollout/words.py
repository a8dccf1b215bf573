"""Words of lesson 7's live element: the lesson's words around the deployment checker's report
(codes of app/live/rollout/engine.py; the report's own words are in app/checker/words/)."""
from __future__ import annotations

from app.i18n import N_, Words

INTRO = N_(
    "Before a deployment goes out, the team runs the rollout guide's checks on it. Here the lab's deployment checker, "
    "the engine of the Check a deployment page and of `batching-lab check`, runs them on a deployment the lab ships "
    "and shows its report. Check a sound deployment, and the mistake too: a check that cannot fail proves nothing."
)
TARGETS = {
    "asr_sequence_direct": N_("the recogniser under the sequence batcher, direct strategy"),
    "asr_sequence_oldest": N_("the recogniser under the sequence batcher, oldest strategy"),
    "asr_dynamic": N_("the recogniser under the dynamic batcher (lesson 3's mistake)"),
    "sentiment": N_("the stateless sentiment model under the dynamic batcher"),
}
RESULT_FOR = N_("`{model:text}`:")
READINGS = {
    "sequence_held": N_(
        "every check that ran held. Interleaved sessions past the slots into the backlog, IDs reused after END, a "
        "session abandoned without END and one whose client gave up on a request left every session answering as it "
        "did alone. That is the evidence the guide asks for before a sequence deployment goes out; run the checks "
        "again after every change of model or config."
    ),
    "stateless_held": N_(
        "every check held: each request gave the same answer alone twice, concurrently in batches of other "
        "compositions, and alone again after that traffic. On this evidence its answers depend on the request alone, "
        "so this traffic may go behind the dynamic batcher."
    ),
    "recogniser_keeps_state": N_(
        "the same request, sent alone a second time, answered differently, so nothing else could be judged against it. "
        "The lab's recogniser keeps a running state per batch row of each instance; behind the dynamic batcher no "
        "START ever resets it and any request may land in any row, so each answer depends on whatever ran in that row "
        "before. This is lesson 3's mistake, caught before rollout: the same model code holds every check under the "
        "sequence batcher (asr_sequence_direct)."
    ),
    "broken": N_(
        "a check broke. The report below names the first session and step that diverged and what that says about "
        "the model: do not roll this deployment out until every check holds."
    ),
}


def target(model: str, _: Words) -> str:
    """A deployment in the lesson's list: its name and what it is."""
    return _.render(N_("{model:text}: {what:text}"), model=model, what=_(TARGETS[model]))
