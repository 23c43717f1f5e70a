"""Gateway: the only public HTTP entry (users, login, JWT, rate limits, proxy)."""
