"""The schema of a state directory's database: its version (``PRAGMA user_version``), its tables
(each record DynamoDB keeps as an item of its own is a row here) and what an older database
needs before them. Apart from ``db`` (which names ``SCHEMA_VERSION`` again for the code that
imports it there) so that each file stays small enough to read whole (issue 36)."""
from __future__ import annotations

import sqlite3

__all__ = ["SCHEMA", "SCHEMA_VERSION", "upgrade"]

SCHEMA_VERSION = 6  # 2: the attempts table (a request in flight, marked before it is made); 3: the queue's
# chain column (what a deferred host's known work still takes: due tokens are handed out longest first);
# 4: the results' doors (consumers' positions, the webhook's deliveries and dead letters, events by id);
# 5: the request and skip log as tables (by host and time, by URL), free pages returned (incremental vacuum);
# 6: the site owners' desk (its secret, rate limits, proof tokens and sessions in desk; what they asked for in
# desk_actions): two new tables, nothing else changed (heed_embedded.desk)

# Keys: a host is an authority (scheme://host:port), as in DynamoDB's H#<authority>; every record
# that DynamoDB keeps as an item of its own is a row here, so the store's semantics stay key for key.
SCHEMA = """
CREATE TABLE IF NOT EXISTS manifest (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS hosts (
  host TEXT PRIMARY KEY, v INTEGER NOT NULL, own TEXT, lease REAL NOT NULL DEFAULT 0,
  st TEXT NOT NULL, ob TEXT, expires REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS aux (
  host TEXT NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL, expires REAL NOT NULL,
  PRIMARY KEY (host, kind)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS marks (host TEXT PRIMARY KEY, v INTEGER NOT NULL, sent TEXT NOT NULL,
  expires REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS urls (url TEXT PRIMARY KEY, host TEXT NOT NULL, data TEXT NOT NULL,
  expires REAL NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS urls_host ON urls (host);
CREATE TABLE IF NOT EXISTS sources (id TEXT PRIMARY KEY, data TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS source_reads (id TEXT PRIMARY KEY, data TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS quotas (key TEXT PRIMARY KEY, n INTEGER NOT NULL, expires REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS quota_takers (key TEXT NOT NULL, taker TEXT NOT NULL, granted INTEGER NOT NULL,
  PRIMARY KEY (key, taker)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS blocks (domain TEXT PRIMARY KEY, reason TEXT NOT NULL, at REAL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS purges (domain TEXT PRIMARY KEY, at REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, data TEXT NOT NULL, version INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS domain_index (host TEXT PRIMARY KEY, rname TEXT NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS domain_rname ON domain_index (rname);
CREATE TABLE IF NOT EXISTS texts (vid INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, text TEXT NOT NULL,
  at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS texts_key ON texts (key, vid);
CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY AUTOINCREMENT, rid TEXT NOT NULL,
  detail_type TEXT NOT NULL, record TEXT NOT NULL, at REAL NOT NULL, wall REAL NOT NULL);
CREATE INDEX IF NOT EXISTS events_rid ON events (rid);
CREATE INDEX IF NOT EXISTS events_url ON events (json_extract(record, '$.url'));
CREATE TABLE IF NOT EXISTS consumers (name TEXT PRIMARY KEY, seq INTEGER NOT NULL, updated REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS deliveries (seq INTEGER PRIMARY KEY, grp TEXT NOT NULL, attempts INTEGER NOT NULL,
  first_try REAL, next_try REAL NOT NULL, last_error TEXT);
CREATE INDEX IF NOT EXISTS deliveries_group ON deliveries (grp, seq);
CREATE TABLE IF NOT EXISTS delivery_dead (seq INTEGER PRIMARY KEY, attempts INTEGER NOT NULL, dead_at REAL NOT NULL,
  why TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS requests (id INTEGER PRIMARY KEY AUTOINCREMENT, host TEXT NOT NULL, t REAL NOT NULL,
  wall REAL NOT NULL, url TEXT NOT NULL, record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS requests_host ON requests (host, t);
CREATE INDEX IF NOT EXISTS requests_url ON requests (url);
CREATE TABLE IF NOT EXISTS skips (id INTEGER PRIMARY KEY AUTOINCREMENT, host TEXT NOT NULL, t REAL NOT NULL,
  wall REAL NOT NULL, url TEXT NOT NULL, reason TEXT NOT NULL, record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS skips_host ON skips (host, t);
CREATE INDEX IF NOT EXISTS skips_url ON skips (url);
CREATE TABLE IF NOT EXISTS queue (
  id INTEGER PRIMARY KEY AUTOINCREMENT, grp TEXT NOT NULL, dedup TEXT NOT NULL, body TEXT NOT NULL,
  sent REAL NOT NULL, visible REAL NOT NULL, receives INTEGER NOT NULL DEFAULT 0, head INTEGER NOT NULL,
  holder TEXT, receipt TEXT, first_received REAL, chain REAL);
CREATE INDEX IF NOT EXISTS queue_due ON queue (head, visible, chain);
CREATE INDEX IF NOT EXISTS queue_group ON queue (grp, id);
CREATE INDEX IF NOT EXISTS queue_holder ON queue (holder) WHERE holder IS NOT NULL;
CREATE TABLE IF NOT EXISTS dedup (id TEXT PRIMARY KEY, until REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS recoveries (host TEXT PRIMARY KEY, n INTEGER NOT NULL, v INTEGER NOT NULL,
  at REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS attempts (url TEXT PRIMARY KEY, host TEXT NOT NULL, n INTEGER NOT NULL,
  at REAL NOT NULL, expires REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS dead (
  id INTEGER PRIMARY KEY, grp TEXT NOT NULL, dedup TEXT NOT NULL, body TEXT NOT NULL, sent REAL NOT NULL,
  receives INTEGER NOT NULL, first_received REAL, dead_at REAL NOT NULL, why TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS desk (key TEXT PRIMARY KEY, data TEXT NOT NULL, n INTEGER NOT NULL DEFAULT 0,
  expires REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS desk_actions (id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, data TEXT NOT NULL);
"""


def upgrade(c: sqlite3.Connection) -> None:
    """What a database of an older schema needs before ``SCHEMA`` (whose statements only add what
    is missing): the queue's chain column (schema 3) where the queue has none yet, its old index
    gone. Made whatever the version says, so a change another process made already is not made
    again."""
    columns = {row[1] for row in c.execute("PRAGMA table_info(queue)")}
    if columns and "chain" not in columns:
        c.execute("ALTER TABLE queue ADD COLUMN chain REAL")
    c.execute("DROP INDEX IF EXISTS queue_ready")
