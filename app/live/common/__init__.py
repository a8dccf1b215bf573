"""What the live elements' views share (view.py): a result kept across reruns, failures told plainly."""
