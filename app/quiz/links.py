"""Turn an item's 'lesson-id#anchor' link into what a person reads: lesson title and section."""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from app.content.lessons import Lesson, LessonLinkError, heading_anchor, heading_parts, resolve_link

_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")


@dataclass(frozen=True)
class LessonRef:
    lesson_id: str
    anchor: str
    title: str  # lesson title, or the lesson id when the lesson is unknown
    section: str  # heading text, or the anchor when the heading is unknown

    @property
    def label(self) -> str:
        return f"{self.title} › {self.section}" if self.section else self.title


def section_title(lesson: Lesson, anchor: str) -> str | None:
    """The heading text whose anchor is `anchor`, as written in the lesson."""
    for line in lesson.body.split("\n"):
        match = _HEADING.match(line)
        if match and heading_anchor(match.group(1)) == anchor:
            return heading_parts(match.group(1).strip())[0]
    return None


def lesson_ref(link: str, lessons: Iterable[Lesson]) -> LessonRef:
    """Never raises: a link the lessons cannot resolve still names its id and anchor."""
    lesson_id, _, anchor = link.partition("#")
    try:
        lesson, anchor = resolve_link(link, lessons)
    except LessonLinkError:
        return LessonRef(lesson_id, anchor, lesson_id, anchor)
    return LessonRef(lesson.id, anchor, lesson.title, section_title(lesson, anchor) or anchor)
