"""Parts of the Home page (app/views/home.py) that no other page uses."""
