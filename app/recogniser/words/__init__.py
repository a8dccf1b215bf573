"""The recogniser's words, in English source form, marked for translation with N_(): its presets, prediction
verdicts, run report, transports, chart summaries and Presenter demos. What both features say (errors, problems,
counts, verdicts, how a sentence lists things) stays in app/text."""
