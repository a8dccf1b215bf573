"""The quiz page in AppTest, against the session's real Triton server for predict items."""
from __future__ import annotations

import pytest

from app.content.lessons import load_lessons
from app.quiz.bank import load_bank
from app.quiz.shuffle import item_order
from app.quiz.store import ProgressStore
from app.quiz.translation import translate
from app.views.quiz_parts.controls import REVIEW
from tests.views.conftest import RUN_TIMEOUT_S
from tests.views.learners import link_id

SEED = "4242"
BANK = load_bank()
SINGLE = next(i for i in BANK if i.type == "single")
MULTIPLE = next(i for i in BANK if i.type == "multiple" and len(i.correct_keys) >= 2)
NUMERIC = next(i for i in BANK if i.type == "numeric")
PREDICT = BANK["predict-the-fix"]  # the_fix: a shipped deployment that keeps every session intact


def run(node):
    """Run the app after an interaction; node is the AppTest or the widget just changed."""
    at = node.run(timeout=RUN_TIMEOUT_S)
    assert not at.exception, [e.value for e in at.exception]
    return at


def attempt(at) -> int:
    return at.session_state["quiz-attempt"]


def go_to(at, item):
    return run(at.selectbox(key="quiz-item").set_value(item.id))


def submit(at, item):
    return run(at.button(key=f"quiz-{attempt(at)}-{item.id}-submit").click())


def score_line(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith(("**Score", "**得分")))


def texts(at) -> str:
    return "\n".join(e.value for kind in ("markdown", "success", "warning", "error", "info", "caption")
                     for e in getattr(at, kind))


def answer_single(at, item, key):
    go_to(at, item)
    at.radio(key=f"quiz-{attempt(at)}-{item.id}").set_value(key)
    return submit(at, item)


@pytest.fixture()
def quiz(open_page):
    at = open_page("quiz.py", learner=link_id("page-ada"), seed=SEED)
    assert not at.exception and not at.error
    return at


def test_opens_on_the_seeds_first_question(quiz):
    first = item_order(BANK, int(SEED))[0]
    assert quiz.selectbox(key="quiz-item").value == first.id
    assert quiz.text_input(key="quiz-seed").value == SEED
    assert quiz.text_input(key="quiz-name").value == "page-ada"
    assert score_line(quiz).startswith(f"**Score 0 / {len(BANK)}")
    assert quiz.query_params["item"] == first.id
    # The question links to the lesson page and names the section that teaches it.
    link = quiz.get("page_link")[0].proto
    assert link.label.startswith("Read the lesson: ") and " › " in link.label
    assert link.query_string == f"section={first.lesson.split('#')[1]}"
    number = next(place for place, lesson in enumerate(load_lessons(), start=1) if lesson.id == first.lesson.split("#")[0])
    assert link.page == f"lesson_{number:02d}", "the page of the lesson that teaches it"


def test_each_type_graded_once_explained_and_reviewable(quiz, open_page):
    at = quiz
    # A second tab of the same learner, opened before the answer, still shows the form enabled.
    stale = open_page("quiz.py", learner=link_id("page-ada"), item=SINGLE.id)
    assert attempt(stale) == attempt(at)

    # single, right: every option's explanation shows.
    answer_single(at, SINGLE, next(iter(SINGLE.correct_keys)))
    assert at.success[0].value.startswith("Correct")
    for opt in SINGLE.options:
        assert opt.explain in texts(at)
    assert f"Source: `{SINGLE.source.split(';')[0].strip()}`" in texts(at)  # where the key comes from
    assert at.button(key=f"quiz-{attempt(at)}-{SINGLE.id}-submit").disabled
    assert at.radio(key=f"quiz-{attempt(at)}-{SINGLE.id}").disabled
    assert score_line(at).startswith("**Score 1 / ")

    # Submitting again (the stale tab, a double click, a rerun) keeps the first grade.
    wrong = next(o.key for o in SINGLE.options if not o.correct)
    stale.radio(key=f"quiz-{attempt(stale)}-{SINGLE.id}").set_value(wrong)
    submit(stale, SINGLE)
    assert stale.success[0].value.startswith("Correct")
    assert score_line(stale).startswith("**Score 1 / ") and "· 1 of " in score_line(stale)
    run(at)
    assert score_line(at).startswith("**Score 1 / ") and "· 1 of " in score_line(at)
    assert at.selectbox(key="quiz-item").value == SINGLE.id  # a rerun stays on the question

    # multiple: all correct boxes but one -> partial credit.
    go_to(at, MULTIPLE)
    correct = sorted(MULTIPLE.correct_keys)
    for key in correct[:-1]:
        at.checkbox(key=f"quiz-{attempt(at)}-{MULTIPLE.id}-{key}").check()
    submit(at, MULTIPLE)
    partial = (len(correct) - 1) / len(correct)
    assert at.warning[0].value.startswith("Partly right")
    for opt in MULTIPLE.options:
        assert opt.explain in texts(at)

    # numeric, wrong: the expected number and the explanation show.
    go_to(at, NUMERIC)
    at.number_input(key=f"quiz-{attempt(at)}-{NUMERIC.id}").set_value(NUMERIC.answer + 5)
    submit(at, NUMERIC)
    assert at.error[0].value.startswith("Not right")
    assert "expected: **" in texts(at) and NUMERIC.explain in texts(at)

    # predict, then verify on the real server.
    right = next(o for o in PREDICT.options if o.correct)
    answer_single(at, PREDICT, right.key)
    assert "Not run yet" in texts(at)
    run(at.button(key=f"quiz-{attempt(at)}-{PREDICT.id}-verify-run").click())
    assert "all transcripts intact" in texts(at)
    assert any("prediction held" in s.value for s in at.success)
    table = at.dataframe[-1].value
    assert list(table.columns) == ["session", "expected_text", "received_text", "verdict", "detail"]
    assert len(table) == 8 and (table["verdict"] == "intact").all()
    assert (table["expected_text"] == table["received_text"]).all()
    stored = ProgressStore().predictions(link_id("page-ada"))
    assert [(p.exercise, p.prediction, p.outcome, p.held) for p in stored] == [
        (f"quiz:{PREDICT.id}", "intact", "intact", True)]

    total = 1 + partial + 0 + 1
    assert score_line(at).startswith(f"**Score {round(total, 2):g} / {len(BANK)} · 4 of")

    # Review mode: the four answers, each with its explanations.
    run(at.radio(key="quiz-mode").set_value(REVIEW))
    assert len(at.expander) == 4
    for item in (SINGLE, MULTIPLE, PREDICT):
        for opt in item.options:
            assert opt.explain in texts(at)
    assert NUMERIC.explain in texts(at)

    # The CSV export has one row per answer.
    csv = ProgressStore().export_csv(link_id("page-ada"))
    assert len(csv.strip().splitlines()) == 1 + 4
    assert at.download_button(key="quiz-csv") is not None

    # Reset: everything deleted, a new attempt on the same seed.
    before = attempt(at)
    run(at.button(key="quiz-reset").click())
    assert attempt(at) != before and at.text_input(key="quiz-seed").value == SEED
    assert score_line(at).startswith(f"**Score 0 / {len(BANK)} · 0 of")
    assert ProgressStore().export_csv(link_id("page-ada")).strip().count("\n") == 0


# The NCP-GENL guide's eight self-check questions and its worked exam item, as lessons/COVERAGE.md
# lists them ("The NCP-GENL guide's eight self-check questions in the bank").
SELF_CHECK = ["choose-ticket-language", "exam-chatbot-forgets", "guarantee-what-changes", "exam-order-agnostic",
              "symptom-afternoon-peak", "symptom-no-error", "inst-capacity-proposal", "exam-tensorrt-scheduler",
              "exam-dynamic-intended"]


def test_the_guides_self_check_questions_are_in_the_bank_and_graded_right_through_the_page(open_page):
    at = open_page("quiz.py", learner=link_id("page-self-check"), seed=SEED)
    assert not at.exception and not at.error
    for number, item_id in enumerate(SELF_CHECK, start=1):
        item = BANK[item_id]
        assert item.type == "single", item_id
        answer_single(at, item, next(iter(item.correct_keys)))
        assert at.success[0].value.startswith("Correct"), item_id
        assert score_line(at).startswith(f"**Score {number} / {len(BANK)} · {number} of"), item_id


def test_a_submit_without_an_answer_is_refused(quiz):
    go_to(quiz, SINGLE)
    submit(quiz, SINGLE)
    assert "Choose an option first." in [w.value for w in quiz.warning]
    assert score_line(quiz).startswith("**Score 0 / ")


def test_a_question_and_a_mode_that_report_no_choice_stay_as_they_were(quiz):
    """A browser that reports no choice for a widget gets its default; the default is the choice
    held (language.choice), so such a rerun neither sends the learner to the first question nor
    leaves review mode."""
    first = quiz.selectbox(key="quiz-item").value
    item = next(i for i in (SINGLE, MULTIPLE) if i.id != first)
    go_to(quiz, item)
    run(quiz.selectbox(key="quiz-item").set_value(None))
    assert quiz.selectbox(key="quiz-item").value == item.id
    run(quiz.radio(key="quiz-mode").set_value(REVIEW))
    run(quiz.radio(key="quiz-mode").set_value(None))
    assert quiz.radio(key="quiz-mode").value == REVIEW


def test_progress_survives_an_app_restart(open_page):
    first = open_page("quiz.py", learner=link_id("page-bob"), seed=SEED)
    answer_single(first, SINGLE, next(iter(SINGLE.correct_keys)))
    # A new AppTest is a fresh process state: only the progress folder carries over.
    again = open_page("quiz.py", learner=link_id("page-bob"), item=SINGLE.id)
    assert again.session_state["quiz-attempt"] == attempt(first)
    assert score_line(again).startswith("**Score 1 / ")
    assert again.success[0].value.startswith("Correct")
    assert again.radio(key=f"quiz-{attempt(again)}-{SINGLE.id}").disabled
    assert again.radio(key=f"quiz-{attempt(again)}-{SINGLE.id}").value in SINGLE.correct_keys


def test_finish_shows_the_final_score_and_topics_to_revisit(quiz):
    answer_single(quiz, SINGLE, next(iter(SINGLE.correct_keys)))
    run(quiz.button(key="quiz-finish").click())
    assert "Your result" in [h.value for h in quiz.subheader]
    assert [m.value for m in quiz.metric][0] == f"1 / {len(BANK)}"
    assert any(w.value.startswith("Topics to revisit:") for w in quiz.warning)
    assert quiz.button(key="quiz-finish").disabled
    # Closed: a question not yet answered can no longer be submitted.
    other = next(i for i in BANK if i.type == "single" and i.id != SINGLE.id)
    go_to(quiz, other)
    assert quiz.radio(key=f"quiz-{attempt(quiz)}-{other.id}").disabled


def test_seed_controls_start_new_attempts(quiz):
    first = attempt(quiz)
    quiz.text_input(key="quiz-seed").set_value("not a seed")
    run(quiz.button(key="quiz-use-seed").click())
    assert any("whole number" in e.value for e in quiz.error) and attempt(quiz) == first
    quiz.text_input(key="quiz-seed").set_value("123")
    run(quiz.button(key="quiz-use-seed").click())
    assert attempt(quiz) != first and quiz.query_params["seed"] == "123"
    assert quiz.selectbox(key="quiz-item").value == item_order(BANK, 123)[0].id
    # Timed practice applies to the next attempt.
    run(quiz.checkbox(key="quiz-timed").check())
    quiz.number_input(key="quiz-minutes").set_value(5)
    run(quiz.button(key="quiz-new-seed").click())
    latest = ProgressStore().attempt(attempt(quiz))
    assert latest.timed and latest.time_limit_s == 300
    assert any("left of 5 min" in m.value for m in quiz.markdown)


def test_a_malformed_bank_names_file_item_and_field(open_page, tmp_path, monkeypatch):
    broken = tmp_path / "broken-bank.yaml"
    broken.write_text(
        "items:\n"
        "  - id: bad-item\n    topic: choosing\n    type: single\n    prompt: 'Which?'\n"
        "    lesson: 'dynamic-batching#why-it-is-safe-for-stateless-work'\n"
        "    options:\n"
        "      - {text: A, correct: yes-please, explain: why}\n"
        "      - {text: B, correct: true, explain: why}\n"
    )
    monkeypatch.setenv("TRITON_LAB_QUIZ_BANK", str(broken))
    at = open_page("quiz.py", learner=link_id("page-broken"))
    assert not at.exception
    message = at.error[0].value
    assert str(broken) in message and "item 'bad-item'" in message and "field 'options[0].correct'" in message
    assert not at.main.radio and not at.main.selectbox  # nothing else is drawn


def test_a_timed_attempt_that_ran_out_shows_its_result_and_takes_no_answers(open_page):
    # A limit far below a minute: the page's own control starts at one minute.
    store = ProgressStore()
    store.start_attempt(link_id("page-late"), int(SEED), timed=True, time_limit_s=0.001)
    at = open_page("quiz.py", learner=link_id("page-late"), item=SINGLE.id)
    assert "Your result" in [h.value for h in at.subheader]
    assert any("time limit of this attempt ran out" in c.value for c in at.caption)
    assert any("0:00" in m.value for m in at.markdown)
    assert at.radio(key=f"quiz-{attempt(at)}-{SINGLE.id}").disabled
    assert at.button(key=f"quiz-{attempt(at)}-{SINGLE.id}-submit").disabled


def test_renaming_keeps_this_learners_progress_and_opens_no_one_elses(quiz, open_page):
    zed = open_page("quiz.py", learner=link_id("page-zed"), seed=SEED)  # another learner, with a name
    zeds = attempt(zed)
    answer_single(quiz, SINGLE, next(iter(SINGLE.correct_keys)))
    run(quiz.text_input(key="quiz-name").set_value("page-zed"))  # zed's name, not zed's link
    # The name changed, the key in the link did not: same learner, same attempt, same score.
    assert quiz.query_params["learner"] == link_id("page-ada").replace("page-ada.", "page-zed.")
    assert ProgressStore().attempt(attempt(quiz)).learner == quiz.query_params["learner"]
    assert attempt(quiz) != zeds and score_line(quiz).startswith("**Score 1 / ")
    assert quiz.text_input(key="quiz-name").value == "page-zed"
    assert ProgressStore().attempt(zeds).learner == link_id("page-zed")  # zed's own is untouched
    run(quiz.text_input(key="quiz-name").set_value("  "))  # a blank name keeps the old one
    assert quiz.text_input(key="quiz-name").value == "page-zed" and score_line(quiz).startswith("**Score 1 / ")


def english_prose(at) -> list[str]:
    """Runs of English words on the page that are not code, config or names Triton engineers keep."""
    from tests.i18n.text_checks import english_runs

    shown = [e.value for kind in ("title", "markdown", "caption", "info", "warning", "error", "success", "subheader")
             for e in getattr(at.main, kind)]
    shown += [w.label for kind in ("button", "radio", "selectbox", "text_input", "number_input", "checkbox")
              for w in getattr(at.main, kind)]
    shown += [option for w in at.main.radio for option in w.options]
    return [run for text in shown for run in english_runs(text)]


def zh_bank():
    """The bank in Chinese (quiz/bank.zh.yaml): it ships with the app, so a broken one fails here."""
    return translate(BANK, "zh")


def test_the_quiz_in_chinese_opens_with_translated_words(open_page):
    at = open_page("quiz.py", learner=link_id("page-zh"), seed=SEED, lang="zh")
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.title[0].value == "测验"
    assert at.button(key="quiz-finish").label == "结束并查看得分"
    assert score_line(at).startswith(f"**得分 0 / {len(BANK)}")
    first = item_order(BANK, int(SEED))[0]
    assert at.query_params["item"] == first.id and at.query_params["lang"] == "zh"
    assert any(m.value == zh_bank()[first.id].prompt for m in at.markdown)
    assert not english_prose(at)


def test_switching_language_keeps_the_attempt_its_answers_and_the_question(quiz):
    at = quiz
    answer_single(at, SINGLE, next(iter(SINGLE.correct_keys)))
    go_to(at, MULTIPLE)
    before = attempt(at)
    run(at.sidebar.selectbox(key="language").set_value("zh"))
    assert at.query_params["lang"] == "zh" and at.query_params["learner"] == link_id("page-ada")
    assert attempt(at) == before
    assert at.selectbox(key="quiz-item").value == MULTIPLE.id  # the same question, not Q1
    assert score_line(at).startswith(f"**得分 1 / {len(BANK)} · 已作答 1 / {len(BANK)}")
    go_to(at, SINGLE)
    radio = at.radio(key=f"quiz-{attempt(at)}-{SINGLE.id}")
    assert radio.disabled and radio.value in SINGLE.correct_keys  # the answer is kept as its option key
    assert at.success[0].value.startswith("正确")
    # and back: nothing was lost either way
    run(at.sidebar.selectbox(key="language").set_value("en"))
    assert attempt(at) == before and at.selectbox(key="quiz-item").value == SINGLE.id
    assert score_line(at).startswith("**Score 1 / ")


def test_a_quiz_graded_in_chinese_scores_the_same_as_in_english(open_page):
    zh = zh_bank()
    right = next(iter(SINGLE.correct_keys))
    wrong = next(o.key for o in MULTIPLE.options if not o.correct)
    picks = sorted(MULTIPLE.correct_keys)[:1] + [wrong]
    scores = {}
    for lang, learner in (("en", "page-en-grader"), ("zh", "page-zh-grader")):
        at = open_page("quiz.py", learner=link_id(learner), seed=SEED, lang=lang)
        answer_single(at, SINGLE, right)
        go_to(at, MULTIPLE)
        for key in picks:
            at.checkbox(key=f"quiz-{attempt(at)}-{MULTIPLE.id}-{key}").check()
        submit(at, MULTIPLE)
        go_to(at, NUMERIC)
        at.number_input(key=f"quiz-{attempt(at)}-{NUMERIC.id}").set_value(NUMERIC.answer)
        submit(at, NUMERIC)
        store = ProgressStore()
        scores[lang] = store.summary(attempt(at), BANK)
        shown = zh if lang == "zh" else BANK
        assert [o.key for o in shown[MULTIPLE.id].options] == [o.key for o in MULTIPLE.options]
    en, zh_score = scores["en"], scores["zh"]
    assert (zh_score.score, zh_score.answered, zh_score.revisit) == (en.score, en.answered, en.revisit)
    assert en.answered == 3 and 0 < en.score < 3
