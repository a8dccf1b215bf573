"""batching-lab: the lab engine from the command line (serve, models, run, exercise).

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
from contextlib import nullcontext
from pathlib import Path

from app.i18n import N_, SOURCE_LANGUAGE, Words, languages, parse_language, words
from app.lab import exercises
from app.lab.deployment.deployer import Deployer
from app.lab.observation import server_log
from app.lab.paths import MODEL_REPOSITORY
from app.lab.problems import LabError
from app.lab.scenario.scenario import Scenario, random_texts
from app.lab.scenario.transport import Transport
from app.lab.server.connection import LabServer
from app.lab.server.embedded import EmbeddedServer
from app.lab.server.errors import ServerError
from app.lab.traffic import driver, report
from app.text import exercises as text
from app.text import log_readings
from app.text import report as report_text
from app.text.problems import error


def default_language(environ=os.environ) -> str:
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
        return args.handler(args, _)
    except KeyboardInterrupt:
        return 130
    except Exception as err:  # one clear line for the user, not a traceback

        if isinstance(err, LabError):
            print(f"batching-lab: {error(err, _)}", file=sys.stderr)
            return 2
        if isinstance(err, (ServerError, ValueError)):  # the system's own text, as it is
            print(f"batching-lab: {err}", file=sys.stderr)
            return 2
        raise


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

    run = sub.add_parser("run", help="fire interleaved sessions at one deployment and judge the transcripts")
    run.add_argument("--model", required=True)
    run.add_argument("--sessions", type=int, default=8)
    run.add_argument("--chunks", type=_lengths, default=[24], help="utterance length in symbols (random words); '12,40' mixes lengths")
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
    _lang_option(run)
    run.set_defaults(handler=_run)

    exercise = sub.add_parser("exercise", help="run a failure-mode exercise headless")
    exercise.add_argument("name", nargs="?", default=None, help="omit to list the exercises")
    exercise.add_argument("--url", default=None)
    exercise.add_argument("--json", type=Path, default=None, help="write the result (codes and values) here")
    _lang_option(exercise)
    exercise.set_defaults(handler=_exercise)
    return parser


def _lengths(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected lengths like 24 or 12,40, got {text!r}") from None


def _server(url: str | None, _: Words):

    server = LabServer(url=url) if url else LabServer.from_env()
    if server.is_embedded:
        print(_("Starting the embedded Triton server..."), file=sys.stderr)
    return server.start()


def _serve(args, _: Words) -> int:

    server = EmbeddedServer(model_repository=args.model_repository, http_port=args.http_port)
    # Every model in the repository, as shipped: `serve` works for any repository.
    server.startup_models = tuple(sorted(p.parent.name for p in Path(args.model_repository).glob("*/config.pbtxt")))
    server.start()
    print(_.render(N_("Triton {repository:text} serving at http://{url:text} (metrics {metrics:text}); Ctrl-C stops it."),
                   repository=args.model_repository, url=server.url, metrics=server.metrics_url), flush=True)
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


def _models(args, _: Words) -> int:
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


def _run(args, _: Words) -> int:

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
        args.json.write_text(json.dumps(report.to_json(result), indent=1))
        print(_.render(N_("wrote {path:text}"), path=args.json))
    return 0


def exercise_titles(_: Words) -> list[tuple[str, str]]:
    """(name, title in _'s language) of every exercise, in teaching order."""

    return [(name, text.title(name, _)) for name in exercises.EXERCISES]


def _exercise(args, _: Words) -> int:

    if args.name is None:
        for name, title in exercise_titles(_):
            print(f"{name:22} {title}")
        return 0
    if args.name not in exercises.EXERCISES:  # unknown names fail before a server starts
        raise LabError("exercise_unknown", value=args.name, choices=", ".join(exercises.EXERCISES))
    server = _server(args.url, _)
    try:
        result = exercises.run(args.name, server, Deployer(server))
    finally:
        server.stop()
    print_exercise(result, _, args.json)
    return 0


def print_exercise(result, _: Words, json_path: Path | None = None) -> None:
    """What `exercise NAME` prints for one result, in _'s language; with json_path, the result's
    codes and values are written there too."""
    print(text.summary(result, _))
    print(_("server log:"), *log_readings.summary_lines(result.log, _), sep="\n")
    if json_path:
        json_path.write_text(json.dumps(result.to_json(), indent=1, default=str))
        print(_.render(N_("wrote {path:text}"), path=json_path))


if __name__ == "__main__":
    sys.exit(main())
