"""Too few KV blocks: the same workload on a cache with plenty of blocks and on one with too few."""
