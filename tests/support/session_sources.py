"""Two small Python modules for answer-engine tests: a request context that opens its session through a
session interface (a question whose answer spans two files)."""

from __future__ import annotations

SESSIONS = '''"""Cookie sessions."""


class SessionInterface:
    """Opens and saves sessions for a request context."""

    def open_session(self, app, request):
        """Load the session from the request cookie."""
        return {}

    def save_session(self, app, session, response):
        """Write the session cookie onto the response."""
        response.set_cookie("session", "x")
'''

CTX = '''"""The request context."""
from pkg.sessions import SessionInterface


class RequestContext:
    """Holds the request and the session while a request is handled."""

    def __init__(self, app, request):
        self.app = app
        self.request = request
        self.session = None

    def push(self):
        """Open the session through the app's SessionInterface when the context is pushed."""
        self.session = self.app.session_interface.open_session(self.app, self.request)
'''
