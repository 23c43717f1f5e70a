"""Pure logic: routing table, header policy, rate limiting, token handling."""
