"""app/text/errors.explain: every exception the app can meet, in every language, with the next step
where one is designed; a bug is raised again. Each exception is produced as the app meets it (a
socket to a free port, a name that does not resolve, a missing file, a bad environment setting,
the class database on a free port) where that is quick; Triton's own refusal needs the session's
server (the last test)."""
from __future__ import annotations

from pathlib import Path

import pytest
from tritonclient.grpc import InferenceServerClient as GrpcClient
from tritonclient.http import InferenceServerClient as HttpClient
from tritonclient.utils import InferenceServerException

from app.checker import words as check_words
from app.checker.engine.inputs import parse_shape
from app.checker.words import page as check_page
from app.cli import main
from app.i18n import SOURCE_LANGUAGE, languages, words
from app.lab import env_settings
from app.lab.database import DatabaseError, forget, reading
from app.lab.deployment.deployments import DeploymentError
from app.lab.problems import LabError, Problem
from app.lab.server.errors import StartupError, UnreachableError
from app.lab.server.ports import free_ports
from app.text import errors as errors_text
from app.text.errors import EXPLAINED, explain
from app.ui import shared_server
from tests.i18n.text_checks import reads_in
from tests.server_calls import ask

ZOO_CONFIG = Path(__file__).parent / "checker" / "zoo" / "zoo_stateless" / "config.pbtxt"


def raised(action) -> BaseException:
    try:
        action()
    except BaseException as err:  # what the app would catch, whatever it is
        return err
    raise AssertionError("expected an exception")


def dead_address() -> str:
    return f"127.0.0.1:{free_ports(1)[0]}"


def database_away() -> DatabaseError:
    url = f"postgresql+psycopg://lab:secret@{dead_address()}/lab"
    try:
        err = raised(lambda: reading(url).__enter__())
    finally:
        forget(url)
    assert isinstance(err, DatabaseError)
    return err


def bad_setting(monkeypatch) -> ValueError:
    monkeypatch.setenv("TRITON_LAB_TEST_SETTING", "many")
    err = raised(lambda: env_settings.count("TRITON_LAB_TEST_SETTING", "runs"))
    assert type(err) is ValueError
    return err


def cases(monkeypatch) -> dict[str, tuple[BaseException, tuple[str, ...], bool]]:
    """name -> (the exception, the codes explain must name, whether a next step is designed)."""
    return {
        "lab problems": (LabError([Problem("sessions_range", {"low": 1, "high": 64, "value": 0}), Problem("empty_text")]),
                         ("sessions_range", "empty_text"), False),
        "deployment refused": (DeploymentError("config_backend"), ("config_backend",), False),
        "server start-up": (StartupError("server_port_in_use", port=8000), ("server_port_in_use",), False),
        "server unreachable": (UnreachableError("server_unreachable", url="127.0.0.1:1", kind="ConnectionRefusedError"),
                               ("server_unreachable",), False),
        "database away": (database_away(), ("database_unreachable",), True),
        "HTTP to a dead port": (raised(lambda: HttpClient(dead_address()).is_server_live()), (errors_text.SERVER_SILENT,), True),
        "gRPC to a dead port": (raised(lambda: GrpcClient(dead_address()).is_server_live()), (errors_text.SERVER_SILENT,), True),
        "a name that does not resolve": (raised(lambda: HttpClient("no-such-host.invalid:8000").is_server_live()),
                                         (errors_text.SERVER_SILENT,), True),
        "a missing file": (raised(lambda: Path("/no/such/folder/report.json").write_text("{}")), (errors_text.PATH_UNUSABLE,), False),
        "a bad environment setting": (bad_setting(monkeypatch), (errors_text.VALUE_UNUSABLE,), False),
    }


def test_every_exception_the_app_meets_is_explained_in_every_language_with_its_next_step(monkeypatch):
    for name, (err, codes, stepped) in cases(monkeypatch).items():
        assert isinstance(err, EXPLAINED), name
        english = explain(err, words(SOURCE_LANGUAGE))
        assert english.codes == codes, name
        assert english.message.strip() and (english.next_step is not None) == stepped, (name, english)
        for lang in languages():
            said = explain(err, words(lang))
            assert said.codes == codes and reads_in(lang, said.message, english.message), (name, lang, said)
            if stepped:
                assert said.next_step and reads_in(lang, said.next_step, english.next_step or ""), (name, lang, said)
                assert str(said) == f"{said.message} {said.next_step}"
            else:
                assert said.next_step is None and str(said) == said.message


def test_what_the_learner_reads_names_the_reason():
    address = dead_address()
    refused = explain(raised(lambda: HttpClient(address).is_server_live()), words("en"))
    assert refused.message == "the server did not answer (ConnectionRefusedError: `[Errno 111] Connection refused`)"
    assert refused.next_step == "Check that the server is running and that its address is right."
    missing = explain(raised(lambda: Path("/no/such/folder/report.json").write_text("{}")), words("en"))
    assert missing.message == "/no/such/folder/report.json cannot be used (FileNotFoundError): `No such file or directory`"
    both = explain(LabError([Problem("no_sessions"), Problem("negative_think")]), words("en"))
    assert both.message == "a run needs at least one session; think time and jitter cannot be negative"


def test_with_the_callers_address_a_server_that_does_not_answer_is_named_by_it():
    address = dead_address()
    for err in (raised(lambda: HttpClient(address).is_server_live()), raised(lambda: GrpcClient(address).is_server_live())):
        said = explain(err, words("en"), url=address)
        assert said.codes == ("server_unreachable",) and said.next_step is None
        assert said.message.startswith(f"cannot reach Triton at {address} ({type(err).__name__}): start that server")


def test_a_callers_own_wording_and_next_steps_win():
    """The check page words an unreachable server for itself and adds what to do on the page."""
    address = dead_address()
    dead = raised(lambda: HttpClient(address).is_server_live())
    wording = {"server_unreachable": check_page.PROBLEMS["check_server_unreachable"]}
    for lang in languages():
        _ = words(lang)
        assert explain(dead, _, url=address, wording=wording).message == _.render(wording["server_unreachable"], url=address)
        shape = raised(lambda: parse_shape("AUDIO"))
        assert isinstance(shape, LabError) and shape.code == "check_shape_syntax"
        said = explain(shape, _, wording=check_words.PROBLEMS, next_steps=check_page.PAGE_HINTS)
        assert said.next_step == _(check_page.PAGE_HINTS["check_shape_syntax"])
        page = explain(raised(lambda: HttpClient(address).is_server_live()), _, next_steps=shared_server.NEXT_STEPS)
        assert page.next_step == _(shared_server.NEXT_STEPS[errors_text.SERVER_SILENT])


@pytest.mark.parametrize("bug", [KeyError("model"), TypeError("unsupported operand"), AttributeError("no attribute 'x'"),
                                 AssertionError("unreachable"), RuntimeError("no free poll code")])
def test_a_bug_is_raised_again_not_hidden_behind_words(bug):
    assert not isinstance(bug, EXPLAINED)
    with pytest.raises(type(bug)) as again:
        explain(bug, words("en"))
    assert again.value is bug


def test_the_cli_says_a_file_it_cannot_write_in_one_line_and_exits_2(capsys):
    """The offline review needs no server; its --json into a missing folder is the system's refusal."""
    target = "/no/such/folder/review.json"
    for lang in languages():
        code = main(["check", "--config", str(ZOO_CONFIG), "--json", target, "--lang", lang])
        err = raised(lambda: Path(target).write_text(""))
        assert code == 2
        assert capsys.readouterr().err == f"batching-lab: {explain(err, words(lang)).message}\n", lang


def test_tritons_own_refusal_is_quoted_in_every_language(lab_server):
    err = raised(lambda: ask(lab_server, "get_model_config", "no_such_model"))
    assert isinstance(err, InferenceServerException) and err.message()
    english = explain(err, words(SOURCE_LANGUAGE))
    assert english.codes == (errors_text.TRITON_REFUSED,) and english.next_step is None
    assert english.message == f"Triton refused the request: `{err.message()}`"
    for lang in languages():
        said = explain(err, words(lang))
        assert f"`{err.message()}`" in said.message and reads_in(lang, said.message, english.message), lang


def test_a_lab_exception_is_caught_by_its_root_and_worded_as_its_builtin_base_says():
    """A refused content file (a ValueError under the root) reads as its text, quoted; a lab
    exception with no words at this edge (a closed poll, caught by name on the quiz pages) is
    raised again."""
    from app.content.lessons import ContentError
    from app.lab.errors import BatchingLabError
    from app.quiz.votes import PollClosed

    content = ContentError("lessons/01.md: field 'title': missing")
    assert isinstance(content, BatchingLabError) and isinstance(content, EXPLAINED)
    said = explain(content, words("en"))
    assert said.codes == (errors_text.VALUE_UNUSABLE,) and "lessons/01.md: field 'title': missing" in said.message
    closed = PollClosed("ABCD")
    with pytest.raises(PollClosed) as again:
        explain(closed, words("en"))
    assert again.value is closed
