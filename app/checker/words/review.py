"""The config review's findings (the codes of app/checker/engine/review/rules.py) in words: a title,
why it matters and the fix, per code; the lesson link comes from the rule's row (review.LESSONS)."""
from __future__ import annotations

from dataclasses import dataclass

from app.checker.engine import REVIEW_LESSONS, ReviewCode, ReviewFinding
from app.i18n import N_, Words

C = ReviewCode
_TO_UINT64 = N_("Declare the CORRID control as TYPE_UINT64, or keep every client's IDs at or below {largest:count}.")

# code: (title, why it matters, the fix); each template uses only the finding's values.
REVIEW_WORDS: dict[ReviewCode, tuple[str, str, str]] = {
    C.IDLE_TIMEOUT_DEFAULT: (
        N_("Idle timeout at Triton's 1 s default"),
        N_("Triton ends a sequence that gets no request for {idle_ms:ms} and frees its slot without telling the model, "
           "so a client that pauses longer loses its session and its next request is refused for lacking the START flag."),
        N_("Set max_sequence_idle_microseconds above the longest pause your clients make within a session, with a margin, "
           "but not so high that slots stay with clients that have gone."),
    ),
    C.IDLE_TIMEOUT_BELOW_THINK: (
        N_("Idle timeout shorter than your clients' think time"),
        N_("Your sessions pause up to {think_ms:ms} between requests, but Triton ends a sequence after {idle_ms:ms} without one: "
           "paused sessions are ended mid-stream, the model is not told, and their next request is refused for lacking the START flag."),
        N_("Raise max_sequence_idle_microseconds above {think_ms:ms}, with a margin for network and queue time."),
    ),
    C.DIRECT_WITHOUT_READY: (
        N_("direct without a READY control input"),
        N_("Under direct a batch has a row for every slot up to the highest one with a request ready, and each lower slot "
           "without a request gets a padding row whose inputs mean nothing ({slots:count} slots per instance here). Without "
           "READY a model can still spot those rows by their correlation ID, which is 0 (the CORRID control, or "
           "request.correlation_id() in a Python model); a model that keeps state per slot and checks neither folds them into "
           "the state of the sequence that holds the slot."),
        N_("Add a CONTROL_SEQUENCE_READY control input and have the model leave every state untouched on rows where it is false, "
           "or make sure the model skips every row whose correlation ID is 0."),
    ),
    C.CORRID_TRUNCATED: (
        N_("CORRID type too narrow for your IDs"),
        N_("Triton copies only the low bytes of each ID into a {data_type:text} CORRID, which holds at most {largest:count}; "
           "your clients send IDs up to {max_corrid:count}, so two sessions can reach the model with the same CORRID and share a state."),
        _TO_UINT64,
    ),
    C.CORRID_SIGN_WRAPS: (
        N_("CORRID type turns large IDs negative"),
        N_("A {data_type:text} CORRID is signed: IDs above {largest:count} (yours reach {max_corrid:count}) reach the model as negative "
           "numbers. Each stays distinct, but a model that logs, compares or looks up the client's number sees another one."),
        _TO_UINT64,
    ),
    C.CORRID_STRING_IDS_INTEGER_TYPE: (
        N_("String IDs sent to an integer CORRID"),
        N_("Triton 2.51 does not refuse a string ID here: it writes the string's 4-byte length and then its characters into the "
           "{bytes:count}-byte {data_type:text} CORRID, so the model gets no usable number, and an ID longer than {fits:count} "
           "bytes writes past that buffer."),
        N_("Declare the CORRID control as TYPE_STRING before any client sends string IDs (from release 25.01 Triton refuses "
           "a string ID for an integer CORRID with INVALID_ARG)."),
    ),
    C.CORRID_INTEGER_IDS_STRING_TYPE: (
        N_("Integer IDs sent to a string CORRID"),
        N_("For a TYPE_STRING CORRID Triton 2.51 fills a {buffer:count}-byte buffer by copying that many bytes from the 8-byte "
           "integer ID: the model reads the ID's low half as the string's length and whatever memory follows the ID as its text."),
        N_("Send string IDs to this model, or declare the CORRID control with an integer type such as TYPE_UINT64 (from "
           "release 25.01 Triton refuses an integer ID for a string CORRID with INVALID_ARG)."),
    ),
    C.STRING_ID_TOO_LONG: (
        N_("String IDs longer than Triton accepts"),
        N_("Triton's C API refuses a string correlation ID longer than {max_bytes:count} bytes with UNSUPPORTED before any "
           "scheduler sees the request, whether it came over HTTP, over gRPC or from a BLS call: your clients' IDs of "
           "{length:count} bytes are refused every time."),
        N_("Keep string correlation IDs to {max_bytes:count} bytes or fewer (a UUID in text is 36); later releases keep the "
           "same limit."),
    ),
    C.STRING_CORRID_PYTHON: (
        N_("A string CORRID on the Python backend"),
        N_("Before release 25.01 Triton hands a TYPE_STRING CORRID to the model in a {buffer:count}-byte buffer whatever the ID's "
           "length, and the Python backend reads the bytes after the ID as more strings: every request whose string ID is shorter "
           "than {fails_below:count} bytes fails with 'unexpected number of string elements'."),
        N_("Leave the CORRID control out and read the ID in model.py with request.correlation_id(), which returns a string ID as "
           "a str, or move to release 25.01 or later, which sizes the buffer to each ID."),
    ),
    C.IMPLICIT_STATE_UNSUPPORTED: (
        N_("Implicit state on a backend without it"),
        N_("Implicit state management needs the backend's support, and only {supported:text} have it: on the {backend:text} "
           "backend the model cannot count on Triton to carry the state tensors from one request of a sequence to the next."),
        N_("Keep the state in the model (keyed by correlation ID, or by slot under direct) and remove the state section, "
           "or serve the model from a backend that supports implicit state."),
    ),
    C.IMPLICIT_STATE_ORDER: (
        N_("Implicit states fed back into the wrong inputs"),
        N_("Triton pairs each output state with the input state at the same place in name order, not with the input_name its "
           "entry declares (server issue 8586, open, and still so in release 26.06). Here the output names sort differently from "
           "the input names, so from the second request of a sequence on, {crossed:count} of the {states:count} states go back "
           "into another state's input: {output:text} is fed into {fed_into:text} instead of {declared:text}. The model then reads "
           "another state's values, or gets a shape it refuses."),
        N_("Rename the state tensors, in the model and in the config, so that the input names and the output names sort in the "
           "same order, for example with one stem per pair after a common prefix (in_<stem>, out_<stem>). The fix proposed in core "
           "pull request 506 is not in release 26.06, the newest checked here."),
    ),
    C.WARMUP_STRING_CORRID: (
        N_("Warmup that keeps a string-CORRID model from loading"),
        N_("From release 25.01 (server {since:text}) Triton checks each request's correlation ID type against the CORRID control, "
           "warmup requests included. A warmup request carries no ID, which counts as the integer 0, so on Triton {version:text} "
           "the warmup is refused for the TYPE_STRING of {control:text} ('data-type is UINT64, but model ... expects BYTES'): the "
           "model's instances are not created and the model does not load (server issue 8110)."),
        N_("Remove model_warmup from this config and warm the model up with a first sequence of your own, with a string ID, once "
           "it has loaded; or, if your clients send integer IDs, declare the CORRID control with an integer type."),
    ),
    C.DIRECT_QUEUE_DELAY_IGNORED: (
        N_("Queue delay that direct ignores"),
        N_("Under direct, max_queue_delay_microseconds ({delay_us:count} µs here) has no effect unless minimum_slot_utilization "
           "is above 0: a batch runs as soon as any slot is ready."),
        N_("Remove the delay, or set minimum_slot_utilization to the share of slots a batch should wait for, knowing that each "
           "request may then wait up to the delay."),
    ),
    C.PREFERRED_ABOVE_MAX: (
        N_("Preferred batch size above max_batch_size"),
        N_("Triton refuses to load a config whose preferred batch size ({preferred:count}) is larger than max_batch_size "
           "({max_batch_size:count})."),
        N_("Lower the preferred sizes to max_batch_size or less, or leave preferred_batch_size out unless one size is measured "
           "to run markedly faster."),
    ),
    C.CAPACITY_BELOW_SESSIONS: (
        N_("Fewer sequence slots than sessions"),
        N_("{instances:count} instances × {slots:count} slots hold {capacity:count} sequences at once; with {sessions:count} "
           "sessions open the rest wait in a backlog with no limit until a sequence ends or is ended for idling, and a client "
           "that waits for each reply stalls there."),
        N_("Raise the slots (max_batch_size under direct, max_candidate_sequences under oldest) or the instance count until "
           "instances × slots covers your peak sessions."),
    ),
    C.DIRECT_ONE_SLOT: (
        N_("One sequence per instance"),
        N_("With max_batch_size {max_batch_size:count}, direct gives each instance a single slot: the deployment holds only as "
           "many sequences at once as it has instances."),
        N_("If the model can batch along a first dimension, set max_batch_size to the sequences each instance should hold; "
           "otherwise add instances for the sessions you expect."),
    ),
    C.DYNAMIC_NO_BATCHING: (
        N_("Dynamic batcher that cannot batch"),
        N_("With max_batch_size {max_batch_size:count} the dynamic batcher never puts two requests into one execution: it "
           "only queues them for the instances."),
        N_("If the model can batch along a first dimension, set max_batch_size to the largest batch it accepts; otherwise "
           "drop dynamic_batching, which cannot group anything for it."),
    ),
    C.OLDEST_WITHOUT_CORRID: (
        N_("oldest without a CORRID control input"),
        N_("Under oldest one instance keeps up to {candidates:count} sequences open at once, and the row a request runs in "
           "says nothing about which of them it belongs to; Triton's docs say such a model typically needs the CORRID control "
           "to know. A model that keeps its own state per row mixes sessions, even with max_batch_size 1."),
        N_("Add a CONTROL_SEQUENCE_CORRID control input and key the model's state by it (a Python model can also read "
           "request.correlation_id()), or use direct if the model keeps state per slot."),
    ),
    C.DECOUPLED_PRESERVE_ORDERING: (
        N_("preserve_ordering on a decoupled model"),
        N_("For a decoupled model under oldest, preserve_ordering can hold back the responses of independent sequences until "
           "earlier requests complete, which costs throughput."),
        N_("Turn preserve_ordering off and keep each sequence's responses in order another way, for example with one gRPC "
           "stream per sequence. Releases 25.09 to 26.07 do not keep the order it promises anyway (a change in core pull "
           "request 449, undone by pull request 520 in 26.08)."),
    ),
    C.ITERATIVE_NOT_DECOUPLED: (
        N_("Iterative sequence without a decoupled transaction policy"),
        N_("Triton runs each request of an iterative sequence again and again until the model completes it. A model that is "
           "not decoupled sends one response per request, so the client hears nothing until the whole answer is ready: no "
           "token streams back while the request generates."),
        N_("Set decoupled: true in model_transaction_policy and send a response at each step through the request's response "
           "sender, the last one with the final flag, if clients should see the answer as it is made."),
    ),
    C.ITERATIVE_CANDIDATES_BELOW_BATCH: (
        N_("Fewer candidate sequences than batch rows in an iterative sequence"),
        N_("Under oldest a batch takes its requests from the candidate sequences only, and each request of an iterative "
           "sequence is a sequence of its own, so an execution holds at most {candidates:count} requests of the "
           "{max_batch_size:count} max_batch_size allows; the requests beyond wait in the backlog."),
        N_("Raise max_candidate_sequences to at least max_batch_size, so every row of an execution can carry a request in flight."),
    ),
    C.ITERATIVE_ZERO_QUEUE_DELAY: (
        N_("Iterative sequence with no queue delay under oldest"),
        N_("A request the model reschedules goes back to the queue like a new one: the Python backend puts a step's requests "
           "back one at a time before the execution ends. Under oldest each instance's batcher forms the next batch as soon as "
           "a request is queued, without waiting for the instance, so with max_queue_delay_microseconds 0 it can form it from the "
           "first request back, and executions may run with fewer of the in-flight requests than max_batch_size "
           "({max_batch_size:count}) would allow."),
        N_("Give the oldest strategy a small max_queue_delay_microseconds (a fraction of one step's time) so that rescheduled "
           "requests can rejoin the same execution, and measure the gain."),
    ),
    C.RESPONSE_CACHE_HIDES_STATE: (
        N_("Response cache: repeated requests do not reach the model"),
        N_("When the response cache is on (response_cache here and --cache-config on the server), Triton answers a request whose "
           "model, version and inputs it has seen before with the outputs it stored, without running the model. Repeating "
           "requests then cannot show whether the model's answers depend on anything but their inputs: a model that keeps state "
           "gets the stored answers back unchanged, so the checker skips its lone-repeat, batch and after-traffic checks when "
           "the server answers them from the cache."),
        N_("Check the model for state on a server without a response cache, or with response_cache off, before you turn the "
           "cache on; keep the cache only for a model whose answers depend on nothing but their inputs."),
    ),
    C.NO_ROLLBACK_VERSION: (
        N_("No older version stays loaded for a rollback"),
        N_("Under its version policy ({policy:text}, versions served: {served:count}) Triton keeps no second version loaded: "
           "once a new version is served the old one is unloaded, and going back means loading it again."),
        N_("Set version_policy to latest with num_versions 2, or list the old and new versions under specific, so the old "
           "version keeps serving beside the new one until the rollout is done."),
    ),
    C.NO_CONFIG_FILE: (
        N_("No config.pbtxt to review"),
        N_("Triton may generate this model's config when it loads it, so the offline review cannot see the settings it will use."),
        N_("Review the config the server reports for the model (GET /v2/models/<name>/config), or write a config.pbtxt."),
    ),
    C.NOT_CHECKED: (
        N_("Not checked: {check:text}"),
        N_("This check needs {needs:text}, which was not given."),
        N_("Give that figure and review again."),
    ),
}

# What a NOT_CHECKED finding's `check` (a code) did not compare.
NOT_CHECKED_SUBJECTS: dict[ReviewCode, str] = {
    C.IDLE_TIMEOUT_BELOW_THINK: N_("the idle timeout against your clients' think time"),
    C.CORRID_TRUNCATED: N_("the CORRID type against your correlation IDs"),
    C.CAPACITY_BELOW_SESSIONS: N_("the sequence capacity against your sessions"),
    C.IMPLICIT_STATE_UNSUPPORTED: N_("whether the backend supports implicit state"),
    C.WARMUP_STRING_CORRID: N_("whether the model loads with its warmup and a TYPE_STRING CORRID"),
}

# A NOT_CHECKED finding's `needs` (figure names, app/checker/engine/review.Expectations).
NEEDS: dict[str, str] = {
    "think_ms": N_("the longest pause between two requests of a session"),
    "sessions": N_("how many sessions are open at once at peak"),
    "client_ids": N_("the largest integer correlation ID or the longest string ID your clients send"),
    "backend": N_("the backend that serves the model"),
    "gpus": N_("how many GPUs the server's instances can use"),
    "triton_version": N_("the Triton server version it runs on (release 24.10 is 2.51.0, 25.01 is 2.54.0)"),
}

# Capitalised: the verdict word "error" and the log level "error" are other msgids with other meanings.
SEVERITY_WORDS = {"error": N_("Error"), "warning": N_("Warning"), "info": N_("Note")}


@dataclass(frozen=True)
class FindingWords:
    severity: str
    title: str
    why: str
    fix: str
    lesson: str  # 'lesson-id#anchor' (app/content/lessons.resolve_link)


def finding_words(finding: ReviewFinding, _: Words) -> FindingWords:
    """One finding in _'s language."""
    title, why, fix = REVIEW_WORDS[ReviewCode(finding.code)]
    values = dict(finding.values)
    if "supported" in values:
        values["supported"] = _(", ").join(values["supported"])
    if finding.code == C.NOT_CHECKED:
        values["check"] = _(NOT_CHECKED_SUBJECTS[ReviewCode(values["check"])])
        values["needs"] = _("; ").join(_(NEEDS[need]) for need in values["needs"])
    return FindingWords(
        severity=_(SEVERITY_WORDS[str(finding.severity)]),
        title=_.render(title, **values),
        why=_.render(why, **values),
        fix=_.render(fix, **values),
        # A check left undone points at the lesson of the pitfall it would have looked for.
        lesson=REVIEW_LESSONS[ReviewCode(finding.values["check"] if finding.code == C.NOT_CHECKED else finding.code)],
    )
