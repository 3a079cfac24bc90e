"""The desk's records in the stack's state table (``heed_core.desk.store.DeskStore``), under one
partition of their own: ``DESK`` / ``secret`` (made once, by a conditional put), ``L#<counter>``
(a rate-limit window: an atomic ADD, gone by TTL when the window ends), ``T#<digest>`` (a proof
token; a use is a conditional update on its state and asks, so a replay racing the first use
loses), ``S#<digest>`` (a proven session, gone by TTL) and ``A#<time>#<n>`` (what a site owner
asked for: kept, Queried newest first). Every call by key, or one Query of the partition."""
from __future__ import annotations

import json
import os
from dataclasses import asdict
from typing import Any

from heed_core.desk.proof import ProofToken
from heed_core.desk.store import DeskAction, Session

from heed_aws.table import Table, _n, _s

__all__ = ["DynamoDeskStore"]

_PK = "DESK"


class DynamoDeskStore(Table):
    """Implements ``heed_core.desk.store.DeskStore`` on the bot's table."""

    def _key(self, sk: str) -> dict[str, dict[str, str]]:
        return {"pk": _s(_PK), "sk": _s(sk)}

    def secret(self, fresh: bytes) -> bytes:
        self._if("put_item", "desk secret", TableName=self.table, ConditionExpression="attribute_not_exists(pk)",
                 Item={**self._key("secret"), "d": _s(fresh.hex())})
        resp = self._call("get_item", "desk secret", TableName=self.table, Key=self._key("secret"),
                          ConsistentRead=True)
        return bytes.fromhex(resp["Item"]["d"]["S"])

    def hit(self, key: str, expires: float) -> int:
        resp = self._call("update_item", "desk limit", TableName=self.table, Key=self._key(f"L#{key}"),
                          UpdateExpression="ADD n :one SET #ttl = :ttl", ExpressionAttributeNames={"#ttl": "ttl"},
                          ExpressionAttributeValues={":one": _n(1), ":ttl": _n(int(expires) + 60)},
                          ReturnValues="UPDATED_NEW")
        return int(resp["Attributes"]["n"]["N"])

    @staticmethod
    def _token_item(token: ProofToken) -> dict[str, Any]:
        return {"d": _s(json.dumps(asdict(token))), "st": _s(token.state), "asks": _n(token.asks),
                "ttl": _n(int(token.expires) + 86400)}

    def put_token(self, token: ProofToken) -> None:
        self._call("put_item", "desk token", TableName=self.table,
                   Item={**self._key(f"T#{token.tid}"), **self._token_item(token)})

    def get_token(self, tid: str) -> ProofToken | None:
        resp = self._call("get_item", "desk token", TableName=self.table, Key=self._key(f"T#{tid}"),
                          ConsistentRead=True)
        item = resp.get("Item")
        return ProofToken(**json.loads(item["d"]["S"])) if item else None

    def swap_token(self, old: ProofToken, new: ProofToken) -> bool:
        return self._if("put_item", "desk token", TableName=self.table,
                        Item={**self._key(f"T#{old.tid}"), **self._token_item(new)},
                        ConditionExpression="st = :st AND asks = :asks",
                        ExpressionAttributeValues={":st": _s(old.state), ":asks": _n(old.asks)})

    def put_session(self, session: Session) -> None:
        self._call("put_item", "desk session", TableName=self.table,
                   Item={**self._key(f"S#{session.sid}"), "d": _s(json.dumps(asdict(session))),
                         "ttl": _n(int(session.expires) + 60)})

    def get_session(self, sid: str, now: float) -> Session | None:
        resp = self._call("get_item", "desk session", TableName=self.table, Key=self._key(f"S#{sid}"),
                          ConsistentRead=True)
        item = resp.get("Item")
        if not item:
            return None
        session = Session(**json.loads(item["d"]["S"]))
        return session if session.expires > now else None  # TTL deletes late: the end is the item's own

    def record(self, action: DeskAction) -> None:
        sk = f"A#{action.at:017.6f}#{os.urandom(4).hex()}"
        self._call("put_item", "desk action", TableName=self.table,
                   Item={**self._key(sk), "d": _s(json.dumps(asdict(action), default=str))})

    def actions(self, limit: int = 100) -> list[DeskAction]:
        resp = self._call("query", "desk actions", TableName=self.table,
                          KeyConditionExpression="pk = :pk AND begins_with(sk, :a)",
                          ExpressionAttributeValues={":pk": _s(_PK), ":a": _s("A#")},
                          ScanIndexForward=False, Limit=int(limit))
        return [DeskAction(**json.loads(i["d"]["S"])) for i in resp.get("Items", [])]
