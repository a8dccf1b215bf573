"""The live elements' registry (app/registry/live.py) against the lessons and the code: every name a
lesson gives in `live:`, in every language, is listed; every listed view exists and takes the lab's
server and deployer; and the elements' engines load without Streamlit or plotly. Pure: no server."""
from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

from app.content.lessons import load_lessons, load_translated
from app.i18n import languages
from app.lab.paths import REPO_ROOT
from app.registry import live as registry

ENGINES = sorted(f"app.live.{p.parent.name}.engine" for p in (REPO_ROOT / "app" / "live").glob("*/engine.py"))
# Lesson 9's element lives with the paged engine it runs (app/generation/paged/lesson); its engine too.
ENGINES += ["app.generation.paged.lesson.engine"]


@pytest.mark.parametrize("lang", languages())
def test_every_lesson_names_a_listed_live_element(lang):
    lessons = load_translated(lang, load_lessons()).lessons
    named = {lesson.id: lesson.live for lesson in lessons if lesson.live}
    assert named, f"no lesson in {lang} embeds a live element"
    missing = {lesson: live for lesson, live in named.items() if live not in registry.LIVE}
    assert not missing, f"lessons ({lang}) name live elements the registry does not list: {missing}"


def test_every_listed_element_is_embedded_by_a_lesson():
    embedded = {lesson.live for lesson in load_lessons() if lesson.live}
    assert set(registry.LIVE) == embedded


@pytest.mark.parametrize("name", sorted(registry.LIVE))
def test_every_listed_view_exists_and_takes_the_server_and_the_deployer(name):
    view = registry.view(name)
    assert callable(view), name
    assert list(inspect.signature(view).parameters) == ["server", "deployer"], name


def test_the_engines_load_without_streamlit_or_plotly():
    assert len(ENGINES) >= 3, ENGINES
    code = ("import sys\n" + "".join(f"import {m}\n" for m in ENGINES) +
            "print(sorted(m for m in ('streamlit', 'plotly') if m in sys.modules))")
    shown = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == "[]", shown.stdout + shown.stderr
