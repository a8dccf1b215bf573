"""The deployment checker's codes (app/checker/engine) in words: its checks, variants and roles, the
verdicts, why a check was skipped or not exercised and what would exercise it, the diagnoses, the
notes, the refusals' causes and the phases.

English templates marked with N_(); the engine's codes pick them, its values fill them. The streaming
checks' own (streams.py) are merged in at the end, so one table holds every path's codes.
"""
from __future__ import annotations

from app.checker.words import streams
from app.i18n import N_

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
    # the slow client (app/checker/engine/sequences/slow_client.py): what its fault showed
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
    # from the diagnosis (app/checker/engine/sequences/diagnosis.py): what the broken sessions' replayed histories showed
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
    # a check broken on refusals (refusals.REFUSAL_DIAGNOSES): a refused session is never a held one
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
