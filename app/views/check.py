"""Check a deployment (issue 17): the rollout guide's verification on a model of the learner's own.

Choose a server this page may check (app/ui/check_servers.py), a model from its repository index
and the options (app/ui/check_controls.py); Run calls the same engine as `batching-lab check`
(app/lab/checker/engine.run_check), in this script thread, so its progress callback moves the bar
directly; the engine holds the run queue's lease for the model while it runs, loads nothing but
its own one-instance copy and unloads that before it returns. The result is drawn by
app/ui/check_report.py. Whatever stops a check is said once, in the learner's language.
"""
from __future__ import annotations

import streamlit as st
from tritonclient.utils import InferenceServerException

from app.lab.checker import engine
from app.lab.checker import target as targets
from app.lab.deployment.deployments import DeploymentError
from app.lab.problems import LabError, Problem
from app.lab.server.connection import LabServer
from app.lab.server.errors import ServerError, UnreachableError
from app.text import check_page as words
from app.text.problems import error as problem_text
from app.ui import check_controls, check_report, check_servers, session
from app.ui.language import _, t


def failure(err: BaseException, data_name: str | None = None, url: str = "") -> str:
    """One message for whatever stopped a check: the engine's problem in words (with what to do on
    this page where it names a command-line option), an unreachable server, or Triton's own refusal."""
    _t = t()
    if isinstance(err, LabError):
        problems = [Problem(p.code, {**p.values, "source": data_name}) if data_name and p.code.startswith("check_data_") else p
                    for p in err.problems]
        text = problem_text(LabError(problems), _t)
        hint = next((words.PAGE_HINTS[p.code] for p in problems if p.code in words.PAGE_HINTS), None)
        return text + (" " + _t(hint) if hint else "")
    if isinstance(err, ServerError):
        return _t.render(words.PROBLEMS["check_server_unreachable"], url=url)
    if isinstance(err, InferenceServerException):
        return _t.render(words.TRITON_REFUSED, message=err.message())
    return _t.render(words.STOPPED, kind=type(err).__name__, error=err)


def _server_for(choice: check_servers.Choice, own: LabServer) -> LabServer:
    # The app's own server keeps its trace and log; another is reached as an external server.
    return own if choice.url == own.url else LabServer(url=choice.url)


def _facts(server: LabServer, model: check_controls.ModelChoice, own: bool):
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
            except (DeploymentError, LabError) as err:
                reason = problem_text(err, t()) if isinstance(err, LabError) else str(err)
                st.error(t().render(words.LOAD_FAILED, model=model.name, reason=reason))
                return None
            st.rerun()
        return None
    try:
        return targets.facts(targets.Target(server, model.name))
    except LabError as err:
        st.error(failure(err))
    except (ServerError, InferenceServerException) as err:
        st.error(failure(err, url=server.url))
    except OSError as err:  # the socket itself failed before Triton said anything: a server that does not answer
        st.error(failure(UnreachableError("server_unreachable", url=server.url, kind=type(err).__name__), url=server.url))
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
            result = engine.run_check(targets.on_server(server, model), chosen.options, progress=progress, on_wait=waiting)
    except Exception as err:  # one message, never a traceback; the engine has unloaded its copy and let the lease go
        st.error(failure(err, chosen.data_name, url=server.url))
        return
    st.session_state[check_report.RESULT_KEY] = check_report.CheckRun(result, chosen.data_name)


def render() -> None:
    st.title(_("Check a deployment"))
    st.markdown(_(words.INTRO))
    handle = session.lab()
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
        except Exception:  # refused, timed out, not a Triton: the same for a learner
            st.error(t().render(words.PROBLEMS["check_server_unreachable"], url=server.url))
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
