"""What the lab page (app/views/lab.py) and the recogniser's live elements draw: the set-up controls kept in step
with the URL, a run's evidence and its transcripts."""
