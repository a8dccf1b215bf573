"""The recogniser: a streaming speech recogniser served with the sequence batcher (direct and oldest), the dynamic
batcher, and the mistake of keeping state per batch row.

`app.recogniser.engine` builds scenarios, sends their sessions and judges what came back (no Streamlit, no words);
`app.recogniser.words` holds the English templates for its codes, `figures` and `replay` draw its runs, `view` holds
the parts the lab page draws, `exercises` its failure modes, `live` / `live_view` lessons 3 to 6's live elements,
and `demo` the Presenter's demos. What it shares with the generator (the server, deployments and loaded models,
the run queue, observation, progress, errors) is app/lab.
"""
