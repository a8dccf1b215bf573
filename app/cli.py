"""batching-lab: the lab engine from the command line (serve, models, run, exercise, check).

Words are printed in the language of --lang (default: LC_ALL, LC_MESSAGES or LANG when it names
a language the lab has, else English); --json files hold English keys, codes and values only.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from app import checker
from app.checker import words as check_text
from app.checker.engine import check_codes, check_report_text, failing_input_data, parse_shape, review_exit_code, review_report_json
from app.generation import engine as generation
from app.generation import words as generation_words
from app.i18n import N_, SOURCE_LANGUAGE, Words, languages, parse_language, words
from app.lab.deployment import Deployer
from app.lab.observation import server_log
from app.lab.paths import MODEL_REPOSITORY
from app.lab.problems import LabError
from app.lab.progress import Stage
from app.lab.scenario.scenario import Scenario, random_texts
from app.lab.scenario.transport import Transport
from app.lab.server import EmbeddedServer, LabServer, address
from app.lab.traffic import run_report_json
from app.recogniser.engine import driver
from app.recogniser.words import report as report_text
from app.text import log_readings
from app.text.errors import EXPLAINED, explain

if TYPE_CHECKING:
    from app.checker.engine import CheckResult
    from app.exercise_kit import ExerciseResult

# What each subcommand runs: its parsed arguments and the reader's words in, the exit status out.
Handler = Callable[[argparse.Namespace, Words], int]


def default_language(environ: Mapping[str, str] = os.environ) -> str:
    """The first of LC_ALL, LC_MESSAGES, LANG that is set decides (POSIX order); 'zh_CN.UTF-8' -> 'zh'."""
    for key in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(key)
        if value:
            return parse_language(value.split(".")[0]) or SOURCE_LANGUAGE
    return SOURCE_LANGUAGE


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    _ = words(getattr(args, "lang", None) or default_language())
    try:
        _read_addresses(args)
        handler: Handler = args.handler
        return handler(args, _)
    except KeyboardInterrupt:
        return 130
    except EXPLAINED as err:  # one clear line for the user, not a traceback; any other error is a bug and keeps its traceback (exit 1)
        said = explain(err, _, wording={**generation_words.PROBLEMS, **check_text.PROBLEMS})
        print(f"batching-lab: {said.message}", file=sys.stderr)
        if said.next_step:
            print(f"batching-lab: {said.next_step}", file=sys.stderr)
        return 2


def _read_addresses(args: argparse.Namespace) -> None:
    """Every server address given on the command line, read as the variables are (host:port or
    http://host:port): one that cannot be used is refused now, naming its flag."""
    if getattr(args, "url", None):
        args.url = address.host_port(args.url, "--url")
    if getattr(args, "grpc_url", None):
        args.grpc_url = address.host_port(args.grpc_url, "--grpc-url", kind="grpc")
    if getattr(args, "replica", None):
        args.replica = [address.host_port(r, "--replica") for r in args.replica]


def _lang_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lang", choices=languages(), default=None,
                        help="language of the words printed (default: from LC_ALL/LANG, else en)")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="batching-lab", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the embedded Triton in the foreground until interrupted")
    serve.add_argument("--model-repository", type=Path, default=MODEL_REPOSITORY)
    serve.add_argument("--http-port", type=int, default=None)
    _lang_option(serve)
    serve.set_defaults(handler=_serve)

    models = sub.add_parser("models", help="what is deployed and how it is scheduled")
    models.add_argument("--url", default=None, help="an existing Triton (host:port); default: start the embedded one")
    _lang_option(models)
    models.set_defaults(handler=_models)

    run = sub.add_parser("run", help="fire interleaved sessions at one deployment and judge the transcripts; at a "
                                     "generator deployment (gen_*), a generation workload on one gRPC stream")
    run.add_argument("--model", required=True)
    run.add_argument("--sessions", type=int, default=8)
    run.add_argument("--chunks", type=_chunk_counts, default=[24],
                     help="chunks each session sends, one symbol each (random words); '12,40' mixes counts")
    run.add_argument("--text", action="append", default=None, help="an utterance (repeat for several sessions)")
    run.add_argument("--think-ms", type=float, default=20.0)
    run.add_argument("--jitter-ms", type=float, default=10.0)
    run.add_argument("--concurrency", type=int, default=0, help="sessions in flight at once (0: all)")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--transport", choices=[t.value for t in Transport], default=Transport.HTTP.value, help="how chunks travel: HTTP, gRPC calls, or one gRPC "
                                                                                                             "stream per session")
    run.add_argument("--in-flight", type=int, default=1, help="chunks a session sends before earlier answers are back (1: wait for each)")
    run.add_argument("--url", default=None)
    run.add_argument("--json", type=Path, default=None, help="write sessions and per-request trace here")
    run.add_argument("--log-verbose", type=int, choices=(0, 1), default=0,
                     help="Triton's log verbosity during the run (1 logs the backlog, the reaper and refusals)")
    gen = run.add_argument_group("a generator deployment (gen_static, gen_inflight, gen_inflight_by_row, gen_lab_*)")
    gen.add_argument("--requests", type=int, default=generation.Workload.requests, help="requests to send")
    gen.add_argument("--gap-ms", type=float, default=generation.Workload.mean_gap_ms,
                     help="mean gap between arrivals (exponential gaps), in ms")
    gen.add_argument("--tokens", type=_token_range, default=(generation.Workload.min_tokens, generation.Workload.max_tokens),
                     metavar="MIN,MAX", help="each request asks for MIN to MAX tokens (uniform)")
    gen.add_argument("--cancel", action="append", default=[], type=_cancel, metavar="INDEX:N",
                     help="cancel request INDEX (0-based) after its N-th token: it travels on its own gRPC stream, "
                          "stopped with cancel_requests=True (repeat for more)")
    _lang_option(run)
    run.set_defaults(handler=_run)

    exercise = sub.add_parser("exercise", help="run a failure-mode exercise headless")
    exercise.add_argument("name", nargs="?", default=None, help="omit to list the exercises")
    exercise.add_argument("--url", default=None)
    exercise.add_argument("--json", type=Path, default=None, help="write the result (codes and values) here")
    _lang_option(exercise)
    exercise.set_defaults(handler=_exercise)

    check = sub.add_parser("check", help="check a deployment: the rollout guide's experiments on any model and server",
                           description="Exit status: 0 every check held and the config review found no error, 1 a check broke (a refused "
                                       "request included) or the review found an error, 2 it could not check, 3 nothing broke "
                                       "but a check was not exercised (--not-exercised-exit).")
    target = check.add_mutually_exclusive_group(required=True)
    target.add_argument("--model", help="the model to check (on the server of --url, else on the embedded server)")
    target.add_argument("--config", type=Path, help="review a config.pbtxt, a model folder or a repository offline (no server)")
    where = check.add_mutually_exclusive_group()
    where.add_argument("--url", default=None, help="an external Triton (host:port; default TRITON_URL): nothing is loaded there")
    where.add_argument("--model-repository", type=Path, default=None,
                       help="serve this repository on the embedded server (default: the lab's own)")
    balancer = check.add_argument_group("through a load balancer")
    balancer.add_argument("--replica", action="append", default=[], metavar="URL",
                          help="a replica behind the balancer of --url (repeat for each): its statistics say how the traffic "
                               "spread, and the same check runs directly on the first, so the report tells routing from model")
    balancer.add_argument("--replica-log", action="append", default=[], type=Path, metavar="FILE",
                          help="the log file of the --replica in the same place (repeat in their order), where this machine "
                               "can read it: its verbosity is raised to 1 for the run, so the report says which replicas "
                               "each sequence reached")
    balancer.add_argument("--session-header", default=None, metavar="NAME",
                          help="send each session's ID in this header (e.g. X-Session-ID, for nginx `hash $http_x_session_id "
                               "consistent`)")
    balancer.add_argument("--transport", choices=("http", "grpc", "grpc_stream"), default="http",
                          help="how requests travel: HTTP, gRPC calls, or one gRPC stream per sequence (default http)")
    balancer.add_argument("--grpc-url", default=None, metavar="HOST:PORT",
                          help="the gRPC endpoint for a decoupled model's streams and --transport grpc/grpc_stream (default "
                               "TRITON_GRPC_URL, else port 8001 of --url's host); one that refuses or is HTTP: exit 2")
    check.add_argument("--sessions", type=int, default=None, help="sessions (default: enough to fill every slot and overflow)")
    check.add_argument("--steps", type=int, default=None, help="steps of the longest session (default 24; a data file: its streams; "
                       "not for a decoupled model, whose streams' lengths are the model's)")
    check.add_argument("--think-ms", type=float, default=None,
                       help="your clients' think time between requests, in ms (default 5; not for a decoupled model's streams)")
    check.add_argument("--input-data", type=Path, default=None,
                       help="perf_analyzer --input-data JSON (one stream per session; its validation_data: golden outputs)")
    check.add_argument("--shape", action="append", default=[], metavar="NAME:D1,D2",
                       help="sizes of an input's variable dimensions (default: the checker draws 1 to 16 per dimension from --seed)")
    check.add_argument("--seed", type=int, default=0)
    check.add_argument("--ignore-output", action="append", default=[], metavar="NAME", help="an output that reports placement, not an answer")
    check.add_argument("--tolerance", type=float, default=None, help="float outputs: |got - ref| <= X * max(1, |ref|) (default: from the measured noise)")
    check.add_argument("--only", action="append", default=[], metavar="CHECK",  # CheckOptions says an unknown one, in words
                       help=f"run only this check (repeat for more): {', '.join(check_codes())}; the lone runs always run")
    check.add_argument("--no-one-instance", action="store_true", help="skip the run on a temporary one-instance copy")
    clients = check.add_argument_group("your clients and server, for the config review")
    clients.add_argument("--max-corrid", type=int, default=None, metavar="N", help="the largest integer correlation ID your clients send")
    clients.add_argument("--string-id-bytes", type=int, default=None, metavar="N",
                         help="the longest string correlation ID your clients send, in UTF-8 bytes")
    clients.add_argument("--backend", default=None, help="the backend serving the model, when its config names none")
    clients.add_argument("--gpus", type=int, default=None, help="GPUs the server's instances may use (0: a CPU-only server)")
    clients.add_argument("--triton-version", default=None, metavar="X.Y.Z",
                         help="with --config: the Triton server version the config will run on, as GET /v2 reports it "
                              "(2.51.0 is release 24.10); a live check uses the server's own")
    check.add_argument("--allow-review-errors", action="store_true",
                       help="an error-level finding of the config review does not fail the check (by default it exits 1, "
                            "as a broken check does); the findings are still reported")
    check.add_argument("--state-metric", default=None, metavar="NAME",
                       help="the model's own Prometheus gauge of the state it holds (labelled by model): after each client "
                            "fault it must fall back to its reading before the fault")
    check.add_argument("--no-faults", action="store_true",
                       help="leave out the client faults (a decoupled model's request cancelled mid-stream, and one whose "
                            "client's connection is reset mid-stream; a sequence model's client quiet past the idle timeout)")
    check.add_argument("--not-exercised-exit", type=int, choices=(0, 1, 3), default=3, metavar="{0,1,3}",
                       help="the exit status when nothing broke but a check's situation never happened (no batch of "
                            "several requests formed, no streams shared an execution): 3 by default, 0 accepts it, 1 fails")
    check.add_argument("--json", type=Path, default=None, help="write the report (codes and values) here")
    check.add_argument("--junit-xml", type=Path, default=None, help="write one JUnit test case per check here")
    check.add_argument("--export-failures", type=Path, default=None, metavar="PATH",
                       help="write the failing sessions here as perf_analyzer --input-data JSON, their lone references as "
                            "validation_data (nothing is written when nothing failed)")
    _lang_option(check)
    check.set_defaults(handler=_check)
    return parser


def _chunk_counts(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected chunk counts like 24 or 12,40, got {text!r}") from None


def _server(url: str | None, _: Words) -> LabServer:

    server = LabServer(url=url) if url else LabServer.from_env()
    if server.is_embedded:
        print(_("Starting the embedded Triton server..."), file=sys.stderr)
    return server.start()


def _serve(args: argparse.Namespace, _: Words) -> int:

    server = EmbeddedServer(model_repository=args.model_repository, http_port=args.http_port)
    # Every model in the repository, as shipped: `serve` works for any repository.
    server.startup_models = tuple(sorted(p.parent.name for p in Path(args.model_repository).glob("*/config.pbtxt")))
    server.start()
    stop = threading.Event()
    try:
        # Ctrl-C and SIGTERM end the wait, set up before the address is printed so that a signal
        # sent as soon as it is read is not lost. What the parent left does not count: a shell's
        # background job starts with SIGINT ignored, and a blocked signal mask is inherited.
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
        print(_.render(N_("Triton {repository:text} serving at http://{url:text} (metrics {metrics:text}); Ctrl-C stops it."),
                       repository=args.model_repository, url=server.url, metrics=server.metrics_url), flush=True)
        while not stop.is_set() and server.running:
            stop.wait(0.5)
    finally:
        server.stop()
    return 0


def _models(args: argparse.Namespace, _: Words) -> int:
    server = _server(args.url, _)
    try:
        status = server.status()
        print(_.render(N_("Triton {version:text} ({mode:text}, {url:text}), instances on {kind:text}"),
                       version=status["version"], mode=status["mode"], url=status["url"], kind=status["instance_kind"]))
        print(f"{_('model'):28} {_('state'):10} {_('scheduler'):18} {_('instances'):>9}  {_('kind')}")
        for m in status["models"]:
            print(f"{m['name']:28} {m['state']:10} {m['scheduler']:18} {m['instances']:>9}  {m['kind']}")
    finally:
        server.stop()
    return 0


def _token_range(text: str) -> tuple[int, int]:
    low, _sep, high = text.partition(",")
    try:
        return int(low), int(high or low)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected MIN,MAX (two whole numbers), got {text!r}") from None


def _cancel(text: str) -> tuple[int, int]:
    index, _sep, after = text.partition(":")
    try:
        return int(index), int(after)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected INDEX:N (two whole numbers), got {text!r}") from None


def _run(args: argparse.Namespace, _: Words) -> int:
    if generation.deployments.is_generator_name(args.model):
        return _run_generation(args, _)

    texts = args.text or random_texts(args.sessions, args.chunks, args.seed)
    scenario = Scenario(
        model=args.model,
        texts=texts,
        think_ms=args.think_ms,
        jitter_ms=args.jitter_ms,
        concurrency=args.concurrency,
        seed=args.seed,
        transport=Transport(args.transport),
        in_flight=args.in_flight,
    )
    scenario.validate()
    server = _server(args.url, _)
    try:
        with server_log.raised_verbosity(server, args.log_verbose) if args.log_verbose else nullcontext():
            result = driver.run(server, scenario)
    finally:
        server.stop()
    print(report_text.summary_table(result, _))
    print(_("server log:"), *log_readings.summary_lines(result.log, _), sep="\n")
    if args.json:
        args.json.write_text(json.dumps(run_report_json(result), indent=1))
        print(_.render(N_("wrote {path:text}"), path=args.json))
    return 0


def _run_generation(args: argparse.Namespace, _: Words) -> int:
    """A generation workload on a generator deployment: its figures printed, its tables in --json."""
    workload = generation.Workload(requests=args.requests, mean_gap_ms=args.gap_ms, min_tokens=args.tokens[0],
                                   max_tokens=args.tokens[1], seed=args.seed)
    workload.check()  # before a server starts
    server = _server(args.url, _)
    try:
        result = generation.run(server, args.model, workload, cancel_after=dict(args.cancel))
    finally:
        server.stop()
    print(*generation_words.summary_lines(result, _), sep="\n")
    if args.json:
        report = generation.report_json(result.run_id, result.model, result.trace, result.plans, result.max_batch_size,
                                        result.server)
        args.json.write_text(json.dumps(report, indent=1))
        print(_.render(N_("wrote {path:text}"), path=args.json))
    return 0


def _exercises() -> tuple[ModuleType, ModuleType]:
    """The exercise registry and its words, imported when an exercise command runs: the families'
    figures import plotly, which `batching-lab check` installed alone (docs/checker.md) lacks."""
    from app.registry import exercise_words, families

    return families, exercise_words


def exercise_titles(_: Words) -> list[tuple[str, str]]:
    """(name, title in _'s language) of every exercise, in teaching order."""
    families, text = _exercises()
    return [(name, text.title(name, _)) for name in families.names()]


def _exercise(args: argparse.Namespace, _: Words) -> int:
    families, _text = _exercises()
    if args.name is None:
        for name, title in exercise_titles(_):
            print(f"{name:22} {title}")
        return 0
    if args.name not in families.names():  # unknown names fail before a server starts
        raise LabError("exercise_unknown", value=args.name, choices=", ".join(families.names()))
    server = _server(args.url, _)
    try:
        result = families.run(args.name, server, Deployer(server))
    finally:
        server.stop()
    print_exercise(result, _, args.json)
    return 0


def print_exercise(result: ExerciseResult, _: Words, json_path: Path | None = None) -> None:
    """What `exercise NAME` prints for one result, in _'s language; with json_path, the result's
    codes and values are written there too."""
    _families, text = _exercises()
    print(text.summary(result, _))
    print(_("server log:"), *log_readings.summary_lines(result.log, _), sep="\n")
    if json_path:
        json_path.write_text(json.dumps(result.to_json(), indent=1, default=str))
        print(_.render(N_("wrote {path:text}"), path=json_path))


def _check(args: argparse.Namespace, _: Words) -> int:
    """A shell over app.checker: exit 0 when the check passed, 1 when it failed (a check broke, or
    the config review found an error), 2 (main's explained-error path) when it could not check."""
    values = dict(
        sessions=args.sessions, steps=args.steps, think_ms=args.think_ms, seed=args.seed,
        shapes=dict(parse_shape(s) for s in args.shape), input_data=args.input_data,
        ignore_outputs=args.ignore_output, tolerance=args.tolerance, one_instance=not args.no_one_instance,
        only=args.only, max_corrid=args.max_corrid, string_id_bytes=args.string_id_bytes, backend=args.backend,
        gpus=args.gpus, triton_version=args.triton_version, allow_review_errors=args.allow_review_errors,
        transport=args.transport, session_header=args.session_header, not_exercised_exit=args.not_exercised_exit,
        faults=not args.no_faults, state_metric=args.state_metric,
    )
    try:
        if args.config is not None:
            findings = checker.review_config(args.config, **values)
        else:
            def progress(done: int, planned: int, stage: Stage) -> None:
                print(f"\r{_(check_text.PHASES[stage.code])}: {done}/{planned}", end="", file=sys.stderr, flush=True)

            report = checker.check(args.model, url=args.url, model_repository=args.model_repository, replicas=args.replica,
                                       replica_logs=args.replica_log, grpc_url=args.grpc_url,
                                       progress=progress if sys.stderr.isatty() else None,
                                       on_start=lambda: print(_("Starting the embedded Triton server..."), file=sys.stderr), **values)
    except checker.CheckError as err:
        raise err.cause from None  # main() words it as it words every error, and exits 2
    if args.config is not None:
        for line in check_text.review_lines(findings, _, args.triton_version):
            print(line)
        if args.json:
            args.json.write_text(json.dumps(review_report_json(findings, args.triton_version), indent=1))
            print(_.render(N_("wrote {path:text}"), path=args.json))
        return review_exit_code(findings)
    result = report.result
    if sys.stderr.isatty():
        print(file=sys.stderr)
    print("\n".join(check_text.summary_lines(result, _)))
    print("\n".join(check_text.outcome_lines(result, _)))
    if args.json:
        args.json.write_text(check_report_text(result))
        print(_.render(N_("wrote {path:text}"), path=args.json))
    if args.junit_xml:
        args.junit_xml.write_text(report.junit_xml(describe=lambda v: check_text.junit_message(v, _)))
        print(_.render(N_("wrote {path:text}"), path=args.junit_xml))
    if args.export_failures:
        _export_failures(result, args.export_failures, _)
    return report.exit_code


def _export_failures(result: CheckResult, path: Path, _: Words) -> None:
    """The failing sessions as perf_analyzer --input-data JSON at `path`; nothing written when none failed."""
    document = failing_input_data(result)
    if document is None:
        print(_.render(check_text.EXPORT_NOTHING, path=path))
        return
    path.write_text(json.dumps(document, indent=1))
    print(_.render(check_text.EXPORT_WROTE, path=path, n=len(document["data"])))


if __name__ == "__main__":
    sys.exit(main())
