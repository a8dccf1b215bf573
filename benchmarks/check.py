"""The deployment checker on every zoo model: time to a verdict, requests sent, peak memory; its
send rate against a plain tritonclient loop, side by side in one run; memory at 16 and 256 sessions;
the cost of golden outputs: the same check with and without validation_data, side by side.

    python benchmarks/check.py [--steps 24] [--sessions 16] [--rounds 3] [--large 256] [--only NAME ...]
                               [--golden-model zoo_stateless] [--golden-rounds 2]
    python benchmarks/check.py --only zoo_stateless --rate-requests 50 --rounds 1 --large 0 --golden-rounds 1 --steps 6 --sessions 4
                                                                                  # a short run: every part, once, small

The zoo (tests/checker/zoo) is served by an embedded Triton of its own; each model is loaded,
checked with the checker's defaults (one-instance copy included where it has several instances)
and unloaded. Memory: the checker process's peak resident set during the check (Linux VmHWM,
reset before each check through /proc/self/clear_refs) and the server's process group peak
(server and model stubs, sampled). Send rate: the same lone requests (one in flight) through the
checker's own send path (transports, recording, comparison with the reference) and through a bare
InferenceServerClient.infer loop, in alternating rounds so both see the same machine load.
Golden outputs: one data file of generated inputs (a stream per session), its validation_data the
replies of each session run alone through a bare client loop (the references); the check runs with
the file's "data" alone and with its validation_data too, alternately, so the difference is what
comparing every reply with its golden output costs (wall time and the checker's own CPU).
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import tritonclient.http as http  # noqa: E402
from tritonclient.utils import np_to_triton_dtype  # noqa: E402

from app.checker.engine import CheckOptions, run, run_check, target_facts, target_on_server  # noqa: E402
from app.checker.engine.sequences import measure  # noqa: E402
from app.checker.words import error  # noqa: E402
from app.i18n import words  # noqa: E402
from app.lab.problems import LabError  # noqa: E402
from app.lab.server import LabServer  # noqa: E402
from benchmarks._common import PeakMemory, print_build  # noqa: E402

ZOO = Path(__file__).resolve().parents[1] / "tests" / "checker" / "zoo"
OPTIONS = {"zoo_varlen": {"shapes": {"TOKENS": (5,)}}}
RATE_MODEL = "zoo_stateless"


def zoo_models() -> list[str]:
    return sorted(p.parent.name for p in ZOO.glob("*/config.pbtxt"))


def peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def reset_peak() -> None:
    with contextlib.suppress(OSError):  # resets VmHWM to the current resident set
        Path("/proc/self/clear_refs").write_text("5")


def check_one(server, name: str, sessions: int | None, steps: int) -> dict:
    server.models.ensure(name)
    reset_peak()
    started = time.perf_counter()
    row = {"model": name}
    with PeakMemory(server.embedded.pid) as group:
        try:
            target = target_on_server(server, name)
            # a decoupled model's streams take no steps: the model decides how many responses each request gets
            length = None if target_facts(target).decoupled else steps
            result = run_check(target, CheckOptions(sessions=sessions, steps=length, **OPTIONS.get(name, {})))
        except LabError as err:
            row.update(outcome=f"refused: {err.code}", wall_s=time.perf_counter() - started, requests=0)
        else:
            counts = {k: sum(v.verdict == k for v in result.verdicts) for k in ("held", "broken", "skipped")}
            phases = result.tables.phases
            one = phases[phases["variant"] == "one_instance"]
            before = phases[phases["variant"] != "one_instance"]
            copy_s = float(one["started_s"].min() - (before["started_s"] + before["wall_s"]).max()) if len(one) else 0.0
            row.update(outcome="broken" if result.exit_code else "held", wall_s=result.wall_s, requests=result.requests,
                       sessions=len(result.tables.lengths), copy_s=copy_s,
                       verdicts=f"{counts['held']}/{counts['broken']}/{counts['skipped']}",
                       diagnoses=",".join(d["code"] for d in result.judgement.diagnoses) or "-")
    row.update(checker_mb=peak_rss_mb(), server_mb=group.peak_mb)
    server.client().unload_model(name)
    return row


def send_rates(server, requests: int, rounds: int) -> list[tuple[float, float, float, float]]:
    """(checker, plain) requests per second for `requests` lone requests, and the client's own
    CPU per request of each (ms; the part of a request the client spends, whatever the load), per round."""
    server.models.ensure(RATE_MODEL)
    facts = target_facts(target_on_server(server, RATE_MODEL))
    source = run.input_source(facts, CheckOptions(sessions=1, steps=requests))
    out = []
    for _ in range(rounds):
        m = measure.Measurement(target_on_server(server, RATE_MODEL), facts, source, CheckOptions(), None, requests)
        m.lengths = source.lengths
        for k in range(requests):  # the references: what later passes are compared with
            m.send(RATE_MODEL, "reference", "alone", "alone", 0, 0, k, pass_="a")
        start, cpu = time.perf_counter(), time.process_time()
        for k in range(requests):
            m.send(RATE_MODEL, "reference", "alone", "alone", 1, 0, k, pass_="b")
        checker = requests / (time.perf_counter() - start)
        checker_cpu = (time.process_time() - cpu) / requests * 1e3
        m.close_links()
        client = http.InferenceServerClient(server.url)
        start, cpu = time.perf_counter(), time.process_time()
        for k in range(requests):
            tensors = []
            for name, array in source.arrays(0, k).items():
                tensor = http.InferInput(name, list(array.shape), np_to_triton_dtype(array.dtype))
                tensor.set_data_from_numpy(array)
                tensors.append(tensor)
            client.infer(RATE_MODEL, tensors)
        plain = requests / (time.perf_counter() - start)
        plain_cpu = (time.process_time() - cpu) / requests * 1e3
        client.close()
        out.append((checker, plain, checker_cpu, plain_cpu))
    server.client().unload_model(RATE_MODEL)
    return out


def _plain_values(array) -> list:
    """A tensor as the data file's flat list: numbers, BYTES as text."""
    return [v.decode() if isinstance(v, bytes) else v for v in np.asarray(array).reshape(-1).tolist()]


def golden_document(server, model: str, sessions: int, steps: int) -> dict:
    """perf_analyzer --input-data JSON: generated inputs, one stream per session, and validation_data
    from each session run alone (sequences with their START and END) through a bare client loop."""
    facts = target_facts(target_on_server(server, model))
    source = run.input_source(facts, CheckOptions(sessions=sessions, steps=steps))
    client = http.InferenceServerClient(server.url)
    data, golden = [], []
    try:
        for s in range(sessions):
            stream, expected = [], []
            for k in range(steps):
                tensors, entry = [], {}
                for name, array in source.arrays(s, k).items():
                    tensor = http.InferInput(name, list(array.shape), np_to_triton_dtype(array.dtype))
                    tensor.set_data_from_numpy(array)
                    tensors.append(tensor)
                    entry[name] = _plain_values(array)
                flags = {"sequence_id": 1_000_000 + s, "sequence_start": k == 0, "sequence_end": k == steps - 1} if facts.sequence else {}
                reply = client.infer(model, tensors, **flags)
                stream.append(entry)
                expected.append({o.name: _plain_values(reply.as_numpy(o.name)) for o in facts.outputs})
            data.append(stream)
            golden.append(expected)
    finally:
        client.close()
    return {"data": data, "validation_data": golden}


def golden_cost(server, model: str, sessions: int, steps: int, rounds: int) -> list[dict]:
    """Per round, the same check without and with validation_data (alternating): wall time, the
    checker's CPU, requests, and the golden verdicts."""
    server.models.ensure(model)
    document = golden_document(server, model, sessions, steps)
    plain = {"data": document["data"]}
    out = []
    for _ in range(rounds):
        row = {}
        for label, doc in (("without", plain), ("with", document)):
            cpu = time.process_time()
            result = run_check(target_on_server(server, model), CheckOptions(input_data=doc, one_instance=False))
            row[label] = {"wall_s": result.wall_s, "cpu_s": time.process_time() - cpu, "requests": result.requests,
                          "golden": ",".join(f"{v.variant}:{v.verdict}" for v in result.verdicts if v.check == "golden")}
        out.append(row)
    server.client().unload_model(model)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rate-requests", type=int, default=400)
    parser.add_argument("--large", type=int, default=256, help="sessions of the memory run (0: skip it)")
    parser.add_argument("--large-model", default="zoo_corrid_oldest")
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--golden-model", default="zoo_stateless", help="the model of the golden outputs' cost")
    parser.add_argument("--golden-rounds", type=int, default=2, help="rounds of the golden cost (0: skip it)")
    args = parser.parse_args()
    print_build()
    print(f"host: {os.cpu_count()} CPUs, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} at start "
          "(a shared machine: other engineers' work runs beside this)", flush=True)
    server = LabServer(model_repository=ZOO).start()
    try:
        rows = []
        print(_header(), flush=True)
        for name in args.only or zoo_models():
            try:
                rows.append(check_one(server, name, args.sessions, args.steps))
            except Exception as err:  # a figure we could not take is printed, not hidden
                rows.append({"model": name, "outcome": f"failed: {error(err, words('en'))[:60]}"})
            print(_row(rows[-1]), flush=True)
        print()
        rates = send_rates(server, args.rate_requests, args.rounds)
        print(f"send rate, {args.rate_requests} lone requests to {RATE_MODEL} per round, alternating (req/s; client CPU ms/request):")
        print(f"{'round':>5} {'checker':>9} {'plain':>9} {'ratio':>6} {'checker_cpu':>11} {'plain_cpu':>9}")
        for i, (checker, plain, c_cpu, p_cpu) in enumerate(rates, 1):
            print(f"{i:>5} {checker:>9.0f} {plain:>9.0f} {checker / plain:>6.2f} {c_cpu:>11.3f} {p_cpu:>9.3f}")
        mean = [sum(r[i] for r in rates) / len(rates) for i in range(4)]
        print(f"{'mean':>5} {mean[0]:>9.0f} {mean[1]:>9.0f} {mean[0] / mean[1]:>6.2f} {mean[2]:>11.3f} {mean[3]:>9.3f}", flush=True)
        if args.large:
            print()
            print(f"memory as sessions grow ({args.large_model}, {args.steps} steps):")
            print(f"{'sessions':>8} {'verdict_s':>9} {'requests':>8} {'checker_MB':>10} {'server_MB':>9}")
            for sessions in (args.sessions, args.large):
                r = check_one(server, args.large_model, sessions, args.steps)
                print(f"{sessions:>8} {r.get('wall_s', float('nan')):>9.1f} {r.get('requests', 0):>8} {r['checker_mb']:>10.0f} "
                      f"{r['server_mb']:>9.0f}", flush=True)
        if args.golden_rounds:
            print()
            print(f"golden outputs' cost ({args.golden_model}, {args.sessions} sessions x {args.steps} steps, all instances; "
                  "the same check without and with validation_data, alternating):")
            print(f"{'round':>5} {'wall_s':>7} {'wall_s+golden':>13} {'cpu_s':>6} {'cpu_s+golden':>12} {'cpu_ratio':>9} {'requests':>8}  golden verdicts")
            for i, r in enumerate(golden_cost(server, args.golden_model, args.sessions, args.steps, args.golden_rounds), 1):
                a, b = r["without"], r["with"]
                print(f"{i:>5} {a['wall_s']:>7.2f} {b['wall_s']:>13.2f} {a['cpu_s']:>6.2f} {b['cpu_s']:>12.2f} "
                      f"{b['cpu_s'] / a['cpu_s']:>9.2f} {b['requests']:>8}  {a['golden']} | {b['golden']}", flush=True)
        print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    finally:
        server.stop()


def _header() -> str:
    return (f"{'model':28} {'outcome':18} {'verdict_s':>9} {'copy_s':>6} {'sessions':>8} {'requests':>8} {'held/broken/skipped':>19} "
            f"{'checker_MB':>10} {'server_MB':>9}  diagnoses")


def _row(r: dict) -> str:
    nan = float("nan")
    return (f"{r['model']:28} {r['outcome']:18} {r.get('wall_s', nan):>9.1f} {r.get('copy_s', nan):>6.1f} {r.get('sessions', 0):>8} "
            f"{r.get('requests', 0):>8} {r.get('verdicts', '-'):>19} {r.get('checker_mb', nan):>10.0f} {r.get('server_mb', nan):>9.0f}  "
            f"{r.get('diagnoses', '')}")


if __name__ == "__main__":
    main()
