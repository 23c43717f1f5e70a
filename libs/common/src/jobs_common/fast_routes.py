"""A few hot routes answered without FastAPI's routing, dependency resolution and response
model, by a plain ``Request -> Response`` handler.

Single submissions are CPU-bound on a small machine: py-spy put about half of the gateway's
CPU per ``POST /api/jobs`` and a quarter of the submission service's in FastAPI's route
matching, dependency resolution, response model and the exception layers between them
(docs/performance.md). :func:`install_fast_routes` puts :class:`FastRoutes`, a pure ASGI
middleware, innermost of the app's own middleware: request metrics, the log context, CORS,
body limits and the URL input rule still wrap every request it answers.

A fast route names an exact method and path and the FastAPI route it stands for (by name).
It serves nothing until FastAPI itself has routed a request of that method and path to that
route: the first such request takes the normal path, and the route FastAPI chose is then
what ``scope["route"]`` holds for the fast ones (metrics label them by its template). A fast
route can so never shadow another route that an earlier router declares at the same path.
The FastAPI route stays the contract (OpenAPI) and what the handler must answer like; each
service's tests send the same requests to both. A handler's errors are answered by the app's
own exception handlers (the documented envelope), an unexpected one passes on, as it does
from a route.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

Handler = Callable[[Request], Awaitable[Response]]
ExceptionHandler = Callable[[Request, Exception], Response | Awaitable[Response]]


@dataclass
class FastRoute:
    """``method`` ``path`` (exact: no parameters, no trailing slash) answered by ``handler``
    once FastAPI has routed one such request to the route named ``route_name``."""

    method: str
    path: str
    route_name: str
    handler: Handler
    route: Any = field(default=None, init=False)  # the route FastAPI chose, once learned

    def learn(self, scope: Scope) -> None:
        route = scope.get("route")
        if getattr(route, "name", None) == self.route_name:
            self.route = route


class FastRoutes:
    def __init__(self, app: ASGIApp, *, routes: Iterable[FastRoute], owner: FastAPI) -> None:
        self.app = app
        self.routes = {(route.method, route.path): route for route in routes}
        self.owner = owner  # its exception handlers answer the handlers' errors

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = (
            self.routes.get((scope["method"], scope["path"])) if scope["type"] == "http" else None
        )
        if route is None:
            await self.app(scope, receive, send)
        elif route.route is None:
            await self.app(scope, receive, send)
            route.learn(scope)
        else:
            await self._serve(route, scope, receive, send)

    async def _serve(self, route: FastRoute, scope: Scope, receive: Receive, send: Send) -> None:
        scope["route"] = route.route
        scope["endpoint"] = getattr(route.route, "endpoint", None)
        request = Request(scope, receive, send)
        try:
            response = await route.handler(request)
        except Exception as exc:
            handler = self._handler_for(exc)
            if handler is None:
                raise
            answer = handler(request, exc)
            response = await answer if inspect.isawaitable(answer) else answer
        await response(scope, receive, send)

    def _handler_for(self, exc: Exception) -> ExceptionHandler | None:
        """The app's handler for ``exc``'s class or its nearest base, as Starlette's
        ExceptionMiddleware finds it (the handler of ``Exception`` is the last resort's,
        outside the app's middleware: the exception passes on to it)."""
        handlers: dict[Any, Any] = self.owner.exception_handlers
        for cls in type(exc).__mro__:
            if cls is Exception:
                return None
            if cls in handlers:
                handler: ExceptionHandler = handlers[cls]
                return handler
        return None


def install_fast_routes(app: FastAPI, routes: Iterable[FastRoute]) -> None:
    """Innermost of the app's own middleware, whenever it is called before the app serves."""
    if app.middleware_stack is not None:
        raise RuntimeError("install fast routes before the app starts serving")
    app.user_middleware.append(Middleware(FastRoutes, routes=list(routes), owner=app))
