"""Check a deployment: the rollout guide's verification on a model of the learner's own.

Choose a server this page may check (app/checker/page/servers.py), a model from its repository index
and the options (app/checker/page/controls.py); Run calls the same engine as `batching-lab check`
(app/checker/engine/run.run_check), in this script thread, so its progress callback moves the bar
directly; the engine holds the run queue's lease for the model while it runs, loads nothing but
its own one-instance copy and unloads that before it returns. The result is drawn by
app/checker/page/report.py. Whatever stops a check is said once, in the learner's language.
"""
from __future__ import annotations

import streamlit as st

from app.checker import words as check_words
from app.checker.engine import ModelFacts, Target, run_check, target_facts, target_on_server
from app.checker.page import controls as check_controls
from app.checker.page import report as check_report
from app.checker.page import servers as check_servers
from app.checker.words import page as words
from app.lab.problems import LabError, Problem
from app.lab.server import LabServer
from app.text.errors import EXPLAINED, explain
from app.ui import shared_server
from app.ui.language import _, t

# The checker's problems, and a server that does not answer in this page's words (start it, or choose another
# server), whoever said so: the server layer's and the checker's words name TRITON_URL and --url, which this page does not read.
PAGE_WORDING = {**check_words.PROBLEMS,
                **{code: words.PROBLEMS["check_server_unreachable"] for code in ("server_unreachable", "check_server_unreachable")}}


def failure(err: BaseException, data_name: str | None = None, url: str = "") -> str:
    """One message for whatever stopped a check (app/text/errors.explain): a server that does not
    answer in this page's words, a checker problem with what to do on this page where it names a
    command-line option, the data file's problems naming the uploaded file."""
    if data_name and isinstance(err, LabError):
        err = LabError([Problem(p.code, {**p.values, "source": data_name}) if p.code.startswith("check_data_") else p
                        for p in err.problems])
    return str(explain(err, t(), url=url or None, wording=PAGE_WORDING, next_steps=words.PAGE_HINTS))


def _server_for(choice: check_servers.Choice, own: LabServer) -> LabServer:
    # The app's own server keeps its trace and log; another is reached as an external server.
    return own if choice.url == own.url else LabServer(url=choice.url)


def _facts(server: LabServer, model: check_controls.ModelChoice, own: bool) -> ModelFacts | None:
    """The model as the server reports it, or None after saying why it cannot be checked (and, for
    one of the lab's own deployments on the app's server, offering to load it)."""
    if not model.name:
        st.info(t().render(words.PROBLEMS["check_model_name_missing"]))
        return None
    if model.state not in ("READY", None):
        state = _(words.STATES.get(model.state, model.state))
        lab_model = own and (server.model_repository / model.name / "config.pbtxt").is_file()
        st.warning(t().render(words.NOT_LOADED_HERE["own" if lab_model else "other"], model=model.name, state=state, url=server.url))
        if lab_model and st.button(_("Load it"), key="check.load"):
            try:
                with st.spinner(t().render(words.STARTING, model=model.name)):
                    server.models.ensure(model.name)
            except EXPLAINED as err:
                st.error(t().render(words.LOAD_FAILED, model=model.name, reason=str(explain(err, t(), url=server.url))))
                return None
            st.rerun()
        return None
    try:
        return target_facts(Target(server, model.name))
    except EXPLAINED as err:
        st.error(failure(err, url=server.url))
    return None


def _run(server: LabServer, own: LabServer, choice: check_servers.Choice, model: str, chosen: check_controls.Chosen) -> None:
    urls, _bad = check_servers.listed()
    if not check_servers.allowed(choice.url, own.url, urls, free_form=check_servers.refusal_here() is None):
        st.error(t().render(words.PROBLEMS["check_address_not_allowed"], url=choice.url))
        return
    st.session_state.pop(check_report.RESULT_KEY, None)  # a check that fails leaves its message alone, not the last result under it
    try:
        with check_report.progress_bar(model) as (progress, waiting):
            if server is not own:
                server.start()  # an external server: only asks whether it answers
            result = run_check(target_on_server(server, model), chosen.options, progress=progress, on_wait=waiting)
    except EXPLAINED as err:  # one message; the engine has unloaded its copy and let the lease go (a bug keeps its traceback)
        st.error(failure(err, chosen.data_name, url=server.url))
        return
    st.session_state[check_report.RESULT_KEY] = check_report.CheckRun(result, chosen.data_name)


def render() -> None:
    st.title(_("Check a deployment"))
    st.markdown(_(words.INTRO))
    handle = shared_server.lab()
    if handle is None:
        return
    own = handle[0]
    choice = check_servers.choose(own.url)
    last = st.session_state.get(check_report.RESULT_KEY)
    if choice is None or not choice.url:
        if choice is not None:
            st.info(_("Type the address of the server to check."))
    else:
        server = _server_for(choice, own)
        try:
            entries = check_controls.index(server)
        except EXPLAINED as err:  # refused, timed out, not a Triton
            st.error(failure(err, url=server.url))
            entries = None
        if entries is not None:
            model = check_controls.choose_model(entries)
            facts = _facts(server, model, own=server is own)
            chosen = check_controls.choose_options(facts)
            if chosen.problems:
                st.error(_("These options cannot be used yet; nothing was sent:") + "\n"
                         + "\n".join(f"- {failure(LabError([p]), chosen.data_name)}" for p in chosen.problems))
            ready = facts is not None and chosen.options is not None
            if st.button(_("Run the check"), key="check.run", type="primary", disabled=not ready):
                _run(server, own, choice, model.name, chosen)
                last = st.session_state.get(check_report.RESULT_KEY)
    if last is not None:
        check_report.show(last)


render()
