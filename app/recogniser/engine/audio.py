"""Synthesise the recogniser's audio: one 20 ms tone per symbol at 8 kHz (the wire contract)."""
from __future__ import annotations

import io
import wave

import numpy as np
import numpy.typing as npt

from app.lab.scenario.alphabet import deltas

SAMPLE_RATE = 8000
CHUNK_SAMPLES = 160
AMPLITUDE = 0.5
DEFAULT_NOISE = 0.05


def tone_hz(delta: int) -> float:
    return (4 + 2 * delta) * 50.0


def chunk(delta: int, rng: np.random.Generator, noise: float = DEFAULT_NOISE) -> npt.NDArray[np.float32]:
    t = np.arange(CHUNK_SAMPLES) / SAMPLE_RATE
    phase = rng.uniform(0, 2 * np.pi)
    wave_ = AMPLITUDE * np.sin(2 * np.pi * tone_hz(delta) * t + phase)
    samples: npt.NDArray[np.float32] = (wave_ + rng.normal(0.0, noise, CHUNK_SAMPLES)).astype(np.float32)
    return samples


def utterance(symbols: list[int], rng: np.random.Generator, noise: float = DEFAULT_NOISE) -> npt.NDArray[np.float32]:
    """[len(symbols), 160] float32: the chunks a client streams for this text."""
    return np.stack([chunk(d, rng, noise) for d in deltas(symbols)])


def to_wav(chunks: npt.NDArray[np.float32]) -> bytes:
    """16-bit PCM WAV of an utterance, for playing it in the browser."""
    pcm = np.clip(chunks.reshape(-1), -1, 1)
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(SAMPLE_RATE)
        out.writeframes((pcm * 32767).astype("<i2").tobytes())
    return buffer.getvalue()
