"""Exceptions that carry control flow and messages. Each has the exit code the CLI uses."""

from __future__ import annotations


class OmniError(Exception):
    exit_code = 1


class UsageError(OmniError):
    """Bad input from the user: flags, goal, configuration, environment."""

    exit_code = 2


class ModelError(OmniError):
    """The model endpoint failed in a way retrying will not fix (bad key, unknown model)."""

    exit_code = 1
    status = "model_error"


class EndpointUnreachable(ModelError):
    """Nothing answers at the base URL (connection refused, an unknown host) and nothing ever has in
    this run: a configuration problem, so no retries and exit 2."""

    exit_code = 2
    status = "unreachable"


class ContextLengthExceeded(OmniError):
    """The request did not fit the model's context window."""


class SandboxError(OmniError):
    exit_code = 1
    status = "sandbox_error"


class StopRun(Exception):
    """Ends the loop with a status; raised by limits, finish, repeated format errors, interrupts."""

    def __init__(self, status: str, message: str = ""):
        super().__init__(message or status)
        self.status = status
        self.message = message


# Run statuses and their exit codes (README: "Exit codes").
EXIT_CODES = {
    "finished": 0,
    "failed": 1,
    "format_errors": 1,
    "model_error": 1,
    "unreachable": 2,
    "sandbox_error": 1,
    "flagged": 1,
    "unverified": 1,
    "limit_steps": 3,
    "limit_cost": 3,
    "limit_time": 3,
    "interrupted": 130,
}


class ForceQuit(BaseException):
    """A second Ctrl-C within two seconds: leave now (the record is still saved, the sandbox removed).
    A BaseException, so no `except Exception` on the way up can swallow it."""


class OutputClosed(ForceQuit):
    """stdout was closed under --json (its reader, say `head -1`, has left): the run ends as if stopped,
    its record saved and its worktree removed."""
