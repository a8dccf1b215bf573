"""Words of the deployment checker (app/checker/engine): checks, verdicts, reasons, problems, summary.

English templates marked with N_(); the engine's codes pick them, its values fill them. PROBLEMS words
the codes of what stops a check (LabError): whoever shows such an error hands them to
app/text/errors.explain as `wording`, or calls error() below. The config review's words are in
review.py, the decoupled path's in streams.py, the check page's own in page.py.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from app.checker.engine import LAB_TRITON_VERSION, dims_text
from app.checker.words import streams as streams
from app.checker.words.review import finding_words
from app.i18n import N_, Words
from app.text import problems

if TYPE_CHECKING:
    from app.checker.engine import CheckResult, CheckVerdict, InputsUsed, ReviewFinding

CHECKS = {
    "reference": N_("each session alone, twice: the model answers the same"),
    "interleaved": N_("interleaved sessions, slots full and a backlog: each session hears only its own history"),
    "id_reuse": N_("IDs reused after END, on freed slots: a new sequence inherits nothing"),
    "abandoned": N_("a session abandoned without END: nobody else changes, nor the next session on its slot"),
    "cancelled": N_("a session whose client gave up on a request (timed out): nobody else changes, nor the next session on its slot"),
    "slow_client": N_("a client quiet longer than the idle timeout, then back: its late step is refused, its session started over "
                      "from START under the same ID answers as alone, its neighbours too, and nothing is left behind"),
    "repeat_alone": N_("each request alone, twice: the same answer"),
    "batch_composition": N_("the same requests concurrently, in batches of other compositions: the same answers"),
    "after_traffic": N_("each request alone again, after other traffic, in another order: the same answers"),
    "golden": N_("every reply against the golden outputs in the data file's validation_data"),
    "finite": N_("every float output a number: no NaN, no Inf"),
}
VARIANTS = {
    "alone": N_("alone"),
    "all_instances": N_("all instances"),
    "one_instance": N_("one instance"),
}
ROLES = {
    "alone": N_("alone"), "interleaved": N_("interleaved"), "first_use": N_("first use of its ID"),
    "reuse": N_("reusing an ended sequence's ID"), "chain": N_("reusing one ID, alone"), "holder": N_("holding a slot"),
    "victim_abandon": N_("the abandoned session"), "victim_cancel": N_("the session that timed out"),
    "follower": N_("next on a freed slot"), "victim_slow": N_("the client quiet past the idle timeout"),
    "neighbour": N_("beside the quiet client"), "restart": N_("the quiet client, started over"),
    "c1": N_("concurrent, first order"), "c2": N_("concurrent, second order"),
}
VERDICTS = {"held": N_("HELD"), "broken": N_("BROKEN"), "skipped": N_("SKIPPED"), "not_exercised": N_("NOT EXERCISED")}
# A check not exercised (app/checker/engine/witness.py): what its witness says did not happen ...
NOT_EXERCISED = {
    "no_batch_formed": N_("every reply matched, but no execution ran more than one request ({executions:count} executions, "
                          "batch sizes {sizes:text}), so this says nothing about batches"),
    "no_stream_overlap": N_("every response matched, but the streams did not share executions (streams in flight together: "
                            "{overlapping:count}; largest batch the server ran: {largest:text}), so this says nothing about "
                            "streams that share them"),
    "no_statistics": N_("every reply matched, but the server's statistics did not say which batches ran, so nothing shows "
                        "that batches of several requests formed"),
    "nothing_compared": N_("no reply was compared, so this check saw nothing"),
    "no_backlog": N_("every session matched, but at most {max_open:count} sequences were open at once, no more than the "
                     "{capacity:count} slots, so no sequence had to wait for a slot"),
    "no_reuse_on_freed_slot": N_("every session matched, but the server's log placed no reused ID on a slot an earlier sequence "
                                 "of that ID had used, so nothing could inherit from it"),
    "slot_not_reused": N_("every session matched, but the server's log placed no session on the abandoned session's slot, so "
                          "nothing shows what a sequence there inherits"),
    "ended_before_cancel": N_("the request to cancel ended before its client could cancel it, so no cancel landed mid-stream"),
    "not_reaped": N_("the client was quiet for {quiet:seconds}, past the idle timeout of {idle:seconds}, yet the server still "
                     "answered its late step: its sequence had not been ended, so nothing shows what a client that comes back "
                     "after the reaper meets"),
    "late_step_failed": N_("the quiet client's late step failed otherwise than as a sequence the server no longer knew, so "
                           "nothing shows that the reaper had ended it"),
}
# ... and what would exercise it.
WITNESS_ADVICE = {
    "cannot_batch": N_("the model's max_batch_size is {max_batch_size:count}, so Triton never puts two requests in one "
                       "execution: nothing to test unless the deployment batches"),
    "more_load": N_("to make it happen, send more sessions at once (--sessions) or let batches form (a dynamic_batching queue delay, "
                    "max_queue_delay_microseconds, or a preferred_batch_size above 1)"),
    "longer_sessions": N_("to make it happen, send longer sessions (--steps), so the sessions holding the other slots still hold "
                          "them when the idle reaper frees the abandoned one (after max_sequence_idle_microseconds)"),
    "more_sessions": N_("to make it happen, send more sessions than instances × slots (--sessions)"),
    "longer_streams": N_("to make it happen, give inputs whose streams are longer (--input-data)"),
    "spread_replicas": N_("to make it happen, keep every replica up behind the balancer and send more sessions (--sessions); "
                          "a balancer that hashes on a header spreads only sessions whose header differs (--session-header)"),
    "reaper_late": N_("to make it happen, run the check again on a less loaded server, and make sure the server runs the "
                      "config's max_sequence_idle_microseconds"),
}
SKIP_REASONS = {
    "not_reproducible": N_("the reference is not reproducible, so nothing can be compared with it"),
    "not_requested": N_("not asked for (--no-one-instance)"),
    "single_instance": N_("the model has one instance: the all-instances run is the one-instance run"),
    "external_server": N_("the server {url:text} is not the checker's own: it has no model files there to load a one-instance copy from"),
    "no_model_files": N_("the checker does not have {model:text}'s files, so it cannot load a one-instance copy"),
    "copy_refused": N_("the server refused to load the one-instance copy (`{message:text}`); explicit model control is needed"),
    "sessions_too_short": N_("every session is shorter than 3 steps ({steps:count}): none can stop half-way"),
    "all_refused": N_("the server refused every request of this check"),
    "nothing_compared": N_("no step had a reference to compare with"),
    "response_cache": N_("the server answered {cache_hits:count} of the {requests:count} repeated lone requests from its response "
                         "cache without running the model, and would answer these the same way, so repeating requests cannot "
                         "show state here: check the model on a server without a response cache"),
    "response_cache_unknown": N_("the model has the response cache on and the server's statistics do not say whether it answered "
                                 "from its cache, so a repeated request may never have reached the model"),
    "cancel_not_delivered": N_("the request the client gave up on never reached the server (the trace has no record of it), so "
                               "this run shows nothing a cancelled request does"),
    "reference_non_finite": N_("the reference holds NaN or Inf, which equal nothing, so nothing can be compared with it"),
    "no_golden_data": N_("not run: no golden outputs (give a data file with \"validation_data\", as perf_analyzer's --input-data "
                         "takes it)"),
    "no_golden_steps": N_("no reply of this run had a golden output to compare with"),
    "no_float_outputs": N_("the model compares no float output, and only floats can be NaN or Inf"),
    "stream_too_short": N_("no request streamed two responses or more alone, so none could be cancelled half-way"),
    "idle_timeout_long": N_("the idle timeout is {idle_timeout_s:seconds}, longer than the {limit_s:seconds} this check waits "
                            "at most: a client quiet past it is not played"),
}
DIAGNOSES = {
    "keeps_state": N_("The answer to a request depends on the requests before it: the model keeps state between requests. "
                      "Under the dynamic batcher any request may land in any batch row of any instance, so this model belongs "
                      "under the sequence batcher, with its state keyed by slot (direct) or by correlation ID."),
    "batch_dependent": N_("The answer to a request changes with the other requests in its batch: batching is not transparent "
                          "for this model. Make each row's computation independent of the others, or do not batch it."),
    "not_reproducible": N_("A session run alone, from START, twice, did not answer the same: the model is nondeterministic "
                           "beyond the tolerance, or keeps something across sequences. Nothing else could be judged."),
    "noise_above_tolerance": N_("Run alone twice, the same inputs gave float outputs that differ by more than the tolerance you "
                                "set, though by no more than the datatype's rounding may explain: the model's own noise. Raise "
                                "--tolerance, or leave it out and the checker derives one from the noise it measures."),
    "sessions_mix": N_("With sessions interleaved, a session's answers changed: its state is mixed with another session's. "
                       "Under oldest, key the state by the correlation ID; under direct, by slot and honour READY."),
    "inherits_after_end": N_("A new sequence that reused an ended sequence's ID or slot answered differently: the model keeps "
                             "state past END, or does not start fresh on START."),
    "aborted_pollutes": N_("A session that stopped without END, or gave up on a request, changed what another session got: "
                           "the model must drop or reset state the server never ended for it (START resets; the idle "
                           "reaper does not tell the model)."),
    # the slow client (app/checker/engine/slow_client.py): what its fault showed
    "slow_client_keeps_state": N_("After a client was quiet longer than the idle timeout, the idle reaper ended its sequence (the "
                                  "model is not told), and a session of the fault answered otherwise than alone: the client "
                                  "that started over from START under the same ID carried the ended sequence's state, or a "
                                  "neighbour's state changed. Reset the state whenever START is set, and drop what a sequence "
                                  "the model finds idle left behind."),
    "slow_client_leaks_state": N_("After a client was quiet longer than the idle timeout and its sequence was reaped, the "
                                  "model's state gauge stayed above its reading before the fault: the state of a sequence that "
                                  "never sent END is never freed. The reaper does not tell the model: drop a sequence's state "
                                  "when the model itself finds it idle, or when its ID starts over with START."),
    "slow_client_leaves_pending": N_("After a client was quiet longer than the idle timeout and came back, Triton still held "
                                     "requests for the model: a request of the fault was never answered."),
    # from the diagnosis (app/checker/engine/diagnosis.py): what the broken sessions' replayed histories showed
    "lost_state": N_("Sessions lost their state part-way: replayed alone, a sequence that starts over at the step where each "
                     "went wrong gives the answers it got. The model keeps state for fewer sequences than the server runs at "
                     "once: instances × slots (max_batch_size slots per instance under direct, max_candidate_sequences under "
                     "oldest). Give the state store room for that many, and drop a sequence's state only at its END or when "
                     "the model itself finds it idle (the idle reaper does not tell the model)."),
    "stale_state": N_("A new sequence carried on from the state a sequence before it left (an earlier sequence of its ID, or "
                      "one that held its slot and stopped): the model does not start fresh on START. Reset the state whenever "
                      "START is set; a client that stops never sends END, and the idle reaper does not tell the model."),
    "foreign_state_oldest": N_("Sessions answered with another session's state. Under oldest a batch holds requests of different "
                               "sequences in any rows, so the row says nothing about the sequence: key the state by the "
                               "correlation ID (the CORRID control input, or request.correlation_id() in a Python model)."),
    "foreign_state_direct": N_("Sessions answered with another session's state. Under direct each sequence keeps one slot (its batch "
                               "row) on one instance for its whole life: key the state by instance and slot (or by the "
                               "correlation ID), and leave it alone in rows whose READY is 0, which are padding."),
    "differs_from_golden": N_("The model's answers differ from the golden outputs of your data file. Where they differ with "
                              "each request alone, the model itself answers otherwise than the file says (other weights, "
                              "code, preprocessing or precision); where they differ only under traffic, batching changed "
                              "them as well."),
    # a check broken on refusals (judge.REFUSAL_DIAGNOSES): a refused session is never a held one
    "sequence_split": N_("Requests of a sequence were refused as if their sequence had never started, though the check "
                         "sent its START and paused less than the idle timeout: they reached a server with no record of "
                         "the sequence. Behind a load balancer, this is the balancer sending one sequence's requests to "
                         "different replicas: route every request of a sequence to one replica (hash on a header that "
                         "carries the session, e.g. nginx `hash $http_x_session_id consistent`). On one server with no "
                         "balancer, the server's log at verbosity 1 shows what ended the sequence."),
    "reaped": N_("The idle reaper ended sequences whose clients were still sending: a pause between two requests of a "
                 "sequence, or a wait in the backlog for a slot, lasted longer than max_sequence_idle_microseconds (1 s "
                 "when the config leaves it out), and the next request was refused. Set the idle timeout above your "
                 "clients' longest pause plus the longest backlog wait, or give the model more slots."),
    "requests_refused": N_("The server refused requests of the check, or did not answer them in time: a session that "
                           "gets an error is not a held session. Triton's own messages are listed below."),
    "non_finite": N_("The model answered NaN or Inf in a float output: no number at all. NaN equals nothing, not even "
                     "itself, so such a reply matches no reference and no golden output. Where it appears only under "
                     "traffic, look at what the rows of a batch share: padding, a reduction over the batch, an overflow "
                     "in a larger batch."),
}
DIAGNOSED = {
    # one diagnosed session; {step} counts from 1, {matched} of {compared} replayed steps matched what it got
    "lost": N_("{session:session} (ID {corrid:text}) from step {step:count}: state lost, it answered as a sequence starting over "
               "there ({matched:count} of {compared:count} replayed steps matched)"),
    "stale": N_("{session:session} (ID {corrid:text}) from step {step:count}: stale state, it carried on from {source:session}, an "
                "earlier sequence of its ID ({matched:count} of {compared:count} replayed steps matched)"),
    "foreign": N_("{session:session} (ID {corrid:text}) from step {step:count}: another session's state, it answered as if it "
                  "continued {source:session} (ID {source_corrid:text}) ({matched:count} of {compared:count} replayed steps matched)"),
    "foreign_mix": N_("{session:session} (ID {corrid:text}) from step {step:count}: its state was mixed with that of {source:session} "
                      "(ID {source_corrid:text}) ({matched:count} of {compared:count} replayed steps matched)"),
    "foreign_left": N_("{session:session} (ID {corrid:text}) from step {step:count}: it began with the state {source:session} (ID "
                       "{source_corrid:text}) left when it stopped ({matched:count} of {compared:count} replayed steps matched)"),
    "other": N_("{session:session} (ID {corrid:text}) from step {step:count}: no replayed explanation (state lost, stale, another "
                "session's) gave the answers it got"),
}
NOTES = {
    "streams_wrap": N_("Streams of the data file shorter than the {steps:steps} their sessions send: {streams:text}. "
                       "Past a stream's end its inputs start over from its first step (as perf_analyzer loops through the "
                       "data up to a sequence's length), onto the state the sequence has built so far."),
}
NOTE_GOLDEN_WRAP = N_("Those later steps are not compared with golden outputs: the file's answers were for the stream's "
                      "first pass, not for its inputs replayed onto a state that has moved on.")
REFUSAL_CAUSES = {
    "reaped_after_backlog": N_("waited in the backlog longer than the idle timeout, and was ended by the reaper as it got a slot"),
    "idle_gap": N_("the client paused longer than the idle timeout, and the reaper ended the sequence"),
    "sequence_ended": N_("the server had ended the sequence"),
    "timed_out": N_("a deadline passed"),
    "no_answer": N_("the server did not answer"),
    "server_error": N_("the server refused it"),
}
PHASES = {
    "reference": N_("references: every session alone"),
    "interleaved": N_("interleaved sessions"),
    "id_reuse": N_("IDs reused after END"),
    "abandon_round": N_("abandoned and timed-out sessions (waits for the idle timeout)"),
    "slow_client": N_("a client quiet past the idle timeout (waits for the reaper)"),
    "concurrent": N_("concurrent requests, shuffled"),
    "after_traffic": N_("alone again, after the traffic"),
    "diagnosis": N_("diagnosis: replaying broken sessions alone"),
}
# the streaming checks' words (app/checker/words/streams.py)
CHECKS.update(streams.CHECKS)
DIAGNOSES.update(streams.DIAGNOSES)
PHASES.update(streams.PHASES)
PROBLEMS = {
    "check_shape_syntax": N_("--shape takes NAME:d1,d2 with whole dimensions of at least 1 (as perf_analyzer's): got '{value:text}'"),
    "check_shape_unknown_input": N_("--shape names '{name:text}', which is not an input of the model: its inputs are {inputs:text}"),
    "check_shape_mismatch": N_("--shape for {name:text} gives {given:text}, which does not fit its dimensions {dims:text}"),
    "check_shape_too_large": N_("--shape for {name:text} gives {given:text}: more than {high:elements} per request"),
    "check_datatype_unsupported": N_("input {name:text} has datatype {datatype:text}, which the checker cannot generate: give a data file"),
    "check_data_unreadable": N_("the data file {source:text} cannot be read: `{error:text}`"),
    "check_data_no_data": N_("{source:text} has no \"data\" list (perf_analyzer's --input-data format)"),
    "check_data_mixed_streams": N_("{source:text}: \"data\" must hold either entries or lists of entries (streams), not both"),
    "check_data_empty_stream": N_("{source:text}: stream {stream:count} is empty"),
    "check_data_not_an_entry": N_("{source:text}: stream {stream:count}, step {step:count} is not an object of input tensors"),
    "check_data_unknown_input": N_("{source:text}: stream {stream:count}, step {step:count} names {name:text}, which the model does not "
                                   "have: its inputs are {inputs:text}"),
    "check_data_missing_input": N_("{source:text}: stream {stream:count}, step {step:count} lacks input {name:text}"),
    "check_data_bad_shape": N_("{source:text}: stream {stream:count}, step {step:count}, input {name:text}: \"shape\" must be a list "
                               "of whole numbers, got {given:text}"),
    "check_data_shape_mismatch": N_("{source:text}: stream {stream:count}, step {step:count}, input {name:text}: shape {given:text} does "
                                    "not fit the model's dimensions {dims:text}"),
    "check_data_size_mismatch": N_("{source:text}: stream {stream:count}, step {step:count}, input {name:text}: shape {given:text} holds "
                                   "{expected:elements}, the data has {got:count}"),
    "check_data_shape_needed": N_("{source:text}: stream {stream:count}, step {step:count}, input {name:text} has variable dimensions "
                                  "{dims:text}: give \"shape\" with its \"content\", or --shape"),
    "check_data_bad_value": N_("{source:text}: stream {stream:count}, step {step:count}, input {name:text}: the values are not "
                               "{kind:text} data"),
    "check_data_bad_base64": N_("{source:text}: stream {stream:count}, step {step:count}, input {name:text}: \"b64\" is not valid base64 "
                                "of whole elements"),
    "check_golden_not_entries": N_("{source:text}: \"data\" holds entries, so \"validation_data\" must hold one entry of outputs "
                                   "per entry, in the same order"),
    "check_golden_not_streams": N_("{source:text}: \"data\" holds streams, so \"validation_data\" must hold one list of output "
                                   "entries per stream, in the same order"),
    "check_golden_stream_count": N_("{source:text}: \"validation_data\" holds {got:streams} and \"data\" {expected:count}: "
                                    "they must align one to one"),
    "check_golden_step_count": N_("{source:text}: stream {stream:count} has {expected:steps} in \"data\" and {got:count} in "
                                  "\"validation_data\": they must align one to one"),
    "check_golden_not_an_entry": N_("{source:text}: golden stream {stream:count}, step {step:count} is not an object of output tensors"),
    "check_golden_unknown_output": N_("{source:text}: golden stream {stream:count}, step {step:count} names {name:text}, which the "
                                      "model does not have: its outputs are {outputs:text}"),
    "check_golden_bad_shape": N_("{source:text}: golden stream {stream:count}, step {step:count}, output {name:text}: \"shape\" "
                                 "must be a list of whole numbers, got {given:text}"),
    "check_golden_shape_mismatch": N_("{source:text}: golden stream {stream:count}, step {step:count}, output {name:text}: shape "
                                      "{given:text} does not fit the model's dimensions {dims:text}"),
    "check_golden_size_mismatch": N_("{source:text}: golden stream {stream:count}, step {step:count}, output {name:text}: shape "
                                     "{given:text} holds {expected:count} elements, the data has {got:count}"),
    "check_golden_shape_needed": N_("{source:text}: golden stream {stream:count}, step {step:count}, output {name:text} has variable "
                                    "dimensions {dims:text}: give \"shape\" with its \"content\""),
    "check_golden_bad_value": N_("{source:text}: golden stream {stream:count}, step {step:count}, output {name:text}: the values are "
                                 "not {kind:text} data"),
    "check_golden_bad_base64": N_("{source:text}: golden stream {stream:count}, step {step:count}, output {name:text}: \"b64\" is "
                                  "not valid base64 of whole elements"),
    "check_golden_nan": N_("{source:text}: golden stream {stream:count}, step {step:count}, output {name:text} holds NaN, which "
                           "equals nothing: no reply could match it"),
    "check_sessions_range": N_("sessions must be {low:count} to {high:count}: got {value:text}"),
    "check_steps_range": N_("steps must be {low:count} to {high:count}: got {value:text}"),
    "check_corrid_not_number": N_("the largest correlation ID must be a whole number: got '{value:text}'"),
    "check_seed_range": N_("the seed must be a whole number from {low:count} to {high:count}: got {value:text}"),
    "check_tolerance_range": N_("the tolerance must be 0 or more: got {value:text}"),
    "check_unknown": N_("no check '{value:text}': choose from {choices:text}"),
    "check_transport_unknown": N_("no transport '{value:text}': choose from {choices:text}"),
    "check_session_header_bad": N_("--session-header takes a header name of letters, digits and hyphens (such as "
                                   "X-Session-ID): got '{value:text}'"),
    "check_replica_without_balancer": N_("--replica names the replicas behind the balancer of --url: give --url too"),
    "check_replica_unreachable": N_("no live Triton answers at replica {url:text}: correct --replica"),
    "check_replica_unknown_model": N_("replica {url:text} does not serve model '{model:text}': every replica must serve it"),
    "check_replica_log_unmatched": N_("{logs:count} --replica-log for {replicas:count} --replica: each names the log of the "
                                      "--replica in the same place"),
    "check_triton_version_live": N_("--triton-version {version:text} is for --config: a check on a server reviews the config "
                                    "for the version that server reports"),
    "check_url_and_repository": N_("give either --url (a server of yours) or --model-repository (a repository the checker serves), not both"),
    "check_model_not_in_repository": N_("there is no model '{model:text}' in {repository:text}: it holds {models:text}"),
    "check_model_load_failed": N_("model '{model:text}' did not load: `{message:text}`"),
    "check_model_unknown": N_("the server at {url:text} has no model '{model:text}'; ready there: {models:text}"),
    "check_model_not_ready": N_("model '{model:text}' is not ready on the server (state {state:text}: `{reason:text}`); the checker "
                                "never loads a model it did not create: load it first"),
    "check_stream_failed": N_("the response stream to '{model:text}' failed: `{message:text}`"),
    "check_ignore_unknown_output": N_("--ignore-output names '{name:text}', which is not an output of the model: its outputs are {outputs:text}"),
    "check_nothing_to_compare": N_("every output of '{model:text}' is ignored: nothing is left to compare"),
    "check_stream_steps": N_("'{model:text}' is decoupled: the check sends each request once and the model decides how many "
                             "responses it streams, so a number of steps ({steps:count}, --steps) sets nothing here. Leave it "
                             "out; --sessions sets how many requests are sent."),
    "check_stream_think": N_("'{model:text}' is decoupled and no client sends it a second request of the same sequence (it has no "
                             "sequence batcher, or each of its iterative sequences is one request): the check sends each request "
                             "once and waits for its whole stream, so a think time between requests ({think_ms:ms}, --think-ms) "
                             "means nothing here. Leave it out."),
    "check_model_fails": N_("model '{model:text}' refused every request, so there is nothing to compare: `{error:text}`"),
    "check_server_unreachable": N_("no live Triton answers at {url:text}: start that server, correct --url or TRITON_URL, or leave "
                                   "both out to check on the embedded server"),
    "check_server_gone": N_("the server at {url:text} stopped answering during the check; nothing was judged"),
    "check_state_metric_bad": N_("--state-metric takes a Prometheus metric name (letters, digits, _ and :): got '{value:text}'"),
    "check_not_exercised_exit": N_("--not-exercised-exit takes one of {choices:text}: got {value:text}"),
    "check_grpc_unreachable": N_("nothing answers gRPC at {address:text} (`{message:text}`), so nothing was judged and no "
                                 "model was blamed: correct {option:text} to the server's gRPC endpoint"),
    "check_grpc_is_http": N_("{address:text} answers HTTP, not gRPC (`{message:text}`): that is the HTTP endpoint, so nothing "
                             "was judged; give the server's gRPC endpoint to {option:text}"),
}


def error(err: BaseException, _: Words) -> str:
    """The problems a LabError from the checker carries, joined in _'s language: its own codes worded
    here (PROBLEMS), the lab's in app/text/problems.py. Pages and the CLI word what stops a check with
    app/text/errors.explain(err, _, wording=PROBLEMS)."""
    return problems.error(err, _, wording=PROBLEMS)


def number(value: float | str | None) -> str:
    """A difference or tolerance as people read it: 3 significant digits, 'inf' for none at all."""
    if value is None:
        return "–"
    if isinstance(value, str) or not math.isfinite(value):
        return "∞"
    return f"{value:.3g}"


def check_name(check: str, variant: str, _: Words) -> str:
    return _.render(N_("{check:text} ({variant:text})"), check=_(CHECKS[check]), variant=_(VARIANTS[variant]))


def verdict_sentence(v: CheckVerdict, _: Words) -> str:
    """One verdict (app/checker/engine/judge.CheckVerdict) as a sentence."""
    values = v.values
    if v.verdict == "skipped":
        return _.render(SKIP_REASONS[v.reason], **values)
    if v.verdict == "not_exercised":
        return not_exercised_sentence(values["witness"], _)
    if v.check in streams.CHECKS:
        return streams.verdict_sentence(v, _)
    if v.check == "slow_client" and v.reason in ("slow_client_leaks_state", "slow_client_leaves_pending"):
        return slow_client_clause(values["witness"], _)  # every reply matched: what it left behind broke it
    if v.verdict == "broken" and "first" not in values:  # broken on refusals alone
        return refusal_sentence(values, _)
    if v.check == "golden":
        text = _golden_sentence(v, _)
    elif v.check == "finite":
        text = _finite_sentence(v, _)
    elif v.verdict == "held":
        text = _.render(N_("{compared:steps} of {sessions:sessions} matched their references; largest difference {largest:text}"),
                        compared=values["compared"], sessions=values["sessions"], largest=number(values.get("largest_difference")))
    else:
        first = values["first"]
        text = _.render(
            N_("first differed at {where:text}: {output:text} off by {difference:text}, tolerance {tolerance:text}; "
               "{wrong:steps} of {sessions:sessions} differ"),
            where=_where(first, _), output=first["output"], difference=number(first["difference"]), tolerance=number(first["tolerance"]),
            wrong=values["wrong_steps"], sessions=values["wrong_sessions"])
        shown = first.get("shown")
        if shown:
            text += _.render(N_(" (expected {expected:text}, got {got:text})"), expected=str(shown["expected"]), got=str(shown["got"]))
    if v.verdict == "broken" and "first" in values:
        text += _execution_text(values["first"], _)
        if values.get("refusals"):
            text += _(N_("; ")) + refusal_sentence(values, _)
    elif values.get("refusals"):
        text += _.render(N_("; {n:requests} refused"), n=values["refusals"])
    extra = _extra(v, _)
    text += _(N_("; ")) + extra if extra else ""
    text += witness_clause(values.get("witness"), _)
    diagnosed = diagnosis_lines(v, _)
    return text + (_(N_("; ")) + diagnosed[0] + " " + _(N_("; ")).join(diagnosed[1:]) if diagnosed else "")


def not_exercised_sentence(witness: dict[str, Any], _: Words) -> str:
    """What a check not exercised did not see (its witness's why), and what would exercise it."""
    sizes = ", ".join(f"{size}×{n}" for size, n in (witness.get("batch_sizes") or {}).items()) or "–"
    text = _.render(NOT_EXERCISED[witness["why"]], executions=witness.get("executions") or 0, sizes=sizes,
                    overlapping=witness.get("overlapping") or 0, largest=str(witness.get("largest_batch") or "–"),
                    capacity=witness.get("capacity") or 0, max_open=witness.get("max_open") or 0,
                    quiet=witness.get("quiet_s") or 0, idle=witness.get("idle_timeout_s") or 0)
    if witness.get("advice"):
        text += _(N_("; ")) + _.render(WITNESS_ADVICE[witness["advice"]], max_batch_size=witness.get("max_batch_size") or 0)
    return text


def witness_clause(witness: dict[str, Any] | None, _: Words) -> str:
    """A held check's evidence that its situation happened: the batch sizes the server ran, or the
    requests Triton counted pending while every slot was held."""
    if witness and witness.get("pending_peak"):
        return _.render(N_("; up to {pending:count} requests waited in the backlog with all {capacity:count} slots taken "
                           "(Triton's pending-request metric)"),
                        pending=int(witness["pending_peak"]), capacity=witness.get("capacity") or 0)
    if not witness or not witness.get("batch_sizes"):
        return ""
    sizes = ", ".join(f"{size}×{n}" for size, n in witness["batch_sizes"].items())
    return _.render(N_("; the server ran batches of up to {largest:count} requests ({sizes:text})"),
                    largest=witness["largest_batch"], sizes=sizes)


def refusal_sentence(values: dict[str, Any], _: Words) -> str:
    """A verdict's refusals: how many, the first (where and why) and what Triton said."""
    first = values["first_refusal"]
    return _.render(N_("{n:requests} refused, the first at {where:text}: {cause:text} (`{error:text}`); {compared:replies} "
                       "compared matched"), n=values["refusals"], where=_where(first, _), cause=_(REFUSAL_CAUSES[first["cause"]]),
                    error=first["error"], compared=values["compared"])


def diagnosis_lines(v: CheckVerdict, _: Words) -> list[str]:
    """A broken check's diagnosis (values["diagnosis"], app/checker/engine/diagnosis.py): a heading,
    then one line per diagnosed session; empty where there is none."""
    if v.check in streams.CHECKS:
        return streams.diagnosis_lines(v, _)
    d = v.values.get("diagnosis")
    if not d or not d["sessions"]:
        return []
    lines = [_.render(N_("replayed alone, {n:count} of {broken:count} broken sessions (at most {cap:count} per check) show:"),
                      n=d["diagnosed"], broken=d["broken_sessions"], cap=d["caps"]["sessions"])]
    return lines + [diagnosed_session(entry, _) for entry in d["sessions"]]


def diagnosed_session(entry: dict[str, Any], _: Words) -> str:
    """One diagnosed session: its class, and for foreign and stale the session whose state it carried."""
    kind = entry["class"]
    source = entry.get("source") or {}
    if kind == "foreign" and entry.get("form") == "mix":
        kind = "foreign_mix"
    elif kind == "foreign" and entry["step"] == 0 and source.get("ended_before"):
        kind = "foreign_left"
    return _.render(DIAGNOSED[kind], session=entry["session"], corrid=entry["corrid"], step=entry["step"] + 1,
                    matched=entry["matched"], compared=entry["compared"], source=source.get("session", 0),
                    source_corrid=source.get("corrid", ""))


def _where(first: dict[str, Any], _: Words) -> str:
    """A step as the sentences name it: its session, step, role and, on the sequence path, its ID."""
    role = _(ROLES.get(first["role"], first["role"]))
    if first["corrid"]:
        return _.render(N_("{session:session}, step {step:count} ({role:text}, ID {corrid:text})"), session=first["session"],
                        step=first["step"] + 1, role=role, corrid=first["corrid"])
    return _.render(N_("{session:session}, request {step:count} ({role:text})"), session=first["session"], step=first["step"] + 1, role=role)


def _execution_text(first: dict[str, Any], _: Words) -> str:
    execution = first.get("execution")
    if execution and execution["shared_with"]:
        others = ", ".join(_.render(N_("{session:session} step {step:count}"), session=o["session"], step=o["step"] + 1)
                           for o in execution["shared_with"])
        return _.render(N_("; it ran in a batch of {batch:count} on {lane:text} with {others:text}"),
                        batch=execution["batch"], lane=str(execution["lane"]), others=others)
    if execution:
        return _.render(N_("; it ran alone in its batch on {lane:text}"), lane=str(execution["lane"]))
    return ""


def elements(values: list[Any] | tuple[Any, ...] | None) -> str:
    """A reply's first elements as the report keeps them (measure._first): [1.5, nan, abc]."""
    return "[" + ", ".join(str(v) for v in values) + "]" if values is not None else "–"


def _golden_sentence(v: CheckVerdict, _: Words) -> str:
    values = v.values
    if v.verdict == "held":
        text = _.render(N_("{compared:replies} of {sessions:sessions} matched their golden outputs; largest difference "
                           "{largest:text}"), compared=values["compared"], sessions=values["sessions"],
                        largest=number(values.get("largest_difference")))
    else:
        first = values["first"]
        text = _.render(
            N_("first differed from its golden output at {where:text}, stream {stream:count} ({phase:text}): {output:text} off by "
               "{difference:text}, tolerance {tolerance:text}; {wrong:replies} of {sessions:sessions} differ"),
            where=_where(first, _), stream=first.get("stream", 0) + 1, phase=_(PHASES[first["phase"]]), output=first["output"],
            difference=number(first["difference"]), tolerance=number(first["tolerance"]), wrong=values["wrong_steps"],
            sessions=values["wrong_sessions"])
        shown = first.get("shown")
        if shown:
            text += _.render(N_(" (expected {expected:text}, got {got:text})"), expected=elements(shown["expected"]), got=elements(shown["got"]))
    floats = {name: value for name, value in (values.get("tolerances") or {}).items() if value}
    if floats:
        text += _.render(N_("; float outputs within {tolerances:text}"),
                         tolerances=", ".join(f"{name} {number(value)}" for name, value in floats.items()))
    if values.get("wrapped_streams"):
        text += _.render(N_("; streams shorter than their sessions ({streams:text}): {n:count} later replies replayed earlier "
                            "inputs and were not compared"), streams=streams_text(values["wrapped_streams"]), n=values["uncompared_steps"])
    return text


def _finite_sentence(v: CheckVerdict, _: Words) -> str:
    values = v.values
    alone = v.variant == "alone"
    if v.verdict == "held":
        if alone:
            return _.render(N_("{compared:replies} of {sessions:sessions}: every float output a number"),
                            compared=values["compared"], sessions=values["sessions"])
        text = _.render(N_("{compared:replies} of {sessions:sessions}: no NaN or Inf appeared where the lone runs "
                           "answered numbers"), compared=values["compared"], sessions=values["sessions"])
        if values.get("non_finite_alone"):
            text += _.render(N_(" ({n:replies} held NaN or Inf alone too)"), n=values["non_finite_alone"])
        return text
    first = values["first"]
    template = (N_("first NaN or Inf at {where:text} ({phase:text}): {output:text} gave {got:text}; {wrong:replies} of "
                   "{sessions:sessions} hold NaN or Inf") if alone else
                N_("first NaN or Inf appearing under traffic at {where:text} ({phase:text}): {output:text} gave {got:text} where "
                   "alone it gave numbers; {wrong:replies} of {sessions:sessions}"))
    return _.render(template, where=_where(first, _), phase=_(PHASES[first["phase"]]), output=first["output"],
                    got=elements((first.get("shown") or {}).get("got")), wrong=values["wrong_steps"], sessions=values["wrong_sessions"])


def streams_text(streams: list[int]) -> str:
    """Data streams as people count them, from 1: 2, 4."""
    return ", ".join(str(s + 1) for s in streams)


def note_lines(notes: list[dict[str, Any]], _: Words) -> list[str]:
    """What the reader should know beside the verdicts (judge.CheckJudgement.notes)."""
    lines = []
    for note in notes:
        values = note["values"]
        if note["code"] == "streams_wrap":
            text = _.render(NOTES["streams_wrap"], streams=streams_text(values["streams"]), steps=values["steps"])
            lines.append(text + (" " + _(NOTE_GOLDEN_WRAP) if values.get("golden") else ""))
        else:
            lines.append(_.render(NOTES[note["code"]], **values))
    return lines


def _extra(v: CheckVerdict, _: Words) -> str:
    values = v.values
    if v.check == "interleaved" and "overflow" in values:
        if values["overflow"]:
            return _.render(N_("{n:sessions} in flight on {capacity:slots}, so the backlog was used"),
                            n=values["in_flight"], capacity=values["capacity"])
        return _.render(N_("only {n:sessions} in flight on {capacity:slots}: the backlog was not reached (more --sessions reach it)"),
                        n=values["in_flight"], capacity=values["capacity"])
    if v.check == "id_reuse" and values.get("same_instance") is not None:
        return _.render(N_("reused after END: {reused:ids}; back on the same instance: {same:count}, on the same slot: {slot:count}"),
                        same=values["same_instance"], reused=values["reused"], slot=values["same_slot"])
    if v.check in ("abandoned", "cancelled") and values.get("next_on_slot") is not None:
        return _.render(N_("the next session on its slot ran there: {yes:yes_no}"), yes=values["next_on_slot"])
    if v.check == "slow_client" and values.get("witness"):
        return slow_client_clause(values["witness"], _)
    return ""


def slow_client_clause(w: dict[str, Any], _: Words) -> str:
    """The slow client's fault as it happened (its witness): the quiet, the late step, the restart, the readings."""
    text = _.render(N_("the client was quiet for {quiet:seconds} (idle timeout {idle:seconds}); its late step was refused as a "
                       "sequence the server no longer knew: {refused:yes_no}"),
                    quiet=w.get("quiet_s") or 0, idle=w["idle_timeout_s"], refused=bool(w.get("late_refused")))
    if w.get("restarted_matched") is not None:
        text += _.render(N_("; started over from START under the same ID, it answered as alone: {yes:yes_no}"),
                         yes=w["restarted_matched"])
    if w.get("pending_after") is not None:
        text += _.render(N_("; Triton's pending requests afterwards: {n:count}"), n=int(w["pending_after"]))
    if w.get("state_metric") and w.get("state_before") is not None and w.get("state_after") is not None:
        text += _.render(N_("; {metric:text} {before:text} before the fault, {after:text} after"), metric=w["state_metric"],
                         before=number(w["state_before"]), after=number(w["state_after"]))
    return text


def summary_lines(result: CheckResult, _: Words) -> list[str]:
    """The CLI's account of a check (app/checker/engine/run.CheckResult)."""
    f = result.facts
    lines = [_.render(
        N_("Checked {model:text} version {version:text} on {url:text} ({where:text}): scheduler {scheduler:text}, "
           "{instances:instances}; {requests:requests} in {wall:seconds}"),
        model=f.name, version=f.version or "–", url=result.url, where=_(WHERE[result.where]), scheduler=f.scheduler,
        instances=f.instances, requests=result.requests, wall=result.wall_s)]
    if f.sequence:
        lines.append(_.render(N_("capacity {capacity:sequences} ({instances:count} × {slots:slots}), idle timeout {idle:seconds}"),
                              capacity=f.capacity, instances=f.instances, slots=f.slots_per_instance, idle=f.idle_timeout_us / 1e6))
    lengths = result.tables.lengths
    source = _(SOURCES[result.tables.input_source])
    if min(lengths) == max(lengths):
        lines.append(_.render(N_("{sessions:sessions} of {steps:steps}, inputs {source:text}"), sessions=len(lengths), steps=lengths[0],
                              source=source))
    else:
        lines.append(_.render(N_("{sessions:sessions} of {low:count} to {high:steps}, inputs {source:text}"), sessions=len(lengths),
                              low=min(lengths), high=max(lengths), source=source))
    lines += shape_lines(result.inputs, _)
    if getattr(result, "streams", None) is not None:
        lines += streams.summary_lines(result, _)
    ignored = result.tables.outputs[~result.tables.outputs["compared"]]
    if len(ignored):
        lines.append(_.render(N_("left out: {names:text}"), names=", ".join(ignored["name"])))
    for tol in result.judgement.tolerances:
        if tol.source != "exact":
            lines.append(_.render(N_("{output:text} ({datatype:text}): tolerance {value:text} ({source:text}; noise between the lone runs {noise:text})"),
                                  output=tol.output, datatype=tol.datatype, value=number(tol.value), source=_(TOLERANCE_SOURCES[tol.source]),
                                  noise=number(tol.noise)))
    lines.append("")
    for v in result.verdicts:
        lines.append(f"{_(VERDICTS[v.verdict]):8} {check_name(v.check, v.variant, _)}")
        lines.append(f"         {verdict_sentence(v, _)}")
    for d in result.judgement.diagnoses:
        lines += ["", _(DIAGNOSES[d["code"]])]
    for note in note_lines(result.judgement.notes, _):
        lines += ["", note]
    refusals = result.judgement.refusals
    if len(refusals):
        lines.append("")
        for cause, group in refusals.groupby("cause"):
            lines.append(_.render(N_("{n:requests} refused: {cause:text}; Triton said `{error:text}`"),
                                  n=len(group), cause=_(REFUSAL_CAUSES[cause]), error=group.iloc[0]["error"]))
    lines += routing_lines(result, _)
    lines += ["", _.render(N_("Config review: {n:findings}"), n=len(result.review)),
              review_version_line(result.triton_version, _, live=True)]
    lines += _finding_lines(result.review, _)
    return lines


def routing_lines(result: CheckResult, _: Words) -> list[str]:
    """Through a balancer (--replica): how the replicas' statistics say the traffic spread, the
    direct run's outcome, and the routing diagnosis. Empty for a check on one server."""
    r = result.routing
    if r is None:
        return []
    lines = ["", _.render(N_("Through the balancer {url:text} over {transport:text}, session header {header:text}:"), url=r.balancer,
                          transport=r.transport, header=r.session_header or "–")]
    for replica in r.replicas:
        if replica.served is None:
            lines.append(_.render(N_("  replica {url:text}: its statistics did not say"), url=replica.url))
        else:
            lines.append(_.render(N_("  replica {url:text} served {n:requests}"), url=replica.url, n=replica.served))
    lines.append(witness_line(r.witness, len(r.replicas), _))
    direct = r.direct
    broken = [v for v in direct.verdicts if v.verdict == "broken"]
    lines.append(_.render(N_("Directly on {url:text}: {held:count} of {all:count} checks held, {broken:count} broke"), url=direct.url,
                          held=sum(v.verdict == "held" for v in direct.verdicts), all=len(direct.verdicts), broken=len(broken)))
    diagnosis = _(ROUTING[r.diagnosis])
    if r.not_exercised:
        w = r.witness
        diagnosis += " " + _.render(ROUTING_NOT_EXERCISED[w["why"]], serving=w["replicas_serving"], replicas=len(r.replicas))
        diagnosis += _(N_("; ")) + _(WITNESS_ADVICE[w["advice"]]) if w.get("advice") else ""
    lines += ["", diagnosis]
    return lines


def witness_line(witness: dict[str, Any], replicas: int, _: Words) -> str:
    """The routing's witness (app/checker/engine/replica_witness.py): how many replicas served, and
    how many sequences reached more than one, where their logs say."""
    if witness.get("source") == "log":
        return _.render(N_("  {serving:count} of {replicas:count} replicas served; {split:count} of {placed:count} sequences split "
                           "across replicas (their logs)"), serving=witness["replicas_serving"], replicas=replicas,
                        split=witness["sequences_split"], placed=witness["sequences_placed"])
    return _.render(N_("  {serving:count} of {replicas:count} replicas served (their statistics; which replica served each sequence "
                       "is known only from their logs: --replica-log)"), serving=witness.get("replicas_serving") or 0, replicas=replicas)


def shape_lines(used: InputsUsed, _: Words) -> list[str]:
    """Each input with variable dimensions (app/checker/engine/inputs.InputsUsed): the shapes it was
    sent with and what sized them: --shape, the data file, or the sizes the checker drew."""
    lines = []
    for shape in used.shapes:
        if shape.sized_by == "model":
            continue
        if shape.smallest == shape.largest:
            shapes = dims_text(shape.smallest)
        else:
            shapes = _.render(N_("{smallest:text} to {largest:text}"), smallest=dims_text(shape.smallest), largest=dims_text(shape.largest))
        how = SIZED_BY[used.sizes.per if shape.sized_by == "drawn" and used.sizes else shape.sized_by]
        sizes = used.sizes.to_json() if used.sizes else {}
        lines.append(_.render(N_("input {name:text} {dims:text}: {shapes:text}, {how:text}"), name=shape.name, dims=dims_text(shape.dims),
                              shapes=shapes, how=_.render(how, **sizes)))
    return lines


# How an input's variable dimensions were sized (ShapeUsed.sized_by; drawn ones by DrawnSizes.per).
SIZED_BY = {
    "shape": N_("from --shape"),
    "data_file": N_("from the data file"),
    "request": N_("drawn for each session and step, {low:count} to {high:elements} per variable dimension (no --shape given)"),
    "run": N_("one size for every request, drawn from {low:count} to {high:elements} per variable dimension (no --shape given): "
              "the dynamic batcher batches requests together only when each variable input has the same shape in all of them, "
              "unless allow_ragged_batch is set"),
}
WHERE = {"embedded": N_("the checker's own server"), "external": N_("an external server")}
SOURCES = {"generated": N_("generated from the model's metadata"), "data_file": N_("from the data file")}
TOLERANCE_SOURCES = {"user": N_("yours"), "derived": N_("from the measured noise and the datatype")}
OUTCOME = {0: N_("Every check held."), 1: N_("A check broke.")}
OUTCOME_NOT_EXERCISED = N_("No check broke, but {n:count} check(s) were not exercised: their situation never happened, so "
                           "they show nothing (exit status {exit:count}; --not-exercised-exit chooses it).")
ROUTING = {
    "balancer_splits_sequences": N_("Every session held directly on one replica, and broke through the balancer: the balancer "
                                    "splits sequences. Requests of one sequence reached replicas that never saw its START. Route "
                                    "every request of a sequence to one replica: send the session's ID in a header "
                                    "(--session-header) and hash on it (nginx: `hash $http_x_session_id consistent`)."),
    "balancer_breaks": N_("Every check held directly on one replica, and a check broke through the balancer: the routing, or "
                          "what the balancer does to requests, breaks the sessions, not the model."),
    "model_breaks": N_("The check broke directly on one replica as well: the model or its config breaks sessions, whatever "
                       "the routing. Fix the model first, then check through the balancer again."),
    "held": N_("Every check held through the balancer and directly on one replica."),
    "not_exercised": N_("Every check held through the balancer and directly on one replica, but the routing was not exercised:"),
    "direct_only_broke": N_("Every check held through the balancer, and one broke directly on one replica: the model answers "
                            "differently from run to run; look at that run's verdicts."),
}
# Why the routing was not exercised (app/checker/engine/replica_witness.py); its advice is in WITNESS_ADVICE.
ROUTING_NOT_EXERCISED = {
    "one_replica_served": N_("only {serving:count} of the {replicas:count} replicas served requests, so nothing shows how the "
                             "balancer routes one sequence's requests across replicas"),
    "no_statistics": N_("the replicas' statistics did not say how many requests each served, so nothing shows that more than "
                        "one served"),
}
REVIEW_FAILED = N_("The config review found {n:count} error(s): the check fails (--allow-review-errors lets the verdicts alone "
                   "decide).")
REVIEW_ALLOWED = N_("The config review found {n:count} error(s); --allow-review-errors: they do not fail the check.")


def outcome_lines(result: CheckResult, _: Words) -> list[str]:
    """The outcome the exit status gives: every check held or one broke, and whether the review's errors fail it."""
    if "checks" in result.failed_by or not result.not_exercised:
        lines = [_(OUTCOME[1 if "checks" in result.failed_by else 0])]
    else:  # never "every check held" when one was not exercised
        lines = [_.render(OUTCOME_NOT_EXERCISED, n=len(result.not_exercised), exit=result.exit_code)]
    errors = len(result.review_errors)
    if errors:
        lines.append(_.render(REVIEW_FAILED if "review" in result.failed_by else REVIEW_ALLOWED, n=errors))
    return lines
EXPORT_WROTE = N_("wrote {path:text}: {n:count} failing sessions as perf_analyzer --input-data, their lone references as "
                  "validation_data")
EXPORT_NOTHING = N_("no session failed: nothing written to {path:text}")


def junit_message(v: CheckVerdict, _: Words) -> str:
    """A JUnit test case's message: the check, its variant, and what the verdict says."""
    return f"{check_name(v.check, v.variant, _)}: {_(VERDICTS[v.verdict])}: {verdict_sentence(v, _)}"


def review_version_line(version: str | None, _: Words, live: bool = False) -> str:
    """Which Triton version the review judged the config for."""
    if version:
        return _.render(N_("reviewed for Triton {version:text}"), version=version)
    if live:
        return _(N_("the server reported no Triton version: the checks that depend on the release were not made"))
    return _.render(N_("no Triton version given (--triton-version, e.g. {example:text} for release 24.10): the checks that "
                       "depend on the release were not made"), example=LAB_TRITON_VERSION)


def review_lines(findings: dict[str, list[ReviewFinding]], _: Words, triton_version: str | None = None) -> list[str]:
    """The config review's findings per model (`batching-lab check --config`), after the version
    it reviewed for."""
    lines = [review_version_line(triton_version, _)]
    for model, found in findings.items():
        lines.append(_.render(N_("{model:text}: {n:findings}"), model=model, n=len(found)))
        lines += _finding_lines(found, _)
    return lines


def _finding_lines(found: list[ReviewFinding], _: Words) -> list[str]:
    """Each finding in the review's own words (app/checker/words/review.py): title, why, fix."""
    lines = []
    for finding in found:
        w = finding_words(finding, _)
        lines += [f"  {w.severity}: {w.title} ({finding.field})", f"    {w.why}", f"    {w.fix}"]
    return lines
