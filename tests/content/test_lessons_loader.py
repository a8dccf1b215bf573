"""Lessons loader: front matter, anchors, links, and precise errors for bad files."""
from __future__ import annotations

from pathlib import Path

import pytest

from app.content.lessons import ContentError, LessonLinkError, body_anchors, heading_anchor, load_lessons, resolve_link

FIXTURE_LESSONS = Path(__file__).resolve().parents[1] / "quiz" / "fixtures" / "lessons"

GOOD = """---
id: {id}
title: A lesson
summary: One line.
live: the_mistake
next: []
---
## First heading
text
"""


@pytest.fixture
def lessons():
    return load_lessons(FIXTURE_LESSONS)


def test_loads_fixture_lessons_in_file_name_order(lessons):
    assert [lesson.id for lesson in lessons] == ["dynamic-batching", "sequence-batching"]
    first = lessons[0]
    assert first.title == "Dynamic batching"
    assert first.summary == "How Triton groups requests into batches."
    assert first.live == "dynamic_batching_demo" and lessons[1].live is None
    assert first.next == ("sequence-batching",)
    assert first.path == FIXTURE_LESSONS / "01-dynamic-batching.md"
    assert first.body.startswith("Intro text.")
    assert "---" not in first.body.splitlines()[0]


def test_checks_are_parsed(lessons):
    [check] = lessons[0].self_checks
    assert check.options == ("How long a request may wait for company", "The batch size")
    assert check.answer == 0
    assert check.explain == "It is a wait budget, not a size."
    assert check.source == "", "source is optional: a check without one loads with an empty source"
    assert lessons[1].self_checks == ()


def test_check_source_is_read_and_must_be_text(tmp_path):
    check = "check:\n  - question: Q\n    options: [x, y]\n    answer: 0\n    explain: E\n    source: {source}\n"
    good = GOOD.format(id="a").replace("next: []", "next: []\n" + check.format(source="' seed: guide '"))
    [lesson] = load_lessons(_lesson_dir(tmp_path, {"01-a.md": good}))
    assert lesson.self_checks[0].source == "seed: guide"
    bad = GOOD.format(id="a").replace("next: []", "next: []\n" + check.format(source="[a, b]"))
    with pytest.raises(ContentError, match=r"field 'check\[0\]\.source': must be a string"):
        load_lessons(_lesson_dir(tmp_path, {"01-a.md": bad}))


def test_anchors_skip_code_fences(lessons):
    assert lessons[0].anchors == ("why-batch-at-all", "max-queue-delay-microseconds", "preferred-batch-sizes")


@pytest.mark.parametrize("text,anchor", [
    ("Why batch at all?", "why-batch-at-all"),
    ("`max_queue_delay_microseconds`", "max-queue-delay-microseconds"),
    ("  Direct -- vs -- Oldest!  ", "direct-vs-oldest"),
    ("Step 2: READY & END", "step-2-ready-end"),
    ("???", ""),
])
def test_heading_anchor(text, anchor):
    assert heading_anchor(text) == anchor


def test_body_anchors_handles_tilde_fences_and_closing_hashes():
    body = "# Title #\n~~~\n## not a heading\n~~~\n## Real one ##\n#hashtag is not a heading\n"
    assert body_anchors(body) == ("title", "real-one")


def test_resolve_link(lessons):
    lesson, anchor = resolve_link("sequence-batching#control-tensors", lessons)
    assert (lesson.id, anchor) == ("sequence-batching", "control-tensors")
    assert resolve_link("sequence-batching", lessons)[1] == ""


@pytest.mark.parametrize("link,message", [
    ("nope#control-tensors", "no lesson with id 'nope' (known: dynamic-batching, sequence-batching)"),
    ("sequence-batching#nope", "has no heading with anchor 'nope' (anchors: control-tensors, direct-vs-oldest)"),
    ("", "non-empty"),
])
def test_resolve_link_errors_are_specific(lessons, link, message):
    with pytest.raises(LessonLinkError) as info:
        resolve_link(link, lessons)
    assert message in str(info.value)


def _lesson_dir(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize("text,field,words", [
    ("## no front matter\n", "front matter", "must start with"),
    ("---\nid: a\ntitle: T\n## never closed\n", "front matter", "no closing"),
    ("---\nid: [a\n---\n", "front matter", "not valid YAML"),
    ("---\n- a list\n---\n", "front matter", "mapping"),
    ("---\ntitle: T\n---\n", "id", "non-empty string"),
    ("---\nid: Bad_Id\ntitle: T\n---\n", "id", "lowercase"),
    ("---\nid: a\n---\n", "title", "non-empty string"),
    ("---\nid: a\ntitle: T\nlive: true\n---\n", "live", "must name a live exercise"),
    ("---\nid: a\ntitle: T\nlive: Batch Demo\n---\n", "live", "must name a live exercise"),
    ("---\nid: a\ntitle: T\nnext: {x: 1}\n---\n", "next", "list of lesson ids"),
    ("---\nid: a\ntitle: T\nsumary: typo\n---\n", "sumary", "unknown key"),
    ("---\nid: a\ntitle: T\ncheck: yes\n---\n", "check", "must be a list"),
    ("---\nid: a\ntitle: T\ncheck:\n  - question: Q\n    options: [x, y]\n    answer: 2\n    explain: E\n---\n",
     "check[0].answer", "0..1"),
    ("---\nid: a\ntitle: T\ncheck:\n  - question: Q\n    options: [x]\n    answer: 0\n    explain: E\n---\n",
     "check[0].options", "at least 2"),
    ("---\nid: a\ntitle: T\ncheck:\n  - question: Q\n    options: [x, y]\n    answer: 0\n---\n",
     "check[0].explain", "non-empty"),
])
def test_malformed_lesson_names_file_and_field(tmp_path, text, field, words):
    directory = _lesson_dir(tmp_path, {"01-bad.md": text})
    with pytest.raises(ContentError) as info:
        load_lessons(directory)
    message = str(info.value)
    assert message.startswith(f"{directory / '01-bad.md'}: field '{field}': "), message
    assert words in message


def test_duplicate_ids_across_files(tmp_path):
    directory = _lesson_dir(tmp_path, {"01-a.md": GOOD.format(id="same"), "02-b.md": GOOD.format(id="same")})
    with pytest.raises(ContentError, match=r"02-b\.md: field 'id': 'same' is also used by .*01-a\.md"):
        load_lessons(directory)


def test_next_must_name_existing_lessons(tmp_path):
    text = GOOD.format(id="a").replace("next: []", "next: [missing]")
    with pytest.raises(ContentError, match=r"01-a\.md: field 'next': unknown lesson id 'missing'"):
        load_lessons(_lesson_dir(tmp_path, {"01-a.md": text}))


def test_optional_keys_default_and_windows_line_endings(tmp_path):
    text = "\ufeff---\r\nid: a\r\ntitle: T\r\n---\r\n## Only heading\r\n"
    [lesson] = load_lessons(_lesson_dir(tmp_path, {"01-a.md": text}))
    assert (lesson.summary, lesson.live, lesson.next, lesson.self_checks) == ("", None, (), ())
    assert lesson.anchors == ("only-heading",)


def test_live_false_means_no_exercise(tmp_path):
    text = GOOD.format(id="a").replace("live: the_mistake", "live: false")
    [lesson] = load_lessons(_lesson_dir(tmp_path, {"01-a.md": text}))
    assert lesson.live is None


def test_missing_directory(tmp_path):
    with pytest.raises(ContentError, match="lessons folder not found"):
        load_lessons(tmp_path / "absent")


def test_a_translation_keeps_the_english_order_and_falls_back_lesson_by_lesson(tmp_path, monkeypatch):
    from app.content import lessons as content

    english = load_lessons(FIXTURE_LESSONS)
    monkeypatch.setattr(content, "LESSONS_DIR", tmp_path)
    assert content.load_translated("en", english).lessons == english
    # No folder for the language: every lesson in English, and said so.
    missing = content.load_translated("xx", english)
    assert missing.lessons == english and missing.fallback == tuple(lesson.id for lesson in english)
    # One lesson translated, one broken: the good one is used, the broken one is named and shown in English.
    folder = tmp_path / "xx"
    folder.mkdir()
    (folder / "02-sequence-batching.md").write_text(
        GOOD.format(id="sequence-batching").replace("title: A lesson", "title: 序列批处理"), encoding="utf-8")
    (folder / "01-dynamic-batching.md").write_text("---\nid: dynamic-batching\n---\n", encoding="utf-8")
    partial = content.load_translated("xx", english)
    assert [lesson.id for lesson in partial.lessons] == [lesson.id for lesson in english]
    assert partial.lessons[0] is english[0] and partial.lessons[1].title == "序列批处理"
    assert partial.fallback == ("dynamic-batching",)
    assert len(partial.problems) == 1 and "01-dynamic-batching.md" in partial.problems[0]
    assert "field 'title'" in partial.problems[0]


def test_the_glossary_gives_each_term_in_each_language():
    from app.content.glossary import load_glossary

    terms = {term.id: term for term in load_glossary()}
    batcher = terms["sequence-batcher"]
    assert batcher.en == "sequence batcher" and batcher.word("zh") == "序列批处理器" and batcher.word("en") == "sequence batcher"
    assert "sequence_batching" in batcher.keep
    assert all(term.words.get("zh") for term in terms.values())


def test_a_malformed_glossary_names_the_entry(tmp_path):
    from app.content.glossary import GlossaryError, load_glossary

    bad = tmp_path / "glossary.yaml"
    bad.write_text("terms:\n  - {id: a, en: one, zh: 一}\n  - {id: b, zh: 二}\n", encoding="utf-8")
    with pytest.raises(GlossaryError, match=r"terms\[1\] \(b\): field 'en'"):
        load_glossary(bad)
