"""Nederlands: de zinnen van de infopagina. De plekhouders komen uit het profiel."""
from __future__ import annotations

from heed.pages.words import Words

NAME = "Nederlands"

_UNITS = {"second": ("seconde", "seconden"), "minute": ("minuut", "minuten"), "hour": ("uur", "uur"),
          "day": ("dag", "dagen"), "week": ("week", "weken")}

WORDS = Words(
    decimal=",", conj="en", disj="of", units=_UNITS, units_dat=_UNITS,
    nouns={"item": ("item", "items"), "character": ("teken", "tekens"),
           "child_sitemap": ("onderliggende sitemap", "onderliggende sitemaps"),
           "new_page": ("nieuwe pagina", "nieuwe pagina’s"), "page": ("pagina", "pagina’s"),
           "article_page": ("artikelpagina", "artikelpagina’s"), "request": ("verzoek", "verzoeken"),
           "retry": ("keer", "keer"), "redirect": ("doorverwijzing", "doorverwijzingen"),
           "round": ("ronde", "rondes")},
    singular_for_fractions=True,
    weekdays={1: "zondag", 2: "maandag", 3: "dinsdag", 4: "woensdag", 5: "donderdag", 6: "vrijdag",
              7: "zaterdag"},
    every={"second": "elke {n} {unit}", "minute": "elke {n} {unit}", "hour": "elke {n} {unit}",
           "day": "elke {n} {unit}", "week": "elke {n} {unit}",
           "minute_1": "elke minuut", "hour_1": "elk uur", "day_1": "elke dag", "week_1": "elke week"},
    once_every={"second": "één keer per {n} {unit}", "minute": "één keer per {n} {unit}",
                "hour": "één keer per {n} {unit}", "day": "één keer per {n} {unit}",
                "week": "één keer per {n} {unit}",
                "minute_1": "één keer per minuut", "hour_1": "één keer per uur", "day_1": "één keer per dag",
                "week_1": "één keer per week"},
    schedule={
        "once_day": "één keer per dag, om {at}",
        "per_day": "{rounds} per dag, om {at}",
        "per_working_day": "{rounds} per werkdag, om {at}",
        "per_weekend_day": "{rounds} per weekenddag, om {at}",
        "once_week": "één keer per week, op {day} om {at}",
        "per_weekday": "{rounds} op elke {day}, om {at}",
        "per_days": "{rounds} per dag op {days}, om {at}",
        "raw": "volgens het schema {expr} (UTC)",
    },
    hour_list="{hours} uur UTC", time_list="{times} UTC",
)

PHRASES = {
    "title": "{token} — onze crawler",
    "switch_label": "Taal",
    "toc_label": "Op deze pagina",
    "generated": "Deze pagina wordt gemaakt uit de configuratie waarmee {token} draait: elk getal erop is het "
                 "getal dat de crawler gebruikt.",
    # koppen
    "h_who": "Wie we zijn en waarom we langskomen",
    "h_recognise": "Hoe je ons herkent",
    "h_fetch": "Wat we ophalen",
    "h_keep": "Wat we bewaren, en waarom",
    "h_third": "Diensten die voor ons werken",
    "h_published": "Wat er van je inhoud verschijnt",
    "h_never": "Wat we nooit doen",
    "h_pace": "Hoe vaak en hoe snel",
    "h_robots": "Hoe we je robots.txt lezen",
    "h_control": "Ons afremmen of buiten de deur houden",
    "h_stop": "Verwijderen, of stoppen zonder robots.txt",
    "h_contact": "Contact",
    # herkennen
    "l_user_agent": "User-agent",
    "l_token": "robots.txt-token",
    "l_operator": "Wie hem beheert",
    "l_info": "Informatiepagina",
    "l_contact": "Contact",
    "l_origin": "Waar de verzoeken vandaan komen",
    "l_addresses": "Onze adressen",
    "l_rdns": "Reverse DNS",
    "ips_json": "Dezelfde lijst machinaal leesbaar: {link}",
    "rdns": "Elk adres heeft een reverse-DNS-naam, {name}, en die hostnaam wijst terug naar dezelfde adressen.",
    "ua_only": "We gebruiken deze ene user-agent en verbergen ons niet achter een browserstring. Ziet je log een "
               "browser, dan zijn wij dat niet.",
    "not_us": "Zie je een user-agent die zich {token} noemt maar afwijkt van de vorm hierboven, of die zich anders "
              "gedraagt dan hier beschreven? Dan zijn wij dat waarschijnlijk niet. Stuur ons de logregels, dan "
              "zoeken we uit wat er speelt.",
    "verify": "Wil je nagaan of een verzoek van ons kwam? Zoek het adres op, en daarna de naam die je terugkrijgt:",
    # ophalen en bewaren
    "f_feed": "Je publieke RSS- of Atom-feed: hooguit {items} per keer lezen.",
    "f_feed_only": "Uit een feed openen we alleen de adressen die erin staan, en we volgen geen links binnen je site.",
    "k_feed": "Van elk item in de feed: de titel, de link en de datum, en hooguit {chars} van de samenvatting.",
    "k_feed_no_summary": "Van elk item in de feed: de titel, de link en de datum.",
    "f_article_short": "Verder niets zolang de feed volstaat: de pagina van een artikel alleen als je feed een "
                       "samenvatting geeft van minder dan {chars}.",
    "f_article_selected": "Voor de items waarover we schrijven: de artikelpagina waar de feed naar linkt.",
    "f_article_once": "Een artikelpagina lezen we één keer en vragen we daarna nooit meer op.",
    "k_article_text": "De tekst van de artikelpagina’s die we openen.",
    "k_article_read": "Van een artikelpagina bewaren we de titel en het adres; de tekst lezen we, maar bewaren we "
                      "niet.",
    "k_tdmrep": "Is er een voorbehoud voor tekst- en datamining verklaard (TDMRep: een header tdm-reservation: 1, "
                "een meta-tag tdm-reservation, of /.well-known/tdmrep.json), dan bewaren we de tekst niet. "
                "tdmrep.json lezen we hooguit {once} per host, en alleen als robots.txt dat toestaat.",
    "f_page": "De pagina’s die onze klanten hebben toegevoegd: van elk item dat daar staat de titel, de link en "
              "de publicatietijd.",
    "k_page": "Titel, link en publicatietijd van elk item; nooit een auteur, een gebruikersnaam of de tekst van "
              "een bericht.",
    "f_fallback": "Wordt zo’n pagina met JavaScript opgebouwd en levert ze geen items op, dan lezen we in plaats "
                  "daarvan je sitemap.xml (en hooguit {children} daaronder) en halen we de titel op van hooguit "
                  "{pages} onder hetzelfde pad.",
    "f_title_refetch": "Een titel die we al hebben, halen we binnen {d} niet opnieuw op.",
    "f_sitemap": "Je sitemap, en de titels van de pagina’s die erin staan.",
    "f_site_check": "Je startpagina en je icoon: of de site antwoordt, waar hij naartoe doorverwijst en hoe hij "
                    "heet. Meer lezen we niet.",
    "k_site_check": "Of je site antwoordde, waar hij naartoe doorverwees en hoe hij heet; niets van de startpagina "
                    "zelf.",
    "f_subsidy": "We beginnen bij je sitemap en volgen alleen pagina’s waarvan het adres over subsidies gaat: "
                 "het bevat {topics}.",
    "f_compare": "We vergelijken elke pagina met de vorige versie. Is er niets veranderd, dan stopt de verwerking "
                 "daar: een herhaalbezoek kost je één verzoek en verder niets.",
    "k_subsidy": "De tekst van elke subsidiepagina, om te kunnen zien wanneer er iets wijzigt. Klanten krijgen een "
                 "samenvatting van hooguit {chars} met een link naar jouw pagina als bron.",
    "f_agenda": "We beginnen bij je sitemap.xml en volgen alleen de pagina’s over programma of tickets (het adres "
                "bevat {patterns}). We lopen je site niet blind af.",
    "f_structured": "De evenementen lezen we eerst uit de gestructureerde gegevens van de pagina (schema.org).",
    "k_agenda": "Van elk evenement: naam, datum en tijd, locatie, prijs, beschrijving, een afbeelding en de link "
                "naar jouw pagina.",
    # nooit
    "never_get": "Alleen GET-verzoeken: geen formulieren, geen inloggen, geen bestellen, geen zoekfuncties "
                 "afstruinen.",
    "never_js": "Geen JavaScript, geen cookies versturen of bewaren, geen tracking; toestemmingsdialogen worden "
                "niet geladen.",
    "never_paywall": "Alleen pagina’s die voor iedere bezoeker open staan: niets achter een login of een "
                     "betaalmuur.",
    "never_paywall_text": "Alleen pagina’s die voor iedere bezoeker open staan: niets achter een login, en een "
                          "pagina achter een betaalmuur verwerken we nooit, ook niet als de tekst erin staat.",
    "never_personal": "Geen persoonsgegevens buiten wat het openbare item zelf laat zien.",
    # tempo
    "rounds": "{task}: {when}.",
    "task_feed": "Feedrondes",
    "task_page": "Paginarondes",
    "task_sitemap": "Sitemaprondes",
    "task_site_check": "Sitecontrole",
    "task_subsidy": "Subsidierondes",
    "task_agenda": "Agendaronde",
    "feed_interval": "Elke feed lezen we hooguit {once}; is er niets veranderd, dan wordt er niets verstuurd.",
    "site_check_interval": "Elke site controleren we hooguit {once}.",
    "cap_page": "Hooguit {pages} per bron per ronde.",
    "cap_subsidy": "Hooguit {pages} per host per ronde.",
    "cap_agenda": "Hooguit {pages} per site per ronde.",
    "cap_articles": "Hooguit {per} per bron per {window}, en {total} over alle bronnen samen.",
    "min_delay": "Minstens {d} tussen twee verzoeken aan dezelfde host, gerekend van het einde van het ene "
                 "verzoek tot het begin van het volgende.",
    "crawl_delay": "Vraagt je Crawl-delay om langer, dan wachten we zo lang, tot {cap}.",
    "one_per_host": "Nooit twee verzoeken tegelijk aan dezelfde host.",
    "one_at_a_time": "Onze verzoeken gaan één voor één de deur uit: nooit twee verbindingen tegelijk, niet naar jou "
                     "en niet naar iemand anders.",
    "in_flight": "Hooguit {n} tegelijk, over alle sites samen.",
    "spacing": "In een ronde zit er {span} tussen twee pagina’s van dezelfde site.",
    "spacing_fixed": "In een ronde zit er minstens {lo} tussen twee pagina’s van dezelfde site.",
    "conditional": "We sturen If-None-Match en If-Modified-Since mee, dus op een onveranderde pagina antwoord je "
                   "met 304 en verstuur je niets.",
    "challenge": "een controlepagina",
    "stop_today": "Antwoord je met {codes}, dan stoppen we voor de rest van de dag (UTC) met ophalen bij je site.",
    "stop_close": "Wijs je ons af met {codes}, dan stoppen we en markeren we de bron als gesloten: we komen niet "
                  "uit onszelf terug, en we proberen geen andere adressen of namen.",
    "retry_after": "Een Retry-After-header die om langer vraagt, volgen we.",
    "retries": "Na een serverfout of een time-out proberen we het dezelfde dag nog hooguit {n}, de eerste keer "
               "na {backoff}, daarna telkens twee keer zo lang later.",
    "retry_once": "Na een serverfout of een time-out proberen we het dezelfde dag nog één keer, na {backoff}.",
    "no_retries": "Na een serverfout of een time-out proberen we het die dag niet opnieuw.",
    "redirects": "Een doorverwijzing volgen we als een nieuw verzoek: het doel wordt getoetst aan robots.txt en "
                 "krijgt hetzelfde tempo als elk ander adres. We volgen hooguit {n} achter elkaar.",
    # robots
    "robots_first": "We lezen je robots.txt voordat we iets anders van een host ophalen, en halen niets op wat "
                    "daarin voor ons dicht staat.",
    "robots_group": "We volgen de groep die {token} noemt (hoofdletters maken niet uit) als je die hebt, anders de "
                    "groep voor *. Disallow en Allow werken zoals RFC 9309 zegt: de langste passende regel wint, bij "
                    "gelijke lengte wint Allow, en * en $ werken als jokertekens.",
    "robots_host": "Alles geldt per host. Elk subdomein heeft een eigen robots.txt nodig: een regel op example.nl "
                   "dekt winkel.example.nl niet.",
    "robots_cache": "We halen robots.txt hooguit {once} per host op en hergebruiken het daartussen, dus een "
                    "wijziging is binnen {ttl} van kracht.",
    "robots_size": "We lezen de eerste {size} van het bestand en volgen hooguit {hops} ernaartoe.",
    "rf_4xx_allow_incl": "Geen robots.txt, of een HTTP 4xx daarop (ook 401 en 403): dat lezen we als geen "
                         "beperkingen.",
    "rf_4xx_deny_incl": "Geen robots.txt, of een HTTP 4xx daarop (ook 401 en 403): dan halen we niets op.",
    "rf_4xx_allow": "Geen robots.txt, of een HTTP 4xx daarop: dat lezen we als geen beperkingen.",
    "rf_4xx_deny": "Geen robots.txt, of een HTTP 4xx daarop: dan halen we niets op.",
    "rf_401_allow": "Weigert je server ons de toegang tot robots.txt (401 of 403), dan lezen we dat als geen "
                    "beperkingen.",
    "rf_401_deny": "Weigert je server ons de toegang tot robots.txt (401 of 403), dan halen we niets op.",
    "rf_5xx_deny": "Kunnen we je robots.txt niet lezen door een serverfout (5xx), dan halen we niets op tot dat "
                   "weer lukt.",
    "rf_5xx_skip_host": "Een serverfout (5xx) op robots.txt lezen we als ‘nu even niet’: dan slaan we de host die "
                        "ronde over.",
    "rf_unreachable_deny": "Is robots.txt helemaal niet bereikbaar (geen antwoord, een verbroken verbinding), dan "
                           "halen we niets op.",
    "rf_unreachable_skip_host": "Is robots.txt helemaal niet bereikbaar, dan slaan we de host die ronde over.",
    "crawl_delay_seconds": "Crawl-delay staat in seconden. We honoreren waarden tot {cap}; alles daarboven "
                           "behandelen we als {cap}.",
    "noindex": "noindex en nofollow, in een robots-meta-tag of in een X-Robots-Tag-header: we bewaren de pagina "
               "dan niet en volgen de links niet.",
    # afremmen
    "example_path": "/prive/",
    "control_all": "Via je robots.txt, in de root van elke host. Helemaal buiten de deur:",
    "control_path": "Of alleen een deel, bijvoorbeeld {path}:",
    "control_slow": "Of een rustiger tempo in plaats van een dichte deur, met een Crawl-delay in seconden (we "
                    "honoreren tot {cap}):",
    "control_when": "Een wijziging is binnen {ttl} van kracht, de volgende keer dat we het bestand lezen.",
    # stoppen
    "stop_mail": "Mail {contact}. Een verzoek om te stoppen voeren we uit, ook als je robots.txt ongemoeid laat: "
                 "we zetten je domein, met zijn subdomeinen, op onze blokkeerlijst. Daar hoeft geen discussie aan "
                 "vooraf te gaan.",
    "stop_form": "Gebruik ons contactformulier, {contact}. Een verzoek om te stoppen voeren we uit, ook als je "
                 "robots.txt ongemoeid laat: we zetten je domein, met zijn subdomeinen, op onze blokkeerlijst. Daar "
                 "hoeft geen discussie aan vooraf te gaan.",
    "stop_delete": "Op verzoek verwijderen we alles wat we van je domein hebben bewaard.",
    # contact
    "contact_intro": "Vragen, of gedraagt onze crawler zich niet zoals hier staat? Mail {contact}. Het helpt als je "
                     "dit meestuurt:",
    "contact_intro_form": "Vragen, of gedraagt onze crawler zich niet zoals hier staat? Gebruik ons "
                          "contactformulier, {contact}. Het helpt als je dit meestuurt:",
    "send_host": "het domein of de hostnaam waar het om gaat;",
    "send_when": "de datum en het tijdstip van de verzoeken, met de tijdzone;",
    "send_lines": "een paar regels uit je log, met het pad en de user-agent;",
    "send_want": "wat je wilt: afremmen, een deel afschermen, of helemaal geen bezoek meer.",
    "privacy": "Hoe we met gegevens omgaan: {link}",
    # AI-voorkeuren (AIPREF) en ondertekende verzoeken (Web Bot Auth)
    "h_usage": "Waarvoor we het gebruiken",
    "usage_intro": "Wat we doen met wat we lezen, in de termen van het vocabulaire voor AI-voorkeuren (AIPREF) dat "
                   "sites gebruiken in robots.txt en in de Content-Usage-header:",
    "u_search": "{label}: we wijzen mensen de weg naar je pagina: wat we tonen, linkt ernaar terug.",
    "u_ai_use": "{label}: een AI-systeem werkt met de tekst (een taalmodel dat samenvat, gegevens eruit haalt of "
                "helpt schrijven), zonder erop getraind te worden.",
    "u_train_ai": "{label}: met de tekst wordt een AI-model getraind.",
    "usage_not": "We gebruiken het niet voor {uses}.",
    "usage_refused": "Zegt een Content-Usage-regel in je robots.txt (in de groep die voor ons geldt, het langste "
                     "passende pad) of de Content-Usage-header van een pagina n tegen een van deze toepassingen, "
                     "dan bewaren we niets van die pagina en volgen we er niets vandaan.",
    "usage_site_check": "Onze controle van je site legt dan alleen vast of die antwoordde en waarheen hij "
                        "doorverwees; niet de naam, en het icoon halen we niet op.",
    "robots_usage": "Content-Usage-regels (AIPREF) lezen we uit de groep die voor ons geldt; ze veranderen niets "
                    "aan Allow, Disallow of Crawl-delay.",
    "control_usage": "Wil je dat we je pagina's lezen, maar niet voor een van deze doelen gebruiken? Zet dan een "
                     "Content-Usage-regel bij de regels die al voor ons gelden (een nieuwe groep voor {token} zou "
                     "voor ons de *-groep vervangen):",
    "l_signature": "Ondertekende verzoeken",
    "sig_row": "Web Bot Auth (RFC 9421), sleutel-ID {keyid}",
    "sig_verify": "Elk verzoek dat we sturen, ook dat voor robots.txt, draagt een HTTP-berichthandtekening (Web "
                  "Bot Auth, RFC 9421) met Signature-Agent {agent} en sleutel-ID {keyid}. Om er een te "
                  "controleren haal je onze publieke sleutels op bij {directory} (die sleutellijst is met dezelfde "
                  "sleutel ondertekend) en controleer je de Signature-header van het verzoek daartegen. Een "
                  "verzoek dat onze naam draagt zonder geldige handtekening, is niet van ons.",
    "sig_or_rdns": "Zonder handtekeningen te controleren vertelt de adrescontrole hierboven je hetzelfde: een "
                   "verzoek van ons komt van een van onze adressen, en de reverse-DNS-naam daarvan wijst ernaar "
                   "terug.",
    "sig_or_ips": "Zonder handtekeningen te controleren vergelijk je het adres van het verzoek met de lijst op "
                  "{link}.",
}
