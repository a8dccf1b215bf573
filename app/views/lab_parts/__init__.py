"""Parts of the Live lab page (app/views/lab.py) that no other page uses."""
