"""A bot's public info page, from its profile: the sentences (content), their words per language
(language: one data file each in languages/, or the bot's own), the HTML (render) and the
published address list (ranges)."""
