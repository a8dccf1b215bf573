"""Generation lab page (the body lives in app/generation/page.py)."""
from app.generation.page import render

render()
