"""Words of the sticky_routing exercise (engine.py beside it)."""
from __future__ import annotations

from app.i18n import N_

TITLE = N_("Sticky routing: two replicas behind a load balancer")
SCENARIO = N_(
    "Traffic grew, so the recogniser now runs on two Triton servers (replicas), each with the direct sequence "
    "batcher, behind an nginx load balancer left at its default policy, round robin. 3 clients stream through "
    "the balancer's address; every request carries the client's session in an X-Session-ID header, and the "
    "correlation ID as usual."
)
QUESTION = N_("What happens to the streams under round robin?")
OPTIONS = {
    "intact": N_("Every transcript is intact: the balancer only spreads the load."),
    "refused": N_("A session's chunks land on both replicas, and the replica that never saw its START refuses them."),
    "garbled": N_("Each replica continues from its own half of the state: garbled text, but no errors."),
}
NUMBERS = {
    "rr_sessions_broken": N_("round robin: sessions broken"),
    "rr_sessions_on_both_replicas": N_("round robin: sessions that reached both replicas"),
    "rr_refused_chunks": N_("round robin: chunks refused"),
    "rr_requests_per_replica": N_("round robin: requests per replica"),
    "sticky_intact": N_("hash on the session: every session intact"),
    "sticky_sessions_on_one_replica": N_("hash on the session: sessions that stayed on one replica"),
    "sticky_requests_per_replica": N_("hash on the session: requests per replica"),
    "sessions": N_("sessions"),
}
FINDINGS = {
    # findings
    "rr_spread": N_(
        "Round robin: {both:count} of {sessions:count} sessions reached both replicas; {broken:count} broke "
        "({verdicts:verdicts})."
    ),
    "rr_per_replica": N_("Round robin requests per replica: {per_replica:text}."),
    "sticky_intact": N_(
        "Hash on the session: {one:count} of {sessions:count} sessions stayed on one replica; all intact; "
        "requests per replica: {per_replica:text}."
    ),
    "sticky_verdicts": N_(
        "Hash on the session: {one:count} of {sessions:count} sessions stayed on one replica; verdicts "
        "{verdicts:verdicts}; requests per replica: {per_replica:text}."
    ),
    "refusal": N_("{who:session}, chunk {chunk:count} went to replica {replica:text} (HTTP {status:count}): `{message:text}`"),
    # explanation
    "one_process": N_(
        "A sequence lives in one Triton server: its slot, its idle timer and the model's state are all in that "
        "process, and the replicas share nothing."
    ),
    "per_request": N_(
        "nginx's default round robin picks a replica per request, not per session, so a stream's chunks alternate "
        "between replicas (its access log, $upstream_addr per X-Request-ID, shows each chunk's replica)."
    ),
    "refused": N_(
        "The first chunk that reaches the replica that never saw the session's START is refused "
        "(\"`{refusal:text}` ...\"), and even a balancer that let it through would leave each replica with half the history."
    ),
    "hash_intact": N_(
        "`hash $http_x_session_id consistent;` routes on the session, so every chunk of a session reaches the same "
        "replica and the sessions came back intact; different sessions may still go to different replicas "
        "(here: {per_replica:text})."
    ),
    "hash_verdicts": N_(
        "`hash $http_x_session_id consistent;` routes on the session, so every chunk of a session reaches the same "
        "replica, and the sessions came back with verdicts {verdicts:verdicts}; different sessions may still go to "
        "different replicas (here: {per_replica:text})."
    ),
    "consistent": N_(
        "Consistent hashing also moves only a fraction of sessions when a replica is added or removed, and those "
        "moved sessions do lose their state: stateful streams need the route to stay fixed for their whole life."
    ),
}
STEPS = {
    "nginx": N_("Checking for nginx"),
    "replicas": N_("Starting two Triton replicas (about 15 s on two cores)"),
    "policy_round_robin": N_("nginx with round robin (its default): {sessions:count} sessions"),
    "policy_sticky": N_("nginx with hash $http_x_session_id consistent: {sessions:count} sessions"),
    "stopping": N_("Stopping the replicas and the proxy"),
    "measuring": N_("Measuring"),
}

# Each chart's message in words, beside it (figures.py beside it): numbers read off the chart.
CHART_SUMMARIES = {
    "routing": N_("Which replica served each chunk: {policies:text}."),
    "policy_item": N_("{policy:text}: {moved:count} of {sessions:count} sessions moved between replicas, {right:count} "
                      "chunks right, {wrong:count} wrong, {refused:count} refused"),
}
