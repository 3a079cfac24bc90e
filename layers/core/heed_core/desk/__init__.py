"""The site owners' desk, its rules: what a pasted log line says (``loglines``), whether a request
was ours (``verdicts``), a proof of control of a host (``proof``), how often a client or a host
may ask (``limits``), the forms' CSRF tokens (``csrf``) and what a site owner names (``scope``).

Pure: no store, no clock, no network, no randomness (the adapters hand in ``now`` and the random
bytes). The web application (``heed.desk``) and the engines' adapters stand on these rules; the
desk's own records go through ``heed_core.desk.store.DeskStore``."""
