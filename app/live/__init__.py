"""The lessons' live elements, one folder each: engine (the runs, no Streamlit and no words), words,
figures and view (the Streamlit part a lesson page draws); app/live/common holds what the views share.

Which element a lesson embeds is data: app/registry/live.py, above the features, maps the name a lesson's
front matter gives in `live:` to the element's view. Lessons 3 to 6's belong to the recogniser (app/recogniser/live_view.py),
lesson 8's and lesson 9's to the generation
feature (app/generation/live_view.py, app/generation/paged/lesson/view.py) and are listed there too.

This package imports nothing itself, so an engine (app/live/<name>/engine.py) loads without Streamlit.
"""
