"""Parts of the Instructor page (app/views/instructor.py) that no other page uses."""
