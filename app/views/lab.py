"""Live lab page (the body lives in app/ui/lab_page.py)."""
from app.ui.lab_page import render

render()
