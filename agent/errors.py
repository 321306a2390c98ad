"""The one root of agent's errors, so that a caller can tell agent's own refusals and failures
from bugs (any other exception) and from the twin's (twin.errors.TwinError).

Every exception class under agent/ derives from `AgentError`; one that is a `ValueError` (bad
data or arguments: TaskError, SpecError, DatasetError...) stays one too. Its message says what
went wrong and what to do. The `homeflow` CLI reports it as a one-line error and exit status 1,
never a traceback; a command that knows better says more (an option's error is a usage error, exit
2; a stopped run adds how to continue it).
"""


class AgentError(Exception):
    """Something agent refused or could not do; the message says what and what to do."""
