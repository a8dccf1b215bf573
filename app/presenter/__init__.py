"""The Presenter's class demos: two set-ups that differ in one setting, a question the class votes on,
both run on identical traffic, and the reveal of what the server did. Each feature makes its own demos
(the recogniser's app/recogniser/demo.py, the generator's app/generation/demo.py and paged/demo.py, no Streamlit,
no words); here is what the page shares across them: words.py says the page around any demo, figures.py draws
the vote, view.py holds what the Presenter's page and the learners' vote page share."""
