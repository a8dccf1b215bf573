"""The runs the presenter's demos make (the lessons' live elements have their own: app/live)."""
