"""The root of every exception the lab raises on purpose: `except BatchingLabError` catches them all.

Each keeps the built-in base its callers and libraries rely on (a LabError is still a ValueError,
a PollNotFound still a LookupError), so no caller that catches those changes what it catches.
Those marked * carry `.problems` (codes and values, worded by app/text/problems.py); the rest
say what happened in their str().

    BatchingLabError
    ├── LabError* (ValueError)               app/lab/problems.py: input a learner must change
    │   ├── AlphabetError                    app/lab/scenario/alphabet.py
    │   ├── ScenarioError                    app/lab/scenario/scenario.py
    │   └── DeploymentError                  app/lab/deployment/deployments.py
    ├── ServerError* (RuntimeError)          app/lab/server/errors.py: the server, not the learner
    │   ├── InstallationError
    │   ├── StartupError
    │   ├── UnreachableError
    │   ├── AddressError
    │   ├── ProxyError                       app/lab/server/proxy.py
    │   └── RunUnfinished                    app/generation/engine/driver.py
    ├── DatabaseError* (RuntimeError)        app/lab/database/errors.py: the class database
    ├── CheckError                           app/checker/engine/api.py: a check that could not be made
    ├── ContentError (ValueError)            app/content/lessons.py: a lesson file
    │   └── LessonLinkError
    ├── GlossaryError (ValueError)           app/content/glossary.py
    ├── FrontMatterError (ValueError)        app/content/frontmatter.py
    ├── BankError (ValueError)               app/quiz/bank.py: the quiz bank
    ├── PollNotFound (LookupError)           app/quiz/votes.py
    ├── PollClosed (RuntimeError)            app/quiz/votes.py
    ├── AttemptNotFound (LookupError)        app/quiz/store.py
    └── AttemptClosed (RuntimeError)         app/quiz/store.py

A bare ValueError, OSError or TypeError that is none of these comes from a library, the host, or
a bug (app/text/errors.py says which the learner reads and which keep their traceback).
"""
from __future__ import annotations


class BatchingLabError(Exception):
    """Base class of the lab's own exceptions (the tree is in this module's docstring)."""
