"""The lesson pages. They have no script of their own: app/main.py makes one st.Page per lesson in lessons/
from page.render, so a new lesson needs no Python file."""
