"""The lab's set-up is declared once (app/lab/deployment/setup_table.FIELDS): every setting and traffic field is
a row there, exactly once, and the checks, URL keys and widgets all read their ranges from it, so no second
place can hold a range of its own."""
from __future__ import annotations

from collections import Counter
from dataclasses import fields, replace

import pytest
from streamlit.testing.v1 import AppTest

from app.lab.deployment import FIELD, FIELDS, LabSettings
from app.lab.problems import Problem
from app.lab.records import Traffic
from app.recogniser.engine.setup import OLD_QUERY_KEYS, QUERY_KEYS, LabSetup
from app.recogniser.view import controls


def test_every_field_of_the_settings_and_the_traffic_is_one_row_of_the_table():
    names = Counter(f.name for f in FIELDS)
    assert [name for name, n in names.items() if n > 1] == [], "a field declared twice"
    assert {f.name for f in FIELDS if f.part == "settings"} == {f.name for f in fields(LabSettings)}
    assert {f.name for f in FIELDS if f.part == "traffic"} == {f.name for f in fields(Traffic)}
    assert set(LabSetup(texts=("HI",)).to_query()) == set(QUERY_KEYS), "the URL holds the table's fields and the text"
    assert set(OLD_QUERY_KEYS.values()) <= set(names), "an old link's key names a field that no longer exists"


@pytest.mark.parametrize("f", [f for f in FIELDS if f.low is not None], ids=lambda f: f.name)
def test_each_range_is_checked_at_its_limits(f):
    start = LabSetup(LabSettings(scheduler="direct"))  # direct checks every setting (idle timeout too)
    kind = type(getattr(getattr(start, f.part), f.name))
    low, high = f.limits
    for value, refused in ((low, False), (high, False), (low - f.step, True), (high + f.step, True)):
        setup = replace(start, **{f.part: replace(getattr(start, f.part), **{f.name: kind(value)})})
        expected = [Problem(f.problem, {"low": low, "high": high, "value": kind(value)})] if refused else []
        assert [p for p in setup.problems() if p.code == f.problem] == expected, (f.name, value)


def _draw_controls() -> None:
    from app.recogniser.view import controls

    controls.init_widgets()
    controls.controls()


def test_every_widget_offers_the_table_s_range_and_step():
    at = AppTest.from_function(_draw_controls).run(timeout=30)
    assert not at.exception, [e.value for e in at.exception]
    drawn = {w.key.removeprefix(controls.P): w for w in (*at.number_input, *at.slider)}
    numbers = {f.name for f in FIELDS if f.low is not None}
    assert set(drawn) == numbers, "each number of the table has a widget, and no widget a range of its own"
    for name in numbers:
        f, widget = FIELD[name], drawn[name]
        assert (widget.min, widget.max, widget.step) == (f.low, f.high, f.step), name
    helps = {w.key.removeprefix(controls.P): w.help for w in at.number_input}
    assert helps["instances"] == f"Copies of the model ({FIELD['instances'].low} to {FIELD['instances'].high})"
    assert helps["slots"] == f"Rows per execution ({FIELD['slots'].low} to {FIELD['slots'].high})"
