"""What several exercises share: the result types, readings over run tables, fixed-name models."""
