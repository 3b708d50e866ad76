"""The running processes: which parts run where, the job queue, the clock, health, and the composition root."""
