"""The worker's use cases: running a delivery, the jobs it holds, its heartbeat, the job types
it announces and the handlers it loads."""
