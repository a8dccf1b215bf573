"""The source material's worked scenario, sent to the real server: two models, four requests.

Model A is `sentiment` (stateless, dynamic batcher) and Model B is `asr_sequence_direct`
(stateful, sequence batcher). Requests 1 and 2 go to A with no sequence ID, at the same time;
requests 3 and 4 are turns 3 and 4 of one sequence, both with the start flag false. With
`open_first`, turns 1 and 2 (START on turn 1) go first, as the scenario assumes; without it the
server has never seen the sequence, and what it does with turns 3 and 4 is the lesson.

The scenario calls the sequence 77; the ID actually sent is unique, so learners sharing the
server never collide (app/lab/scenario/ids.py). Turn 4 also carries END, so the slot is freed at once.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import pandas as pd
import tritonclient.http as http
from tritonclient.utils import InferenceServerException

from app.lab.scenario.alphabet import to_symbols, to_text
from app.lab.scenario.ids import unique_ids
from app.lab.traffic import run_queue
from app.live.sentiment import engine as sentiment
from app.recogniser.engine.audio import utterance

if TYPE_CHECKING:
    from app.lab.server import LabServer

MODEL_A = sentiment.MODEL
MODEL_B = "asr_sequence_direct"
REVIEWS = ("great product", "terrible service")  # requests 1 and 2, as in the scenario
TEXT = "CHAT"  # what Model B's session says, one symbol a chunk (the scenario's turns): chunks 3 and 4 must decode to A and T


@dataclass(frozen=True)
class Sent:
    """One request of the walk-through and what the server did with it."""

    request: str  # "1".."4" for the scenario's requests, "turn 1"/"turn 2" for the opening (codes)
    model: str
    sequence_id: str
    start: bool
    end: bool
    outcome: str  # a code: "positive"/"negative" (Model A), "refused", or the letter Model B decoded
    instance: int | None = None
    slot: int | None = None
    server_says: str = ""  # the server's own error text when refused
    review: str = ""  # Model A's review text, verbatim


def run(server: LabServer, open_first: bool = True) -> pd.DataFrame:
    """Send the scenario's requests (and, with open_first, the sequence's first two turns)."""
    corrid = unique_ids(1)[0]
    with run_queue.hold(server, MODEL_A), run_queue.hold(server, MODEL_B):  # nobody else's batch in between
        rows = _model_a(server)
        client = server.client()
        audio = utterance(to_symbols(TEXT), np.random.default_rng(77))
        sent = range(4) if open_first else range(2, 4)
        for k in sent:
            label = f"turn {k + 1}" if k < 2 else str(k + 1)
            rows.append(_send_chunk(client, corrid, audio[k : k + 1], k, label))
    return pd.DataFrame([asdict(row) for row in rows])


def _model_a(server: LabServer) -> list[Sent]:
    """Requests 1 and 2 at the same moment, each on its own client (tritonclient HTTP is not thread-safe)."""

    def one(text: str) -> int:
        _, labels = sentiment.classify(server.client(), MODEL_A, text)
        return int(labels[0])

    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="model-a") as pool:
        labels = list(pool.map(one, REVIEWS))
    return [
        Sent(str(n), MODEL_A, "", False, False, "positive" if label else "negative", review=text)
        for n, (text, label) in enumerate(zip(REVIEWS, labels, strict=True), start=1)
    ]


def _send_chunk(client: http.InferenceServerClient, corrid: int, chunk: npt.NDArray[np.float32], k: int, label: str) -> Sent:
    start, end = k == 0, k == len(TEXT) - 1
    inputs = [http.InferInput("AUDIO", [1, chunk.shape[1]], "FP32"), http.InferInput("SESSION", [1, 1], "UINT64")]
    inputs[0].set_data_from_numpy(chunk.astype(np.float32))
    inputs[1].set_data_from_numpy(np.array([[corrid]], dtype=np.uint64))
    try:
        result = client.infer(MODEL_B, inputs, sequence_id=corrid, sequence_start=start, sequence_end=end)
    except InferenceServerException as err:
        return Sent(label, MODEL_B, str(corrid), start, end, "refused", server_says=err.message())
    symbol = int(result.as_numpy("SYMBOL").reshape(-1)[0])
    return Sent(label, MODEL_B, str(corrid), start, end, to_text([symbol]),
                int(result.as_numpy("INSTANCE").reshape(-1)[0]), int(result.as_numpy("SLOT").reshape(-1)[0]))
