"""The recogniser's words, in English source form, marked for translation with N_(): its presets, prediction
verdicts, run report, transports and Presenter demos. What both features say (errors, problems, counts,
verdicts, chart summaries) stays in app/text."""
