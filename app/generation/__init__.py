"""Generation, in flight: a token generator served with static batches, with in-flight batching
(Triton's iterative sequences) and with the mistake of keeping state per batch row.

`app.generation.engine` runs workloads and reads their traces (no Streamlit, no words);
`app.generation.words` holds the English templates for its codes.
"""
