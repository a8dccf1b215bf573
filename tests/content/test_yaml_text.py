"""Every YAML file the course reads parses to the same values with the parser the app uses
(libyaml's, where PyYAML has it) as with PyYAML's reference SafeLoader, and a broken file is a
yaml.YAMLError either way: the faster parser changes no lesson, glossary entry or quiz item."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from app.content import yaml_text
from app.content.frontmatter import FENCE
from app.lab.paths import LESSONS_DIR, QUIZ_DIR

FILES = sorted([*QUIZ_DIR.glob("*.yaml"), *LESSONS_DIR.rglob("*.yaml")])
LESSONS = sorted(LESSONS_DIR.rglob("[0-9][0-9]-*.md"))


def _front_matter(path: Path) -> str:
    lines = path.read_text(encoding="utf-8").splitlines()
    end = lines.index(FENCE, 1)
    return "\n".join(lines[1:end])


@pytest.mark.parametrize("path", FILES + LESSONS, ids=lambda p: str(p.relative_to(p.parents[1])))
def test_every_course_file_reads_as_the_reference_parser_reads_it(path):
    text = _front_matter(path) if path.suffix == ".md" else path.read_text(encoding="utf-8")
    assert yaml_text.parse(text) == yaml.load(text, Loader=yaml.SafeLoader)


@pytest.mark.parametrize("text", ["items: [unclosed", "a: b: c", "- x\n y: [", "key: !!python/object:os.system x"])
def test_broken_or_unsafe_yaml_is_a_yaml_error(text):
    with pytest.raises(yaml.YAMLError):
        yaml_text.parse(text)
