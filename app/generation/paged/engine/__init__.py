"""The paged engine's run engine: settings, workload, driver and analysis, free of Streamlit and
of words. Callers import from here, by name, and `analysis` as a namespace."""
from app.generation.paged.engine import analysis
from app.generation.paged.engine.analysis import PagedFigures
from app.generation.paged.engine.driver import GAUGES, PAGED, PagedRun, alone, gauges, run, settle
from app.generation.paged.engine.settings import (
    MODEL,
    RANGES,
    SCHEDULERS,
    TOY,
    PagedSettings,
    deployment_for,
    ensure,
    is_paged_name,
    kv_bytes_per_token,
    settings_of,
    setup_name,
)
from app.generation.paged.engine.workload import PagedWorkload

__all__ = [
    "GAUGES",
    "MODEL",
    "PAGED",
    "RANGES",
    "SCHEDULERS",
    "TOY",
    "PagedFigures",
    "PagedRun",
    "PagedSettings",
    "PagedWorkload",
    "alone",
    "analysis",
    "deployment_for",
    "ensure",
    "gauges",
    "is_paged_name",
    "kv_bytes_per_token",
    "run",
    "settings_of",
    "settle",
    "setup_name",
]
