"""The recogniser's engine: audio of a scenario's utterances (audio), its presets and the lab's URL set-up
(presets, setup), the session driver (driver, over app/lab/traffic's transports and run queue), and the
judgement of what came back (judgement: verdicts, analysis, evidence, prediction).

Free of Streamlit and of words (codes and numbers only): an import-linter contract holds it. The scenario and the
records a run passes between stages (app/lab/scenario, app/lab/records) stay in app/lab, since the exercise
machinery and the checker read them too.
"""
