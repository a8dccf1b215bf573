"""A cancelled generation's KV blocks."""
