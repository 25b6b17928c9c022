"""The validation service: `python -m validators serve`, an HTTP API over `validators.engine`.

Modules: `app` (routes), `pool` (worker processes, queue, timeouts), `models` (request and
response bodies), `tasks` (the task set), `metrics`, `auth`, `logs`, `ray_app` (Ray Serve).
See README.md beside this file.
"""
