"""Live element of lesson 7: the deployment checker run on the lab's own deployments before rollout.
engine.py picks the deployments and reads the result, words.py says what it teaches, view.py shows it."""
