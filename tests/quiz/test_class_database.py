"""The class database itself: which one the app uses, a file of the first schema migrated with
nothing lost, and every way it can fail said as a code with words in every language. Real
engines only: an SQLite file, the suite's PostgreSQL, and a PostgreSQL of this test's own that is
stopped and started under a store."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import sqlalchemy as sa

from app.i18n import languages, words
from app.lab import database
from app.lab.database import DatabaseError, migrate
from app.lab.server import free_ports
from app.quiz.store import ProgressStore
from app.quiz.votes import VoteStore
from app.text import problems
from tests.postgres import PostgresServer

LEGACY = Path(__file__).parent / "fixtures" / "progress-schema-1.sqlite3"


def _rows(url: str, sql: str) -> list[tuple]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(sa.text(sql))]
    finally:
        engine.dispose()


def test_a_file_of_the_first_schema_migrates_with_nothing_lost(tmp_path):
    path = tmp_path / "progress.sqlite3"
    shutil.copy(LEGACY, path)
    url = database.sqlite_url(path)
    before = {table: _rows(url, f"SELECT * FROM {table}") for table in
              ("learners", "attempts", "answers", "predictions", "demo_polls", "demo_votes")}
    assert _rows(url, "PRAGMA user_version") == [(1,)] and len(before["answers"]) == 9

    store = ProgressStore(path)
    assert store.learners() == ["ada", "grace", "linus"]
    after = {table: _rows(url, f"SELECT * FROM {table}") for table in before}
    for table, rows in before.items():
        # Every row as it was; answers gain only their order (seq, from the old rowid).
        kept = [row[:len(rows[0])] for row in after[table]] if rows else after[table]
        assert kept == rows, table
    assert [row[-1] for row in after["answers"]] == list(range(1, 10))
    assert _rows(url, "SELECT version_num FROM alembic_version") == [(migrate.head(),)]
    # What the pages read from it is what the old code wrote.
    ada = store.attempts("ada")
    assert [a.seed for a in ada] == [3, 99] and ada[1].timed and ada[1].time_limit_s == 600
    assert [a.answer for a in store.answers(ada[0].id)] == [0, 1, 0]
    assert [p.exercise for p in store.predictions("grace")] == ["exercise:forgot_ready"]
    [code] = [row[0] for row in before["demo_polls"]]
    assert VoteStore(path).tally(code) == {"a": 1, "b": 1} and VoteStore(path).poll(code).right == ("a",)
    # And it goes on: a new attempt's answers come after the old ones.
    attempt = store.start_attempt("linus", seed=5)
    assert attempt == max(a.id for a in ada) + 1


def test_the_url_comes_from_the_environment_then_the_secrets_then_the_data_folder(tmp_path, monkeypatch):
    monkeypatch.delenv(database.URL_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRITON_LAB_DATA", str(tmp_path / "data"))
    assert database.class_database_url() == database.sqlite_url(tmp_path / "data" / "progress.sqlite3")
    secrets = tmp_path / ".streamlit" / "secrets.toml"
    secrets.parent.mkdir()
    secrets.write_text('[connections.class_store]\ndialect = "postgresql"\ndriver = "psycopg"\nusername = "lab"\n'
                       'password = "p w"\nhost = "db.example"\nport = 5433\ndatabase = "class"\n')
    given = sa.make_url(database.class_database_url())
    assert (given.drivername, given.username, given.password, given.host, given.port, given.database) == (
        "postgresql+psycopg", "lab", "p w", "db.example", 5433, "class")
    secrets.write_text('[connections.class_store]\nurl = "postgresql+psycopg://a:b@c/d"\n')
    assert database.class_database_url() == "postgresql+psycopg://a:b@c/d"
    monkeypatch.setenv(database.URL_ENV, "sqlite:////tmp/elsewhere.sqlite3")
    assert database.class_database_url() == "sqlite:////tmp/elsewhere.sqlite3"
    assert not database.is_shared(database.class_database_url())
    assert database.is_shared("postgresql+psycopg://a:b@c/d")


def _failure(url: str) -> DatabaseError:
    with pytest.raises(DatabaseError) as caught:
        ProgressStore(url).learners()
    return caught.value


def test_each_way_the_database_fails_has_its_code_and_no_password_shown(postgres_server, monkeypatch):
    monkeypatch.setenv(database.URL_ENV, "not a url at all")
    with pytest.raises(DatabaseError) as caught:
        ProgressStore().learners()  # the class database, as the pages open it
    assert caught.value.code == "database_url_invalid"
    monkeypatch.delenv(database.URL_ENV)
    assert _failure("nosuchdialect://x/y").code == "database_driver_missing"
    port = free_ports(1)[0]  # nothing listens there
    unreachable = _failure(f"postgresql+psycopg://lab:secret@127.0.0.1:{port}/lab")
    assert unreachable.code == "database_unreachable" and "secret" not in unreachable.values["url"]
    wrong = postgres_server.url("postgres").replace(postgres_server.password, "not-the-password")
    refused = _failure(wrong)
    assert refused.code == "database_login_refused" and "not-the-password" not in str(refused)
    assert _failure(postgres_server.url("no_such_database")).code == "database_missing"


@pytest.mark.parametrize("code", sorted(problems.DATABASE_PROBLEMS))
def test_every_database_problem_has_words_in_every_language(code):
    values = {"url": "postgresql+psycopg://lab:***@db:5432/lab", "kind": "ProgrammingError"}
    for lang in languages():
        text = problems.error(DatabaseError(code, **values), words(lang))
        assert "postgresql+psycopg://lab:***@db:5432/lab" in text and code not in text


@pytest.mark.server  # a PostgreSQL of its own, restarted
def test_acknowledged_writes_survive_a_database_restart_and_the_store_recovers(tmp_path):
    with PostgresServer() as server:
        url = server.create_database("restart")
        votes = VoteStore(url)
        code = votes.open_demo("scheduler")
        for n in range(30):
            votes.vote(code, f"learner-{n}", "intact" if n % 3 else "foreign")
        server.stop()
        with pytest.raises(DatabaseError) as caught:
            votes.vote(code, "late", "intact")  # while it is down: said, not acknowledged
        assert caught.value.code == "database_unreachable"
        server.start()
        votes.vote(code, "late", "intact")  # the pool replaces its dead connections by itself
        assert votes.tally(code) == {"intact": 21, "foreign": 10}
    database.forget(url)
