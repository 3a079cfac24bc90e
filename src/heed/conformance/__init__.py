"""`heed conformance`: a bot's public promises (PROMISES.md, rule by rule) proven from the sites' side.

The catalogue (``catalogue.py``; ``common.py`` and one module per bot) holds each rule: its id,
the sentence in our words, the profile keys it binds and the check. ``runner.py`` plays the
scenarios the chosen rules need (small webs on 127.0.0.210-249 that log every request, the real
handlers on moto) and judges each rule; ``report.py`` prints the table or JSON;
``command.py`` is the CLI (``register(subparsers)``). The package imports none of them itself: a
module of it imports its siblings by their own names, and the package never imports back."""
