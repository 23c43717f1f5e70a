"""Submission service: accepts jobs, stores them in MongoDB, relays them to the scheduler."""
