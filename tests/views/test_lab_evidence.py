"""The lab's evidence after a run (AppTest, the session's real Triton): the model's state-cell
metric drawn as a chart, and the server log panel filled at verbosity 1."""
from __future__ import annotations

from tests.views.conftest import RUN_TIMEOUT_S
from tests.views.learners import link_id


def run(node):
    at = node.run(timeout=RUN_TIMEOUT_S)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]  # a failed run says why here, not as a missing chart
    return at


def test_a_run_draws_the_models_state_cells_and_counts_its_log_lines(open_page):
    at = open_page("lab.py", learner=link_id("lab-evidence"), sessions="3")
    run(at.button(key="lab.preset.the_fix").click())
    run(at.radio(key="lab.prediction").set_value("intact"))
    run(at.button(key="lab.run").click())

    chart = [c for c in at.get("plotly_chart") if c.proto.id.endswith("-lab-state-cells")]
    assert len(chart) == 1
    assert '"instance 0: cells held"' in chart[0].proto.spec and '"instance 1: cells held"' in chart[0].proto.spec

    panel = [e for e in at.expander if e.label.startswith("Server log")]
    assert len(panel) == 1 and panel[0].label.endswith("line(s) of evidence")
    # Verbosity 1 during the run: every chunk placed in its slot is logged, counted rather than quoted.
    assert any("a request went into its sequence's slot" in c.value for c in panel[0].caption)
