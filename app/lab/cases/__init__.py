"""Lesson cases: the runs the lessons' live elements and demos make."""
