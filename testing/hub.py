"""A stand-in for the Hugging Face Hub's answers, for 127.0.0.1 servers in tests and benchmarks."""

from __future__ import annotations

import http.server

NOT_FOUND_BODY = b'{"error": "Repository not found"}'


def answer_repo_not_found(handler: http.server.BaseHTTPRequestHandler) -> None:
    """The Hub's 404 for a repository it does not hold: huggingface_hub reads the error code
    header (``RepositoryNotFoundError``, a definite answer: the circuit breaker stays closed)."""
    handler.send_response(404)
    handler.send_header("X-Error-Code", "RepoNotFound")
    handler.send_header("Content-Length", str(len(NOT_FOUND_BODY)))
    handler.end_headers()
    if handler.command != "HEAD":
        handler.wfile.write(NOT_FOUND_BODY)
