"""Proof on the user's host: the escape audit, doctor, and the pre-flight checks."""
