"""Live elements of lessons 1 and 2: the stateless sentiment model, one at a time, all at once and in two
arrival orders. engine.py sends the reviews (also the worked example's Model A and the verification
exercise's stateless deployment), words.py and figures.py say and draw the runs, view.py shows them."""
