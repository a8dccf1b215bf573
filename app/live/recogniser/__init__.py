"""Live elements of lessons 3 to 6: the streaming recogniser under each scheduler (view.py), and lesson 4's
worked example, two models and four requests sent to the real server (engine.py)."""
