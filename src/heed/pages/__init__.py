"""A bot's public info page, from its profile: the sentences (content), their words per language
(en, nb, de, nl, it), the HTML (render) and the published address list (ranges)."""
