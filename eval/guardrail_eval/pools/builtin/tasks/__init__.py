"""Hand-written tasks of the built-in pool, one module per domain, each defining `TASKS`."""
