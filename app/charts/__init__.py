"""Charts: plotly figures drawn from the engine's tables, labels in the learner's language."""
