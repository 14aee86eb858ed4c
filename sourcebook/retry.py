"""The one retry policy for calls to a model server (chat and embeddings alike).

Which failures are worth another try, and how long to wait before it: exponential backoff from a base
delay, jittered to 50-100% so that parallel workers hit by the same outage do not come back in step, capped,
and never shorter than the server's own Retry-After (capped too, so a hostile header cannot stall a build).
The callers own the loop (each reports and logs in its own terms); this module only decides.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

RETRY_CAP_S = 30.0
# request timeout, conflict, too early, rate limited, and the server-side failures that pass
RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


def retryable(status: int | None) -> bool:
    """Whether a failure is worth another try: `status` None is a transport failure (timeout, refused)."""
    return status is None or status in RETRYABLE_STATUS


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """The server's Retry-After in seconds (None when absent or an HTTP date: our own backoff then)."""
    value = (headers or {}).get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def backoff_delay(attempt: int, base_s: float, retry_after: float | None = None,
                  rng: random.Random | None = None) -> float:
    """Seconds to wait before retry `attempt` (0-based): base * 2**attempt, jittered to 50-100%, capped;
    at least the server's Retry-After, capped as well."""
    rng = rng or random.Random()  # noqa: S311 - jitter, not cryptography
    delay = min(RETRY_CAP_S, base_s * (2**attempt)) * rng.uniform(0.5, 1.0)
    if retry_after is not None:
        delay = max(delay, min(RETRY_CAP_S, retry_after))
    return delay
