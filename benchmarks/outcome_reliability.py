"""How often ONE run shows what the course teaches: every lab preset and every exercise, N times.

A learner runs each scenario once, so the figure that matters is the share of single runs
that show the taught outcome, not whether it shows within a few retries. Exercises judge
themselves (`as_taught`: the outcome the server produced is the option the lesson keys);
presets are judged by `preset_outcome` below, which demands the preset's specific evidence
from the model's raw STATE_OWNER (chunks that read another session of the SAME run, padding
rows, or every chunk reading only its own state), so state left over from earlier runs
cannot pass for it.

    python benchmarks/outcome_reliability.py [--repeats 20] [--only NAME ...] [--url HOST:PORT]

NAME is a preset or exercise name (both when a name is both), or preset:NAME / exercise:NAME.
A run that raises is counted as not taught and its message is printed; the script goes on.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.lab.deployment import Deployer  # noqa: E402
from app.lab.server import LabServer  # noqa: E402
from app.live.sentiment import engine as sentiment
from app.recogniser.engine import presets
from app.recogniser.engine.judgement import evidence  # noqa: E402
from app.registry import families as exercises  # both families: the recogniser's and the generator's
from benchmarks._common import torch_build  # noqa: E402

# What each corrupting preset teaches, as the verdict a single run must show; presets that
# expect "intact" must come back intact with every chunk reading only its own state.
CORRUPTION_SHOWN = {"the_mistake": "foreign", "oldest_wrong": "foreign", "forgot_ready": "garbage"}
TARGET = 0.95  # share of single runs each lab preset must reach


def taught_outcome(name: str) -> str:
    preset = presets.get(name)
    if preset.expect == "intact":
        return "intact"
    if name not in CORRUPTION_SHOWN:
        raise KeyError(f"preset {name!r} expects corruption but CORRUPTION_SHOWN does not say which kind")
    return CORRUPTION_SHOWN[name]


def preset_outcome(result) -> str:
    """One word for what a preset run showed, from the raw STATE_OWNER evidence, strictest first.

    foreign: sessions corrupted, and chunks read state that ANOTHER SESSION OF THIS RUN wrote
             and came back wrong (state left by earlier runs does not count);
    garbage: some session's first wrong chunk read state a padding row wrote;
    intact:  every session intact and every chunk read only a fresh cell or its own state.
    Anything else is named by its verdicts, e.g. "foreign (earlier run)" or "lost".
    """
    s = result.sessions
    if (s["verdict"] == "error").any():
        return "error"
    if not result.all_intact and not evidence.mixing_broke_chunks(result).empty:
        return "foreign"
    if evidence.broke_on_padding(result):
        return "garbage"
    if result.all_intact:
        return "intact" if evidence.read_only_own_state(result) else "intact, but read others' state"
    broken = s[s["verdict"] != "intact"]
    return " + ".join(sorted({"foreign (earlier run)" if v == "foreign" else v for v in broken["verdict"]}))


def select(only: list[str] | None) -> list[tuple[str, str]]:
    every = [("preset", n) for n in presets.PRESETS] + [("exercise", n) for n in exercises.names()]
    if not only:
        return every
    chosen = []
    for want in only:
        kind, _, name = want.rpartition(":")
        hits = [(k, n) for k, n in every if n == name and kind in ("", k)]
        if not hits:
            raise SystemExit(f"--only {want!r}: no such preset or exercise; choose from "
                             f"{', '.join(sorted({n for _, n in every}))}")
        chosen += [h for h in hits if h not in chosen]
    return chosen


def run_once(kind: str, name: str, server, deployer) -> tuple[str, bool]:
    if kind == "preset":
        _, result = presets.run_preset(server, deployer, name)
        outcome = preset_outcome(result)
        return outcome, outcome == taught_outcome(name)
    result = exercises.run(name, server, deployer)
    return result.outcome, bool(result.as_taught)


def responsive(server) -> bool:
    """Does the server still run inferences? A crashed Triton can hang in its signal handler
    and keep answering /v2/health/live and /ready, so ask the stateless model instead."""
    try:
        sentiment.classify(server.client(timeout_s=15), sentiment.MODEL, "good")
        return True
    except Exception:
        return False


def last_words(server) -> str:
    """What a dead embedded server logged last (a crash prints "Signal (11) received.")."""
    path = server.log_path
    lines = path.read_text(errors="replace").splitlines() if path and path.exists() else []
    said = [line for line in lines if "Signal (" in line] or lines[-1:]
    return said[-1].strip() if said else "no server log"




def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--only", action="append", metavar="NAME")
    parser.add_argument("--url", default=None, help="an external Triton (default: start the embedded one)")
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    chosen = select(args.only)
    started = time.perf_counter()
    server = LabServer(url=args.url).start()
    rows = []
    try:
        status = server.status()
        print(f"{torch_build()}; {os.cpu_count()} cores; Triton {status['version']} ({status['mode']}), "
              f"instance kind {status['instance_kind']}; ready in {time.perf_counter() - started:.1f} s; "
              f"load average {os.getloadavg()[0]:.1f} at start", flush=True)
        deployer = Deployer(server)
        for kind, name in chosen:
            taught = taught_outcome(name) if kind == "preset" else exercises.get(name).correct
            outcomes, hits, failures, seconds = Counter(), 0, [], []
            for i in range(args.repeats):
                t0 = time.perf_counter()
                try:
                    outcome, ok = run_once(kind, name, server, deployer)
                except Exception as err:  # one failed run is a data point, not the end of the table
                    outcome, ok = "failed", False
                    failures.append(f"run {i + 1}: {type(err).__name__}: {err}")
                    traceback.print_exc(limit=3, file=sys.stderr)
                if not ok and not responsive(server):
                    failures.append(f"run {i + 1}: the server stopped answering ({last_words(server)}); restarted it")
                    server.restart()
                    deployer.forget()
                seconds.append(time.perf_counter() - t0)
                outcomes[outcome] += 1
                hits += ok
            share = hits / args.repeats
            rows.append((kind, name, taught, hits, share, outcomes, failures, sum(seconds) / len(seconds)))
            flag = "" if kind == "exercise" or share >= TARGET else f"  BELOW {TARGET:.0%}"
            print(f"{kind:8} {name:16} taught {taught:9} {hits:>3}/{args.repeats:<3} = {share:6.1%}  "
                  f"{sum(seconds) / len(seconds):5.1f} s/run  outcomes {dict(outcomes)}{flag}", flush=True)
            for line in failures:
                print(f"    {line}", flush=True)
        print(f"load average {os.getloadavg()[0]:.1f} at end; {time.perf_counter() - started:.0f} s in all")
    finally:
        server.stop()
    short = [r for r in rows if r[0] == "preset" and r[4] < TARGET]
    return 1 if short else 0


if __name__ == "__main__":
    sys.exit(main())
