"""What stops a check in words: PROBLEMS words the codes of the checker's LabErrors.

Whoever shows such an error hands PROBLEMS to app/text/errors.explain as `wording`, or calls error()
below. English templates marked with N_(), filled with the error's values.
"""
from __future__ import annotations

from app.i18n import N_, Words
from app.text import problems

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
