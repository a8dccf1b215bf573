"""The Presenter's class demos: two set-ups that differ in one setting, a question the class votes on,
both run on identical traffic, and the reveal of what the server did. engine.py makes the recogniser's
demos (no Streamlit, no words; the generator's are app/generation/demo.py), words.py says them,
figures.py draws the vote, view.py holds what the Presenter's page and the learners' vote page share."""
