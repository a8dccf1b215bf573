"""Live element of lesson 7: the verification a team runs before rolling a scheduler out."""
from __future__ import annotations

import streamlit as st

from app.lab import rollout as checks
from app.ui.live.common import explained_failures, store, stored
from app.ui.progress import run_with_progress


def rollout_checks(server, deployer) -> None:
    st.markdown(
        "Pick a deployment and run the checks. Try `asr_dynamic` too: a check that cannot fail proves nothing."
    )
    target = st.selectbox("Deployment to verify", checks.TARGETS, key="rollout-target")
    if st.button("Run the checks", key="rollout-run", type="primary"):
        with explained_failures():
            results = run_with_progress(lambda p: checks.run_all(server, target, p), "Verifying")
            store("rollout_checks", (target, results))
    saved = stored("rollout_checks")
    if not saved:
        return
    target, results = saved
    st.markdown(f"Results for `{target}`:")
    for check in results:
        (st.success if check.passed else st.error)(f"{'PASS' if check.passed else 'FAIL'}: {check.name}: {check.detail}")
