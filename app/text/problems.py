"""Problems a learner can fix (app/lab/problems.Problem codes) in words they can act on."""
from __future__ import annotations

from collections.abc import Mapping

from app.i18n import N_, Words
from app.lab.problems import Problem

_BAD_CHARACTER = N_("character '{char:text}' at position {position:count} is not in the alphabet: use only letters A-Z and spaces")

PROBLEMS = {
    # deployment settings (app/lab/deployment/deployments.LabSettings.problems)
    "scheduler_unknown": N_("scheduler must be one of {choices:text}, not '{value:text}'"),
    "instances_range": N_("instances must be {low:count} to {high:count} (each is a Python process): got {value:text}"),
    "slots_range": N_("slots (max batch size) must be {low:count} to {high:count}: got {value:text}"),
    "queue_delay_range": N_("queue delay must be {low:count} to {high:count} microseconds: got {value:text}"),
    "min_slot_utilization_range": N_("minimum slot utilisation must be {low:count} to {high:count} (the share of "
                                     "slots with a ready request): got {value:text}"),
    "idle_timeout_range": N_("idle timeout must be 0.1 s to 60 s ({low:count} to {high:count} µs): got {value:text}"),
    "state_key_unknown": N_("state key must be one of {choices:text}, not '{value:text}'"),
    "corrid_needs_sequence": N_("this lab takes state key 'corrid' only with a sequence scheduler: the dynamic batcher does hand the "
                                "model each request's correlation ID, but no CORRID control input, and it keeps no sequence on "
                                "one instance, so choose state key 'slot' or 'session', or a sequence scheduler"),
    # a learner's own recogniser config (deployments.validate_recogniser)
    "pbtxt_unreadable": N_("{source:text}, line {line:count}, column {column:count}: `{error:text}`"),
    "config_name": N_("name must be letters, digits, '_' or '-'"),
    "config_backend": N_("backend must be \"python\" (the recogniser is a Python-backend model)"),
    "config_inputs": N_("inputs must be exactly AUDIO and SESSION, found {found:text}"),
    "config_outputs": N_("outputs must be among {allowed:text} and include SYMBOL"),
    "config_max_batch_size": N_("max_batch_size must be at least 1 here: the lab's recogniser reads a batch dimension "
                                "(Triton itself also loads a model with max_batch_size 0)"),
    "config_controls": N_("the lab's recogniser needs control inputs for {missing:text} under sequence_batching "
                          "(to Triton every control input is optional)"),
    "config_preferred_batch_size": N_("oldest.preferred_batch_size cannot exceed max_batch_size"),
    "config_state_key": N_("parameter state_key must be one of {choices:text}"),
    "config_corrid_needs_sequence": N_("this lab takes state_key 'corrid' only with sequence_batching: the dynamic batcher passes "
                                       "each request's correlation ID but no CORRID control input, and keeps no sequence on one "
                                       "instance"),
    "config_honour_ready": N_("parameter honour_ready must be 'true' or 'false'"),
    "triton_refused": N_("Triton refused the deployment (`{message:text}`); the previous one keeps serving."),
    # the class's share of the server (app/lab/deployment/loaded_models.py)
    "capacity_full": N_("The server is full: the class's running deployments use {in_use:count} of its {budget:count} model processes "
                        "and this one needs {need:count}. Nothing was loaded; it waited {waited:count} s for a run to end. "
                        "Try again in a minute, or pick a set-up with fewer instances (or a preset, which others share)."),
    "memory_full": N_("The server's memory budget is full: the class's running deployments hold {in_use:count} MB of its "
                      "{budget:count} MB and this one needs about {need:count} MB. Nothing was loaded; it waited {waited:count} s "
                      "for a run to end. Try again in a minute, or pick a set-up with fewer instances (or a preset, which "
                      "others share)."),
    # traffic (app/recogniser/engine/setup.LabSetup.traffic_problems)
    "sessions_range": N_("sessions must be {low:count} to {high:count}: got {value:text}"),
    "chunks_range": N_("chunks per session must be {low:count} to {high:count}: got {value:text}"),
    "think_ms_range": N_("think time must be {low:count} to {high:count} ms: got {value:text}"),
    "jitter_ms_range": N_("jitter must be {low:count} to {high:count} ms: got {value:text}"),
    "seed_range": N_("seed must be {low:count} to {high:count}: got {value:text}"),
    "in_flight_range": N_("chunks in flight per session must be {low:count} to {high:count}: got {value:text}"),
    "transport_unknown": N_("transport must be one of {choices:text}: got '{value:text}'"),
    "too_many_utterances": N_("at most {high:count} utterances (one per session): got {value:count}"),
    # text (alphabet.AlphabetError, per utterance or per session)
    "bad_character": _BAD_CHARACTER,
    "empty_text": N_("the text is empty: type at least one letter"),
    "utterance_bad_character": N_("utterance {number:count} ('{text:text}'): character '{char:text}' at position {position:count} "
                                  "is not in the alphabet: use only letters A-Z and spaces"),
    "utterance_empty_text": N_("utterance {number:count}: the text is empty: type at least one letter"),
    "session_bad_character": N_("session {number:count}: character '{char:text}' at position {position:count} is not "
                                "in the alphabet: use only letters A-Z and spaces"),
    "session_empty_text": N_("session {number:count}: the text is empty: type at least one letter"),
    # a scenario (app/lab/scenario/scenario.Scenario.validate)
    "no_sessions": N_("a run needs at least one session"),
    "too_many_sessions": N_("at most {high:count} sessions per run, got {value:count}"),
    "urls_http_only": N_("per-session URLs (a load balancer in front) are HTTP only: use the http transport"),
    "utterance_too_long": N_("utterances are limited to {high:count} symbols"),
    "utterance_too_short": N_("utterance length must be at least 1 symbol"),
    "negative_think": N_("think time and jitter cannot be negative"),
    "negative_concurrency": N_("concurrency cannot be negative"),
    "think_per_session": N_("think_ms_by_session needs one value per session"),
    "corrids_per_session": N_("corrids needs one correlation ID per session"),
    # the deployment checker's config review (app/checker/engine/review/configs.py, review.Expectations)
    "checker_file_unreadable": N_("{path:text} cannot be read: `{error:text}`"),
    "checker_path_missing": N_("{path:text}: no such file or folder"),
    "checker_server_config": N_("the server's config for model '{name:text}' cannot be read: `{message:text}`"),
    "checker_expectation_low": N_("{name:text} must be at least {low:count}: got {value:text}"),
    "checker_corrid_above_uint64": N_("correlation IDs are unsigned 64-bit numbers, at most {high:count}: got {value:text}"),
    "checker_triton_version_format": N_("the Triton version is the server's version as GET /v2 reports it, three numbers such as "
                                        "{example:text} (release 24.10) or {later:text} (release 25.01): got '{value:text}'"),
    # names
    "preset_unknown": N_("no preset '{value:text}': choose one of {choices:text}"),
    "exercise_unknown": N_("no exercise '{value:text}': choose one of {choices:text}"),
    "verify_target_unknown": N_("choose one of {choices:text} to verify, not '{value:text}'"),
}


# The server layer's (app/lab/server/errors.py): what went wrong with Triton or nginx, and what to do.
SERVER_PROBLEMS = {
    "server_not_started": N_("the embedded server has not been started"),
    "address_bad": N_("{source:text} is '{value:text}', which is not a server address: give host:port (such as "
                      "127.0.0.1:8000) or http://host:port"),
    "server_model_failed": N_("a shipped model, {model:text}, failed to load"),
    "server_log_tail": N_("the server's log ends:\n{log:text}"),
    "server_unreachable": N_("cannot reach Triton at {url:text} ({kind:text}): start that server, correct TRITON_URL, or unset "
                             "TRITON_URL to use the embedded server"),
    "server_not_live": N_("Triton at {url:text} answers but is not live yet: retry shortly"),
    "server_repository_missing": N_("model repository {path:text} does not exist: pass an existing folder"),
    "server_port_in_use": N_("port {port:text} is already in use on 127.0.0.1: pick another with --http-port, or stop the program "
                             "that holds it"),
    "server_not_ready": N_("tritonserver was not ready after {seconds:count} s:\n{log:text}"),
    "server_ports_taken": N_("tritonserver could not bind its ports ({ports:text}): another program holds one; pick another "
                             "--http-port:\n{log:text}"),
    "server_exited": N_("tritonserver exited during start-up (code {code:text}):\n{log:text}"),
    "server_package_missing": N_("the Triton server package is missing: run `pip install 'nvidia-pytriton>=0.7'` in this "
                                 "environment, or set TRITON_URL to use a server you already run"),
    "server_executable_missing": N_("no tritonserver executable under {path:text}: reinstall with "
                                    "`pip install --force-reinstall 'nvidia-pytriton>=0.7'`"),
    "server_no_stub": N_("the installed Triton ships no Python backend stub for Python {version:text} (it has {shipped:text}): "
                         "create the virtual environment with one of those"),
    "server_libraries_missing": N_("{path:text} is missing: reinstall nvidia-pytriton"),
    "server_cache_missing": N_("no local response cache (local/libtritoncache_local.so) under {path:text}: reinstall nvidia-pytriton"),
    "server_start_failed": N_("starting the server failed ({kind:text}): `{error:text}`"),
    "nginx_missing": N_("nginx is not installed, and the sticky-routing exercise runs a real one: install it with "
                        "`apt-get install nginx-light` (Debian/Ubuntu), then run the exercise again"),
    "nginx_exited": N_("nginx exited during start-up:\n{log:text}"),
    "nginx_not_listening": N_("nginx did not listen on 127.0.0.1:{port:text} within {seconds:count} s:\n{log:text}"),
}


# The class database's (app/lab/database/errors.py): the quiz, votes and progress are away, the rest works.
DATABASE_PROBLEMS = {
    "database_url_invalid": N_("the class database's address {url:text} is not a database URL: set TRITON_LAB_DATABASE_URL "
                               "(or `url` under [connections.class_store] in .streamlit/secrets.toml) to one such as "
                               "postgresql+psycopg://USER:PASSWORD@HOST:5432/DATABASE, or unset it to use the built-in SQLite file"),
    "database_driver_missing": N_("the driver for the class database {url:text} is not installed: install the app again "
                                  "(`pip install -e .` brings psycopg for PostgreSQL)"),
    "database_login_refused": N_("the class database at {url:text} refused the login: check the user name and password in "
                                 "TRITON_LAB_DATABASE_URL"),
    "database_missing": N_("the class database at {url:text} has no database of that name: create it, or correct the name "
                           "at the end of TRITON_LAB_DATABASE_URL"),
    "database_unreachable": N_("the class database at {url:text} cannot be reached (it may be restarting): progress, answers "
                               "and votes are not saved until it is back; lessons, the lab and the checker keep working"),
    "database_failed": N_("the class database at {url:text} failed ({kind:text}): nothing was saved; try again"),
}


PROBLEMS.update(SERVER_PROBLEMS)
PROBLEMS.update(DATABASE_PROBLEMS)
# A feature words its own codes (the deployment checker's: app/checker/words/problems.py; the generator's:
# app/generation/words.py) and hands them to problem, error or app/text/errors.explain as `wording`.


def problem(found: Problem, _: Words, wording: Mapping[str, str] | None = None) -> str:
    """One Problem (code, values) in _'s language; `wording`: a feature's own templates by code."""
    template = (wording or {}).get(found.code) or PROBLEMS.get(found.code)
    if template is None:
        raise KeyError(f"app/text/problems.py has no PROBLEMS[{found.code!r}]")
    return _.render(template, **found.values)


def error(err: BaseException, _: Words, wording: Mapping[str, str] | None = None) -> str:
    """The problems a LabError, ServerError or DatabaseError carries, joined in _'s language. Pages
    and the CLI call app/text/errors.explain, which words every exception the app meets (these
    included, and the next step); an error that carries no problems is refused here, not quoted."""
    problems = getattr(err, "problems", None)
    if not problems:
        raise TypeError(f"{type(err).__name__} carries no problems: word it with app/text/errors.explain")
    return _("; ").join(problem(p, _, wording) for p in problems)
