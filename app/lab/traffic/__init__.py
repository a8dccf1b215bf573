"""Traffic: sending a scenario's sessions to Triton and collecting one row per request.

Callers outside this package import from here: names, and the module `run_queue` as a namespace whose
functions read with its name, `run_queue.hold(server, model)` / `run_queue.for_server(url)`. The recogniser's
session driver, which sends a scenario, is app/recogniser/engine/driver.py; the generator's is
app/generation/engine/driver.py: both take a ServerView and hold their deployment through run_queue.
"""
from app.lab.traffic import run_queue
from app.lab.traffic.admission import OnWait, Wait
from app.lab.traffic.report import WAITED_MS, waits_and_refusals
from app.lab.traffic.report import to_json as run_report_json
from app.lab.traffic.server_view import ServerView
from app.lab.traffic.shared_queue import SharedRunQueue
from app.lab.traffic.transports import NO_ANSWER, TIMEOUT_S, Link, open_link

__all__ = [
    "NO_ANSWER",
    "TIMEOUT_S",
    "WAITED_MS",
    "Link",
    "OnWait",
    "ServerView",
    "SharedRunQueue",
    "Wait",
    "open_link",
    "run_queue",
    "run_report_json",
    "waits_and_refusals",
]
