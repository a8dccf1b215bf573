"""A long prompt among running generations, with and without chunked prefill."""
