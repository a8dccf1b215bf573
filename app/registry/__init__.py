"""What sits above every feature: the one place that lists both families of exercises (families.py, with the
lookups of their words and figures by name) and the lessons' live elements (live.py), importing each feature's
list statically. The pages and the CLI read these; no feature imports them (the layers contract holds it).
"""
