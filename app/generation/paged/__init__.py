"""The paged engine: a real engine's KV cache, cut into blocks, deciding how many generations run.

`engine/` runs and reads it (no Streamlit, no words); its words, figures and views sit beside it.
"""
