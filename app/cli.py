"""batching-lab: the lab engine from the command line (serve, models, run, exercise)."""
from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from contextlib import nullcontext
from pathlib import Path

from app.lab.paths import MODEL_REPOSITORY
from app.lab.transports import Transport


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except KeyboardInterrupt:
        return 130
    except Exception as err:  # one clear line for the user, not a traceback
        from app.lab.server.errors import ServerError
        from app.lab.deployments import DeploymentError

        if isinstance(err, (ServerError, DeploymentError, ValueError)):
            print(f"batching-lab: {err}", file=sys.stderr)
            return 2
        raise


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="batching-lab", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the embedded Triton in the foreground until interrupted")
    serve.add_argument("--model-repository", type=Path, default=MODEL_REPOSITORY)
    serve.add_argument("--http-port", type=int, default=None)
    serve.set_defaults(handler=_serve)

    models = sub.add_parser("models", help="what is deployed and how it is scheduled")
    models.add_argument("--url", default=None, help="an existing Triton (host:port); default: start the embedded one")
    models.set_defaults(handler=_models)

    run = sub.add_parser("run", help="fire interleaved sessions at one deployment and judge the transcripts")
    run.add_argument("--model", required=True)
    run.add_argument("--sessions", type=int, default=8)
    run.add_argument("--chunks", type=_lengths, default=[24], help="utterance length in symbols (random words); '12,40' mixes lengths")
    run.add_argument("--text", action="append", default=None, help="an utterance (repeat for several sessions)")
    run.add_argument("--think-ms", type=float, default=20.0)
    run.add_argument("--jitter-ms", type=float, default=10.0)
    run.add_argument("--concurrency", type=int, default=0, help="sessions in flight at once (0: all)")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--transport", choices=[t.value for t in Transport], default=Transport.HTTP.value, help="how chunks travel: HTTP, gRPC calls, or one gRPC stream per session")
    run.add_argument("--in-flight", type=int, default=1, help="chunks a session sends before earlier answers are back (1: wait for each)")
    run.add_argument("--url", default=None)
    run.add_argument("--json", type=Path, default=None, help="write sessions and per-request trace here")
    run.add_argument("--log-verbose", type=int, choices=(0, 1), default=0,
                     help="Triton's log verbosity during the run (1 logs the backlog, the reaper and refusals)")
    run.set_defaults(handler=_run)

    exercise = sub.add_parser("exercise", help="run a failure-mode exercise headless")
    exercise.add_argument("name", nargs="?", default=None, help="omit to list the exercises")
    exercise.add_argument("--url", default=None)
    exercise.add_argument("--json", type=Path, default=None)
    exercise.set_defaults(handler=_exercise)
    return parser


def _lengths(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected lengths like 24 or 12,40, got {text!r}") from None


def _server(url: str | None):
    from app.lab.server.connection import LabServer

    server = LabServer(url=url) if url else LabServer.from_env()
    if server.is_embedded:
        print("Starting the embedded Triton server...", file=sys.stderr)
    return server.start()


def _serve(args) -> int:
    from app.lab.server.embedded import EmbeddedServer

    server = EmbeddedServer(model_repository=args.model_repository, http_port=args.http_port)
    # Every model in the repository, as shipped: `serve` works for any repository.
    server.startup_models = tuple(sorted(p.parent.name for p in Path(args.model_repository).glob("*/config.pbtxt")))
    server.start()
    print(f"Triton {args.model_repository} serving at http://{server.url} (metrics {server.metrics_url}); Ctrl-C stops it.", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        while not stop.is_set() and server.running:
            stop.wait(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


def _models(args) -> int:
    server = _server(args.url)
    try:
        status = server.status()
        print(f"Triton {status['version']} ({status['mode']}, {status['url']}), instances on {status['instance_kind']}")
        print(f"{'model':28} {'state':10} {'scheduler':18} {'instances':>9}  kind")
        for m in status["models"]:
            print(f"{m['name']:28} {m['state']:10} {m['scheduler']:18} {m['instances']:>9}  {m['kind']}")
    finally:
        server.stop()
    return 0


def _run(args) -> int:
    from app.lab import driver, report, server_log
    from app.lab.scenario import Scenario, random_texts
    from app.ui import log_readings

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
    server = _server(args.url)
    try:
        with server_log.raised_verbosity(server, args.log_verbose) if args.log_verbose else nullcontext():
            result = driver.run(server, scenario)
    finally:
        server.stop()
    print(report.summary_table(result))
    print("server log:", *log_readings.summary_lines(result.log), sep="\n")
    if args.json:
        args.json.write_text(json.dumps(report.to_json(result), indent=1))
        print(f"wrote {args.json}")
    return 0


def _exercise(args) -> int:
    from app.lab import exercises
    from app.lab.deployer import Deployer
    from app.ui import log_readings

    if args.name is None:
        for name, exercise in exercises.EXERCISES.items():
            print(f"{name:22} {exercise.title}")
        return 0
    exercises.get(args.name)  # unknown names fail before a server starts
    server = _server(args.url)
    try:
        result = exercises.run(args.name, server, Deployer(server))
    finally:
        server.stop()
    print(result.summary_table())
    print("server log:", *log_readings.summary_lines(result.log), sep="\n")
    if args.json:
        args.json.write_text(json.dumps(result.to_json(), indent=1, default=str))
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
