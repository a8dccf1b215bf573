"""Generation, in flight: a token generator served by Triton with static and in-flight batching."""
