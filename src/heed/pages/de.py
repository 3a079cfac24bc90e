"""Deutsch: die Sätze der Infoseite. Die Platzhalter kommen aus dem Profil.

Nach "von", "nach" und "bis zu" steht der Dativ: dafür gibt es die Platzhalter mit `_dat`."""
from __future__ import annotations

from heed.pages.words import Words

NAME = "Deutsch"

WORDS = Words(
    decimal=",", conj="und", disj="oder",
    units={"second": ("Sekunde", "Sekunden"), "minute": ("Minute", "Minuten"), "hour": ("Stunde", "Stunden"),
           "day": ("Tag", "Tage"), "week": ("Woche", "Wochen")},
    units_dat={"second": ("Sekunde", "Sekunden"), "minute": ("Minute", "Minuten"), "hour": ("Stunde", "Stunden"),
               "day": ("Tag", "Tagen"), "week": ("Woche", "Wochen")},
    nouns={"item": ("Eintrag", "Einträge"), "character": ("Zeichen", "Zeichen"),
           "child_sitemap": ("untergeordnete Sitemap", "untergeordnete Sitemaps"),
           "new_page": ("neue Seite", "neue Seiten"), "page": ("Seite", "Seiten"),
           "article_page": ("Artikelseite", "Artikelseiten"), "request": ("Anfrage", "Anfragen"),
           "retry": ("weiteres Mal", "weitere Male"), "redirect": ("Weiterleitung", "Weiterleitungen"),
           "round": ("Runde", "Runden")},
    singular_for_fractions=False,
    weekdays={1: "Sonntag", 2: "Montag", 3: "Dienstag", 4: "Mittwoch", 5: "Donnerstag", 6: "Freitag",
              7: "Samstag"},
    every={"second": "alle {n} {unit}", "minute": "alle {n} {unit}", "hour": "alle {n} {unit}",
           "day": "alle {n} {unit}", "week": "alle {n} {unit}",
           "minute_1": "jede Minute", "hour_1": "jede Stunde", "day_1": "jeden Tag", "week_1": "jede Woche"},
    once_every={"second": "einmal alle {n} {unit}", "minute": "einmal alle {n} {unit}",
                "hour": "einmal alle {n} {unit}", "day": "einmal alle {n} {unit}", "week": "einmal alle {n} {unit}",
                "minute_1": "einmal pro Minute", "hour_1": "einmal pro Stunde", "day_1": "einmal am Tag",
                "week_1": "einmal pro Woche"},
    schedule={
        "once_day": "einmal am Tag, um {at}",
        "per_day": "{rounds} am Tag, um {at}",
        "per_working_day": "{rounds} pro Werktag, um {at}",
        "per_weekend_day": "{rounds} pro Tag am Wochenende, um {at}",
        "once_week": "einmal pro Woche, am {day} um {at}",
        "per_weekday": "{rounds} an jedem {day}, um {at}",
        "per_days": "{rounds} am Tag, jeweils am {days}, um {at}",
        "raw": "nach dem Zeitplan {expr} (UTC)",
    },
    hour_list="{hours} Uhr UTC", time_list="{times} Uhr UTC",
)

PHRASES = {
    "title": "{token}: unser Crawler",
    "switch_label": "Sprache",
    "toc_label": "Auf dieser Seite",
    "generated": "Diese Seite wird aus der Konfiguration erzeugt, mit der {token} läuft: Jede Zahl darauf ist die, "
                 "mit der der Crawler arbeitet.",
    # Überschriften
    "h_who": "Wer wir sind und warum wir kommen",
    "h_recognise": "Woran Sie uns erkennen",
    "h_fetch": "Was wir abrufen",
    "h_keep": "Was wir behalten, und warum",
    "h_third": "Dienste, die für uns arbeiten",
    "h_published": "Was aus Ihren Inhalten veröffentlicht wird",
    "h_never": "Was wir nie tun",
    "h_pace": "Wie oft und wie schnell",
    "h_robots": "Wie wir Ihre robots.txt lesen",
    "h_control": "Wie Sie uns bremsen oder aussperren",
    "h_stop": "Löschen, oder ein Stopp ohne robots.txt",
    "h_contact": "Kontakt",
    # erkennen
    "l_user_agent": "Kennung (User-Agent)",
    "l_token": "robots.txt-Token",
    "l_operator": "Betreiber",
    "l_info": "Diese Seite",
    "l_contact": "Kontakt",
    "l_origin": "Woher er kommt",
    "l_addresses": "Unsere Adressen",
    "l_rdns": "Reverse DNS",
    "ips_json": "Dieselbe Liste maschinenlesbar: {link}",
    "rdns": "Jede Adresse hat den Reverse-DNS-Namen {name}, und dieser Name zeigt wieder auf dieselben Adressen.",
    "ua_only": "Wir verwenden nur diese eine Kennung und geben uns nie als Browser aus: Steht in Ihrem Log ein "
               "Browser, dann sind wir das nicht.",
    "not_us": "Eine Kennung, die sich {token} nennt, aber von der obigen abweicht oder sich anders verhält als hier "
              "beschrieben, sind wahrscheinlich nicht wir. Schicken Sie uns die Logzeilen, wir gehen dem nach.",
    "verify": "Ob eine Anfrage von uns kam, prüfen Sie, indem Sie ihre Adresse nachschlagen und dann den Namen, den "
              "Sie zurückbekommen:",
    # abrufen und behalten
    "f_feed": "Ihr öffentlicher RSS- oder Atom-Feed: höchstens {items} pro Abruf.",
    "f_feed_only": "Aus einem Feed öffnen wir nur die Adressen, die er veröffentlicht, und folgen keinem Link "
                   "innerhalb Ihrer Website.",
    "k_feed": "Von jedem Eintrag des Feeds: Überschrift, Link und Datum, und höchstens {chars} seiner "
              "Zusammenfassung.",
    "k_feed_no_summary": "Von jedem Eintrag des Feeds: Überschrift, Link und Datum.",
    "f_article_short": "Sonst nichts, solange der Feed genügt: die Seite eines Artikels nur, wenn Ihr Feed eine "
                       "Zusammenfassung mit weniger als {chars} liefert.",
    "f_article_selected": "Für Meldungen, über die wir schreiben, die Artikelseite, auf die der Feed verweist.",
    "f_article_once": "Eine Artikelseite lesen wir einmal und fragen sie danach nie wieder ab.",
    "k_article_text": "Den Text der Artikelseiten, die wir öffnen.",
    "k_article_read": "Von einer Artikelseite behalten wir Titel und Adresse; ihren Text lesen wir, speichern ihn "
                      "aber nicht.",
    "k_tdmrep": "Wo ein Nutzungsvorbehalt für Text- und Data-Mining erklärt ist (TDMRep: ein Header "
                "tdm-reservation: 1, ein Meta-Tag tdm-reservation oder /.well-known/tdmrep.json), übernehmen wir "
                "den Text nicht. tdmrep.json lesen wir höchstens {once} pro Host, und nur, wo robots.txt es "
                "erlaubt.",
    "f_page": "Die Seiten, die unsere Kunden eingetragen haben: von jedem dort gelisteten Eintrag Titel, Link und "
              "Veröffentlichungszeit.",
    "k_page": "Titel, Link und Veröffentlichungszeit jedes Eintrags; nie einen Autor, einen Benutzernamen oder den "
              "Text eines Beitrags.",
    "f_fallback": "Wird eine solche Seite mit JavaScript aufgebaut und liefert keine Einträge, lesen wir stattdessen "
                  "Ihre sitemap.xml (und höchstens {children} darunter) und höchstens {pages} unter demselben "
                  "Pfad, von diesen nur den Titel.",
    "f_title_refetch": "Einen Titel, den wir schon haben, rufen wir innerhalb von {d_dat} nicht noch einmal ab.",
    "f_sitemap": "Ihre Sitemap und die Titel der Seiten, die sie nennt.",
    "f_site_check": "Ihre Startseite und Ihr Icon: ob die Website erreichbar ist, wohin sie weiterleitet und wie "
                    "sie heißt. Mehr lesen wir nicht.",
    "k_site_check": "Ob Ihre Website antwortete, wohin sie weiterleitete und wie sie heißt; nichts vom Inhalt der "
                    "Startseite.",
    "f_subsidy": "Wir beginnen bei Ihrer Sitemap und folgen nur Seiten, deren Adresse von Förderungen handelt: "
                 "sie enthält {topics}.",
    "f_compare": "Jede Seite vergleichen wir mit ihrer vorigen Fassung. Hat sich nichts geändert, endet die "
                 "Verarbeitung dort: Ein erneuter Besuch kostet Sie eine Anfrage und sonst nichts.",
    "k_subsidy": "Den Text jeder Förderseite, um zu sehen, wann sich etwas ändert. Unsere Kunden bekommen eine "
                 "Zusammenfassung von höchstens {chars} mit einem Link auf Ihre Seite als Quelle.",
    "f_agenda": "Wir beginnen bei Ihrer sitemap.xml und folgen nur den Seiten über Programm oder Tickets (die "
                "Adresse enthält {patterns}). Wir durchsuchen Ihre Website nicht blind.",
    "f_structured": "Die Veranstaltungen lesen wir zuerst aus den strukturierten Daten der Seite (schema.org).",
    "k_agenda": "Von jeder Veranstaltung: Name, Datum und Uhrzeit, Ort, Preis, Beschreibung, ein Bild und der Link "
                "auf Ihre Seite.",
    # nie
    "never_get": "Nur GET-Anfragen: keine Formulare, keine Anmeldung, keine Bestellungen, keine Suchfunktionen.",
    "never_js": "Kein JavaScript, keine Cookies, kein Tracking; Einwilligungsdialoge werden nicht geladen.",
    "never_paywall": "Nur Seiten, die jedem Besucher offenstehen: nichts hinter einer Anmeldung oder einer "
                     "Bezahlschranke.",
    "never_paywall_text": "Nur Seiten, die jedem Besucher offenstehen: nichts hinter einer Anmeldung, und eine Seite "
                          "hinter einer Bezahlschranke werten wir nie aus, auch wenn sie ihren Text mitliefert.",
    "never_personal": "Keine personenbezogenen Daten über das hinaus, was die öffentliche Meldung selbst zeigt.",
    # Tempo
    "rounds": "{task}: {when}.",
    "task_feed": "Feed-Runden",
    "task_page": "Seiten-Runden",
    "task_sitemap": "Sitemap-Runden",
    "task_site_check": "Website-Prüfung",
    "task_subsidy": "Förder-Runden",
    "task_agenda": "Programm-Runde",
    "feed_interval": "Jeden Feed lesen wir höchstens {once}; hat sich nichts geändert, wird nichts übertragen.",
    "site_check_interval": "Jede Website prüfen wir höchstens {once}.",
    "cap_page": "Höchstens {pages} pro Quelle und Runde.",
    "cap_subsidy": "Höchstens {pages} pro Host und Runde.",
    "cap_agenda": "Höchstens {pages} pro Website und Runde.",
    "cap_articles": "Höchstens {per} pro Quelle und {window}, und {total} über alle Quellen zusammen.",
    "min_delay": "Mindestens {d} zwischen zwei Anfragen an denselben Host, gezählt vom Ende der einen Anfrage bis "
                 "zum Beginn der nächsten.",
    "crawl_delay": "Verlangt Ihr Crawl-delay mehr, warten wir so lange, bis zu {cap_dat}.",
    "one_per_host": "Nie zwei Anfragen gleichzeitig an denselben Host.",
    "one_at_a_time": "Unsere Anfragen gehen einzeln hinaus: nie zwei Verbindungen gleichzeitig, weder zu Ihnen noch "
                     "zu sonst jemandem.",
    "in_flight": "Höchstens {n} gleichzeitig, über alle Websites zusammen.",
    "spacing": "In einer Runde liegen {span} zwischen zwei Seiten derselben Website.",
    "spacing_fixed": "In einer Runde liegen mindestens {lo} zwischen zwei Seiten derselben Website.",
    "conditional": "Wir senden If-None-Match und If-Modified-Since mit: Auf eine unveränderte Seite antworten Sie "
                   "mit 304 und übertragen nichts.",
    "challenge": "einer Prüfseite",
    "stop_today": "Antworten Sie mit {codes}, hören wir für den Rest des Tages (UTC) auf, bei Ihnen abzurufen.",
    "stop_close": "Wenn Sie uns abweisen (mit {codes}), hören wir auf und vermerken die Quelle als geschlossen: Wir "
                  "kommen nicht von selbst zurück, und andere Adressen oder Kennungen probieren wir nicht.",
    "retry_after": "Einen Retry-After-Header, der um mehr Zeit bittet, beachten wir.",
    "retries": "Nach einem Serverfehler oder einer Zeitüberschreitung versuchen wir es am selben Tag höchstens "
               "{n}, zuerst nach {backoff_dat}, danach jedes Mal doppelt so spät.",
    "retry_once": "Nach einem Serverfehler oder einer Zeitüberschreitung versuchen wir es am selben Tag noch einmal, "
                  "nach {backoff_dat}.",
    "no_retries": "Nach einem Serverfehler oder einer Zeitüberschreitung versuchen wir es an diesem Tag nicht noch "
                  "einmal.",
    "redirects": "Einer Weiterleitung folgen wir als neuer Anfrage: Das Ziel wird gegen robots.txt geprüft und "
                 "wie jede andere Adresse getaktet. Wir folgen höchstens {n} hintereinander.",
    # robots
    "robots_first": "Wir lesen Ihre robots.txt, bevor wir irgendetwas anderes von einem Host abrufen, und rufen "
                    "nichts ab, was sie für uns sperrt.",
    "robots_group": "Wir folgen der Gruppe, die {token} nennt (Groß- und Kleinschreibung egal), wenn es sie gibt, "
                    "sonst der Gruppe für *. Disallow und Allow gelten wie in RFC 9309: Die längste passende Regel "
                    "gewinnt, bei Gleichstand gewinnt Allow, und * und $ wirken als Platzhalter.",
    "robots_host": "Alles gilt pro Host: Jede Subdomain braucht ihre eigene robots.txt, eine Regel auf example.de "
                   "gilt also nicht für shop.example.de.",
    "robots_cache": "Wir rufen die robots.txt höchstens {once} pro Host ab und verwenden sie dazwischen weiter; "
                    "eine Änderung wirkt also innerhalb von {ttl_dat}.",
    "robots_size": "Wir lesen die ersten {size} der Datei und folgen höchstens {hops} zu ihr.",
    "rf_4xx_allow_incl": "Keine robots.txt, oder ein HTTP 4xx darauf (auch 401 und 403): Für uns heißt das, "
                         "es gibt keine Einschränkungen.",
    "rf_4xx_deny_incl": "Keine robots.txt, oder ein HTTP 4xx darauf (auch 401 und 403): Dann rufen wir nichts ab.",
    "rf_4xx_allow": "Keine robots.txt, oder ein HTTP 4xx darauf: Für uns heißt das, es gibt keine Einschränkungen.",
    "rf_4xx_deny": "Keine robots.txt, oder ein HTTP 4xx darauf: Dann rufen wir nichts ab.",
    "rf_401_allow": "Verweigert Ihr Server den Zugriff auf die robots.txt (401 oder 403), heißt das für uns, es gibt "
                    "keine Einschränkungen.",
    "rf_401_deny": "Verweigert Ihr Server den Zugriff auf die robots.txt (401 oder 403), rufen wir nichts ab.",
    "rf_5xx_deny": "Antwortet die robots.txt mit einem Serverfehler (5xx), rufen wir nichts ab, bis wir sie lesen "
                   "können.",
    "rf_5xx_skip_host": "Einen Serverfehler (5xx) auf der robots.txt lesen wir als „gerade nicht“: Dann lassen wir "
                        "den Host in dieser Runde aus.",
    "rf_unreachable_deny": "Ist die robots.txt gar nicht erreichbar (keine Antwort, eine abgebrochene Verbindung), "
                           "rufen wir nichts ab.",
    "rf_unreachable_skip_host": "Ist die robots.txt gar nicht erreichbar, lassen wir den Host in dieser Runde aus.",
    "crawl_delay_seconds": "Crawl-delay lesen wir in Sekunden. Wir beachten Werte bis zu {cap_dat}; alles darüber "
                           "behandeln wir wie {cap}.",
    "noindex": "noindex und nofollow, in einem robots-Meta-Tag oder einem X-Robots-Tag-Header: Dann behalten wir "
               "die Seite nicht und folgen ihren Links nicht.",
    # bremsen
    "example_path": "/privat/",
    "control_all": "Mit Ihrer robots.txt, im Wurzelverzeichnis jedes Hosts. Um uns ganz auszusperren, genügt das "
                   "hier; wir lesen es und gehen:",
    "control_path": "Nur einen Teil sperren, zum Beispiel {path}:",
    "control_slow": "Bremsen statt sperren, mit einem Crawl-delay in Sekunden (wir beachten bis zu {cap_dat}):",
    "control_when": "Eine Änderung wirkt innerhalb von {ttl_dat}, beim nächsten Lesen der Datei.",
    # Stopp
    "stop_mail": "Schreiben Sie an {contact}. Eine Bitte, aufzuhören, setzen wir um, auch wenn Ihre robots.txt "
                 "bleibt, wie sie ist: Wir setzen Ihre Domain mit ihren Subdomains auf unsere Sperrliste. Einer "
                 "Diskussion bedarf es dafür nicht.",
    "stop_form": "Schreiben Sie uns über das Kontaktformular, {contact}. Eine Bitte, aufzuhören, setzen wir um, auch "
                 "wenn Ihre robots.txt bleibt, wie sie ist: Wir setzen Ihre Domain mit ihren Subdomains auf unsere "
                 "Sperrliste. Einer Diskussion bedarf es dafür nicht.",
    "stop_delete": "Auf Wunsch löschen wir alles, was wir von Ihrer Domain gespeichert haben.",
    # Kontakt
    "contact_intro": "Fragen, oder verhält sich unser Crawler anders als hier beschrieben? Schreiben Sie an "
                     "{contact}. Es hilft, wenn Sie uns schicken:",
    "contact_intro_form": "Fragen, oder verhält sich unser Crawler anders als hier beschrieben? Schreiben Sie uns "
                          "über das Kontaktformular, {contact}. Es hilft, wenn Sie uns schicken:",
    "send_host": "die betroffene Domain oder den Hostnamen;",
    "send_when": "Datum und Uhrzeit der Anfragen, mit Zeitzone;",
    "send_lines": "ein paar Zeilen aus Ihrem Log, mit Pfad und User-Agent;",
    "send_want": "was Sie möchten: langsamer, einen Teil sperren, oder gar keine Besuche mehr.",
    "privacy": "Wie wir mit Daten umgehen: {link}",
    # KI-Präferenzen (AIPREF) und signierte Anfragen (Web Bot Auth)
    "h_usage": "Wofür wir es verwenden",
    "usage_intro": "Was wir mit dem Gelesenen tun, in den Begriffen des Vokabulars für KI-Präferenzen (AIPREF), "
                   "das Websites in der robots.txt und im Content-Usage-Header verwenden:",
    "u_search": "{label}: Wir führen Menschen zu Ihrer Seite: Was wir zeigen, verlinkt auf sie.",
    "u_ai_use": "{label}: Ein KI-System arbeitet mit dem Text (ein Sprachmodell, das zusammenfasst, Angaben "
                "herausliest oder beim Schreiben hilft), ohne damit trainiert zu werden.",
    "u_train_ai": "{label}: Mit dem Text wird ein KI-Modell trainiert.",
    "usage_not": "Wir verwenden es nicht für {uses}.",
    "usage_refused": "Sagt eine Content-Usage-Zeile in Ihrer robots.txt (in der Gruppe, die für uns gilt, der "
                     "längste passende Pfad) oder der Content-Usage-Header einer Seite n zu einer dieser "
                     "Verwendungen, behalten wir nichts von dieser Seite und folgen von dort nichts.",
    "usage_site_check": "Unsere Prüfung Ihrer Website hält dann nur fest, ob sie antwortete und wohin sie "
                        "weiterleitete; nicht ihren Namen, und das Icon rufen wir nicht ab.",
    "robots_usage": "Content-Usage-Zeilen (AIPREF) lesen wir aus der Gruppe, die für uns gilt; sie ändern nichts "
                    "an Allow, Disallow oder Crawl-delay.",
    "control_usage": "Damit wir Ihre Seiten lesen, aber nicht für einen dieser Zwecke verwenden, fügen Sie eine "
                     "Content-Usage-Zeile dort ein, wo die für uns geltenden Regeln schon stehen (eine neue Gruppe "
                     "für {token} würde für uns die *-Gruppe ersetzen):",
    "l_signature": "Signierte Anfragen",
    "sig_row": "Web Bot Auth (RFC 9421), Schlüssel-ID {keyid}",
    "sig_verify": "Jede Anfrage, die wir senden, auch die nach robots.txt, trägt eine HTTP-Nachrichtensignatur "
                  "(Web Bot Auth, RFC 9421) mit Signature-Agent {agent} und Schlüssel-ID {keyid}. Zum Prüfen holen "
                  "Sie unsere öffentlichen Schlüssel von {directory} (das Verzeichnis ist mit demselben Schlüssel "
                  "signiert) und prüfen damit den Signature-Header der Anfrage. Eine Anfrage, die sich als wir "
                  "ausgibt, aber keine gültige Signatur trägt, stammt nicht von uns.",
    "sig_or_rdns": "Ohne Signaturprüfung sagt Ihnen die Adressprüfung oben dasselbe: Eine Anfrage von uns kommt "
                   "von einer unserer Adressen, und ihr Reverse-DNS-Name zeigt auf sie zurück.",
    "sig_or_ips": "Ohne Signaturprüfung vergleichen Sie die Adresse der Anfrage mit der Liste unter {link}.",
}
