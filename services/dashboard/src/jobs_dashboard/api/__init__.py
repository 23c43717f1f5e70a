"""HTTP routes of the dashboard, one router per concept."""
