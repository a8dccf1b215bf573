"""Lesson 8: rendered from lessons/ by app/ui/lesson_page.py."""
from app.ui.lesson_page import render

render(8)
