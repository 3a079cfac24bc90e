"""The site owners' desk: a small web application beside the bot's info page ("was this you?",
"what did you do on my site?", "stop"), answered by the bot itself from its own state.

``web`` is the WSGI application (the standard library's, no framework), ``pages`` its HTML (the
info page's look, the bot's language and English, every value escaped once), ``service`` the
desk's flows over the rules in ``heed_core.desk``, ``backend`` what each engine answers them
from, ``server`` the HTTP server ``heed serve --desk`` and ``heed desk`` run it in."""
