"""Render a lesson's markdown with section anchors the quiz can link to (?section=<anchor>).

Level-2 and level-3 headings become st.header/st.subheader with the anchor the content
loader computes (heading_anchor), so 'lesson-id#anchor' links land exactly; fenced code
is passed through untouched, '#' comments inside it included.
"""
from __future__ import annotations

import re

import streamlit as st

from app.content.lessons import Lesson, heading_anchor, heading_parts
from app.i18n import N_
from app.ui.language import t

SECTION_FALLBACK = N_("The link's `section={asked:text}` names no section of this lesson; "
                      "showing the lesson from the top instead.")
_HEADING = re.compile(r"^(#{2,3})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def split_sections(body: str) -> list[tuple[int, str, str]]:
    """[(level, heading, markdown)]: level 0 with an empty heading for text before the first heading."""
    parts: list[tuple[int, str, list[str]]] = [(0, "", [])]
    fence = None
    for line in body.split("\n"):
        match = _FENCE.match(line)
        if match:
            fence = match.group(1) if fence is None else (None if match.group(1) == fence else fence)
        heading = _HEADING.match(line) if fence is None and not match else None
        if heading:
            parts.append((len(heading.group(1)), heading.group(2), []))
        else:
            parts[-1][2].append(line)
    return [(level, title, "\n".join(lines).strip("\n")) for level, title, lines in parts]


def render_body(lesson: Lesson) -> None:
    section = st.query_params.get("section")
    if section and section in lesson.anchors:
        title = next((heading_parts(t)[0] for _, t, _ in split_sections(lesson.body) if heading_anchor(t) == section), section)
        st.info(t().render(N_("You were sent to the section **{title:text}**: [jump to it](#{anchor:text})."),
                           title=title, anchor=section))
    elif section:
        st.warning(t().render(SECTION_FALLBACK, asked=section))
    for level, heading, text in split_sections(lesson.body):
        title, anchor = heading_parts(heading)
        if level == 2:
            st.header(title, anchor=anchor)
        elif level == 3:
            st.subheader(title, anchor=anchor)
        if text:
            st.markdown(text)
