"""Parts of the Quiz page (app/views/quiz.py) that no other page uses."""
