"""A stateless sentiment classifier for Triton's Python backend, used by the throughput lessons.

Each request is one review: up to 16 word ids (0 = padding) made by tokenizer.py beside
this file, which the lab's clients load too. A fixed-seed network scores it; nothing carries
over between requests, so any batching, order or instance gives the same answer. The encoder
is sized so that one batched pass over 32 reviews costs a few times, not 32 times, a pass
over one, as on a GPU: its weights do not fit in cache, so even one row pays for reading
all of them.
"""
from __future__ import annotations

import json

import torch
import torch.utils.dlpack as dlpack
import triton_python_backend_utils as pb_utils
from tokenizer import VOCAB, word_id

WIDTH = 2048
LAYERS = 6


POSITIVE = ["good", "great", "excellent", "love", "lovely", "happy", "fast", "friendly", "perfect", "recommend", "delightful", "superb"]
NEGATIVE = ["bad", "terrible", "awful", "hate", "slow", "rude", "broken", "poor", "refund", "disappointing", "worst", "noisy"]


def instance_device(args: dict) -> torch.device:
    """Where this instance computes: the GPU Triton gave it (KIND_GPU), else the CPU."""
    if args.get("model_instance_kind") == "GPU" and torch.cuda.is_available():
        return torch.device(f"cuda:{int(args.get('model_instance_device_id', 0))}")
    return torch.device("cpu")


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        del config  # no parameters: the classifier is the same in every deployment
        self.device = instance_device(args)
        gen = torch.Generator().manual_seed(0)
        polarity = torch.zeros(VOCAB)
        polarity[[word_id(w) for w in POSITIVE]] = 1.0
        polarity[[word_id(w) for w in NEGATIVE]] = -1.0
        self.polarity = polarity.to(self.device)
        self.embed = (torch.randn(VOCAB, WIDTH, generator=gen) / WIDTH**0.5).to(self.device)
        self.layers = [
            (torch.randn(WIDTH, WIDTH, generator=gen) / WIDTH**0.5).to(self.device) for _ in range(LAYERS)
        ]
        self.readout = (torch.randn(WIDTH, generator=gen) / WIDTH**0.5).to(self.device)

    @torch.inference_mode()
    def execute(self, requests):
        tokens = [dlpack.from_dlpack(pb_utils.get_input_tensor_by_name(r, "TOKENS").to_dlpack()) for r in requests]
        sizes = [t.shape[0] for t in tokens]
        ids = torch.cat(tokens, dim=0).to(self.device, torch.long).clamp(0, VOCAB - 1)
        mask = (ids > 0).float()
        lexical = (self.polarity[ids] * mask).sum(dim=1)
        hidden = (self.embed[ids] * mask.unsqueeze(-1)).sum(dim=1)
        for weight in self.layers:
            hidden = torch.tanh(hidden @ weight)
        # The encoder adds a small, bounded nuance; the lexicon decides the sign.
        logit = lexical + 0.1 * torch.tanh(hidden @ self.readout)
        score = torch.sigmoid(logit).reshape(-1, 1).cpu()
        label = (score > 0.5).to(torch.int32)
        responses, row = [], 0
        for size in sizes:
            out_score = score[row : row + size].contiguous()
            out_label = label[row : row + size].contiguous()
            row += size
            responses.append(
                pb_utils.InferenceResponse(
                    output_tensors=[
                        pb_utils.Tensor.from_dlpack("SCORE", dlpack.to_dlpack(out_score)),
                        pb_utils.Tensor.from_dlpack("LABEL", dlpack.to_dlpack(out_label)),
                    ]
                )
            )
        return responses
