"""Heed on one machine: the same core (profiles, plan, settle, politeness, robots.txt, parsers) and
the same ports (``heed_core.store``: HostStore, Tokens, Results, Journal), backed by one SQLite
database in WAL mode instead of DynamoDB, SQS, EventBridge and S3.

This room imports ``heed_core`` and the standard library only: never ``heed_aws``, boto3 or moto
(tests/unit/test_import_rooms.py holds it to that). ``heed serve`` (``heed.serve_cli``) and
``heed local run`` (its default engine) run it; the operator commands act on its database while
it runs."""
__all__: list[str] = []
