"""Lesson 9's live element: one small seeded workload on the paged engine, with the block count and
prefix sharing the learner picks, after a prediction of how many requests run at once.

`engine.py` runs it and reads the answer off the engine's own steps (no Streamlit, no words);
`words.py`, `figures.py` and `view.py` (drawn by app/registry/live.py) show it.
"""
