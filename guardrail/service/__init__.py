"""`guardrail serve`: one resident gate that many agents share, over HTTP + JSON.

Module map (each one job; only ``app``, ``server`` and ``http_errors`` import the ASGI stack, so
`guardrail.client.RemoteGate` imports nothing heavier than pydantic and httpx)::

    models.py        request and response bodies, built from the library's own pydantic models
    settings.py      `ServiceSettings`: bind address, caps, queue, deadline; checked before start
    auth.py          the bearer token: given, from $GUARDRAIL_TOKEN, or generated into a 0600 file
    admission.py     the bounded queue, per-request deadlines and cancellation of a request's jobs
    interruptible.py the `Sandbox` wrapper that stops dispatching a cancelled request's jobs
    indexes.py       collections opened by name under the configured index, kept open
    health.py        what /v1/health reports: engine, image, runtime, pool and queue figures
    metrics.py       counters and histograms, rendered in the Prometheus text format
    logs.py          JSON-lines logging of every request
    http_errors.py   the one place errors become status codes (and the error body)
    app.py           `create_app(gate, settings)`: the routes and their lifespan
    server.py        `serve(settings)`: builds the gate, binds loopback or a unix socket, drains

Routes are thin: parse with the shared models, call one `Gate` method, map errors in one place.
"""
