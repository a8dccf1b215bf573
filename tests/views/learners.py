"""Learner ids for page tests: a name plus a token, as a learner's link holds them.

The token is derived from the name, so a test that opens the page twice with the same name
comes back as the same learner, as a learner reopening their link does. Real ids get a random
token (app/quiz/access_rules.make_learner_id); a bare name opens no one's progress.
"""
from __future__ import annotations

import hashlib

from app.quiz import access_rules


def link_id(name: str) -> str:
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    alphabet = access_rules.TOKEN_ALPHABET
    token = "".join(alphabet[b % len(alphabet)] for b in digest[:access_rules.TOKEN_LENGTH])
    return access_rules.make_learner_id(name, token=token)
