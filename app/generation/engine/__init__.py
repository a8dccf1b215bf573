"""The generation engine: workloads, the token rule, the driver, the analysis, the deployments.

Free of Streamlit and of words (codes and numbers only); callers outside this package import from
here, by name, and the modules `deployments` and `analysis` as namespaces.
"""
from app.generation.engine import analysis, deployments
from app.generation.engine.analysis import RunFigures, mixed_passes, passes, report_json, requests_table, run_figures, timeline
from app.generation.engine.deployments import GeneratorSettings
from app.generation.engine.driver import GENERATOR, OUTPUTS, TRACE_COLUMNS, GenerationRun, RunUnfinished, StreamShape, infer_inputs, run, state_cells
from app.generation.engine.tokens import MAX_TOKENS_LIMIT, PROMPT_LENGTH, VOCAB, expected_tokens, prompt_hash
from app.generation.engine.workload import PlannedRequest, Workload

__all__ = [
    "GENERATOR",
    "MAX_TOKENS_LIMIT",
    "OUTPUTS",
    "PROMPT_LENGTH",
    "TRACE_COLUMNS",
    "VOCAB",
    "GenerationRun",
    "GeneratorSettings",
    "PlannedRequest",
    "RunFigures",
    "RunUnfinished",
    "StreamShape",
    "Workload",
    "analysis",
    "deployments",
    "expected_tokens",
    "infer_inputs",
    "mixed_passes",
    "passes",
    "prompt_hash",
    "report_json",
    "requests_table",
    "run",
    "run_figures",
    "state_cells",
    "timeline",
]
