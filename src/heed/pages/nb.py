"""Norsk bokmål: setningene på informasjonssiden. Plassholderne kommer fra profilen."""
from __future__ import annotations

from heed.pages.words import Words

NAME = "Norsk"

_UNITS = {"second": ("sekund", "sekunder"), "minute": ("minutt", "minutter"), "hour": ("time", "timer"),
          "day": ("døgn", "døgn"), "week": ("uke", "uker")}

WORDS = Words(
    decimal=",", conj="og", disj="eller", units=_UNITS, units_dat=_UNITS,
    nouns={"item": ("sak", "saker"), "character": ("tegn", "tegn"),
           "child_sitemap": ("underliggende nettkart", "underliggende nettkart"),
           "new_page": ("ny side", "nye sider"), "page": ("side", "sider"),
           "article_page": ("artikkelside", "artikkelsider"), "request": ("forespørsel", "forespørsler"),
           "retry": ("gang til", "ganger til"), "redirect": ("viderekobling", "viderekoblinger"),
           "round": ("runde", "runder")},
    singular_for_fractions=False,
    weekdays={1: "søndag", 2: "mandag", 3: "tirsdag", 4: "onsdag", 5: "torsdag", 6: "fredag", 7: "lørdag"},
    # Norwegian counts intervals with an ordinal and the singular: "hvert 15. minutt".
    every={"second": "hvert {n}. sekund", "minute": "hvert {n}. minutt", "hour": "hver {n}. time",
           "day": "hvert {n}. døgn", "week": "hver {n}. uke",
           "minute_1": "hvert minutt", "hour_1": "hver time", "hour_24": "hvert døgn", "day_1": "hvert døgn",
           "week_1": "hver uke"},
    once_every={"second": "én gang hvert {n}. sekund", "minute": "én gang hvert {n}. minutt",
                "hour": "én gang hver {n}. time", "day": "én gang hvert {n}. døgn", "week": "én gang hver {n}. uke",
                "minute_1": "én gang i minuttet", "hour_1": "én gang i timen", "hour_24": "én gang i døgnet",
                "day_1": "én gang i døgnet", "week_1": "én gang i uka"},
    schedule={
        "once_day": "én gang i døgnet, klokka {at}",
        "per_day": "{rounds} i døgnet, klokka {at}",
        "per_working_day": "{rounds} per arbeidsdag, klokka {at}",
        "per_weekend_day": "{rounds} per helgedag, klokka {at}",
        "once_week": "én gang i uka, på {day} klokka {at}",
        "per_weekday": "{rounds} hver {day}, klokka {at}",
        "per_days": "{rounds} i døgnet på {days}, klokka {at}",
        "raw": "etter tidsplanen {expr} (UTC)",
    },
    hour_list="{hours} UTC", time_list="{times} UTC",
)

PHRASES = {
    "title": "{token}: roboten vår",
    "switch_label": "Språk",
    "toc_label": "På denne siden",
    "generated": "Denne siden lages ut fra oppsettet {token} kjører med: hvert tall på den er det roboten faktisk "
                 "bruker.",
    # overskrifter
    "h_who": "Hvem vi er, og hvorfor vi kommer",
    "h_recognise": "Slik kjenner du oss igjen",
    "h_fetch": "Hva vi henter",
    "h_keep": "Hva vi tar vare på, og hvorfor",
    "h_third": "Tjenester som arbeider for oss",
    "h_published": "Hva som publiseres fra innholdet ditt",
    "h_never": "Hva vi aldri gjør",
    "h_pace": "Hvor ofte og hvor fort",
    "h_robots": "Slik leser vi robots.txt",
    "h_control": "Slik sier nettstedet ditt nei, eller «saktere»",
    "h_stop": "Sletting, eller stopp uten å røre robots.txt",
    "h_contact": "Kontakt",
    # kjenne igjen
    "l_user_agent": "User-Agent",
    "l_token": "Navn i robots.txt",
    "l_operator": "Drives av",
    "l_info": "Denne siden",
    "l_contact": "Kontakt",
    "l_origin": "Hvor forespørslene kommer fra",
    "l_addresses": "Adressene våre",
    "l_rdns": "Omvendt DNS",
    "ips_json": "Den samme lista, maskinlesbar: {link}",
    "rdns": "Hver adresse har det omvendte DNS-navnet {name}, og det navnet peker tilbake til de samme adressene.",
    "ua_only": "Vi bruker bare denne ene User-Agenten og gjemmer oss aldri bak en nettleserstreng: ser du en "
               "nettleser i loggen, er det ikke oss.",
    "not_us": "En User-Agent som kaller seg {token}, men som avviker fra den over, eller som oppfører seg "
              "annerledes enn beskrevet her, er trolig ikke oss. Send oss logglinjene, så finner vi ut av det.",
    "verify": "Vil du sjekke at en forespørsel kom fra oss, slår du opp adressen og deretter navnet du får tilbake:",
    # hente og lagre
    "f_feed": "Den offentlige RSS- eller Atom-feeden din: høyst {items} hver gang vi leser den.",
    "f_feed_only": "Fra en feed åpner vi bare adressene den har publisert, og vi følger ingen lenker inne på "
                   "nettstedet ditt.",
    "k_feed": "Fra hver sak i feeden: tittel, lenke og dato, og høyst {chars} av sammendraget.",
    "k_feed_no_summary": "Fra hver sak i feeden: tittel, lenke og dato.",
    "f_article_short": "Ikke noe mer så lenge feeden holder: siden til en artikkel bare når feeden gir et sammendrag "
                       "på under {chars}.",
    "f_article_selected": "For saker vi skriver om: artikkelsiden feeden lenker til.",
    "f_article_once": "En artikkelside leses én gang og hentes aldri igjen.",
    "k_article_text": "Teksten på artikkelsidene vi åpner.",
    "k_article_read": "Fra en artikkelside tar vi vare på tittelen og adressen; teksten leses, men lagres ikke.",
    "k_tdmrep": "Der det er tatt forbehold mot tekst- og datautvinning (TDMRep: en header tdm-reservation: 1, en "
                "meta-tag tdm-reservation eller /.well-known/tdmrep.json), tar vi ikke vare på teksten. tdmrep.json "
                "leser vi høyst {once} per vert, og bare der robots.txt tillater det.",
    "f_page": "Sidene kundene våre har lagt inn: tittel, lenke og publiseringstid for sakene på siden. Mer henter vi "
              "ikke.",
    "k_page": "Tittel, lenke og publiseringstid for hver sak; aldri forfatter, brukernavn eller innleggstekst.",
    "f_fallback": "Bygges siden med JavaScript og gir ingen saker, leser vi i stedet nettstedets sitemap.xml (og "
                  "høyst {children} under det) og henter tittelen fra høyst {pages} under samme sti.",
    "f_title_refetch": "En tittel vi alt har hentet, hentes ikke på nytt innen {d}.",
    "f_sitemap": "Nettkartet ditt, og titlene på sidene det viser til.",
    "f_site_check": "Forsiden og ikonet ditt: om nettstedet svarer, hvor det videresender og hva det heter. Mer "
                    "leser vi ikke.",
    "k_site_check": "Om nettstedet svarte, hvor det videresendte og hva det heter; ingenting av selve forsiden.",
    "f_subsidy": "Vi begynner i nettkartet ditt og følger bare sider der adressen handler om tilskudd: den "
                 "inneholder {topics}.",
    "f_compare": "Hver side sammenlignes med forrige versjon. Har ingenting endret seg, stopper behandlingen der: et "
                 "nytt besøk koster deg én forespørsel og ikke noe mer.",
    "k_subsidy": "Teksten på hver tilskuddsside, for å se når noe endrer seg. Kundene våre får et sammendrag på høyst "
                 "{chars} med en lenke til siden din som kilde.",
    "f_agenda": "Vi begynner i sitemap.xml og følger bare sidene om program eller billetter (adressen inneholder "
                "{patterns}). Vi går ikke blindt gjennom nettstedet ditt.",
    "f_structured": "Arrangementene leses først fra sidens strukturerte data (schema.org).",
    "k_agenda": "For hvert arrangement: navn, dato og tid, sted, pris, beskrivelse, ett bilde og lenken til siden din.",
    # aldri
    "never_get": "Bare GET-forespørsler: ingen skjemaer, ingen innlogging, ingen bestillinger, ingen søk på "
                 "nettstedet.",
    "never_js": "Ingen JavaScript, ingen informasjonskapsler sendt eller lagret, ingen sporing; samtykkedialoger "
                "lastes ikke.",
    "never_paywall": "Bare sider som er åpne for alle besøkende: ingenting bak innlogging eller betalingsmur.",
    "never_paywall_text": "Bare sider som er åpne for alle besøkende: ingenting bak innlogging, og en side bak "
                          "betalingsmur hentes aldri ut, selv om teksten ligger i siden.",
    "never_personal": "Ingen personopplysninger utover det den offentlige saken selv viser.",
    # tempo
    "rounds": "{task}: {when}.",
    "task_feed": "Feed-runder",
    "task_page": "Side-runder",
    "task_sitemap": "Nettkart-runder",
    "task_site_check": "Sjekk av nettsteder",
    "task_subsidy": "Tilskuddsrunder",
    "task_agenda": "Programrunde",
    "feed_interval": "Hver feed leses høyst {once}; har ingenting endret seg, sendes ingen data.",
    "site_check_interval": "Hvert nettsted sjekkes høyst {once}.",
    "cap_page": "Høyst {pages} per kilde hver gang.",
    "cap_subsidy": "Høyst {pages} per vert per runde.",
    "cap_agenda": "Høyst {pages} per nettsted per runde.",
    "cap_articles": "Høyst {per} per kilde per {window}, og {total} til sammen for alle kilder.",
    "min_delay": "Minst {d} mellom to forespørsler til samme nettsted, regnet fra slutten av den ene til starten av "
                 "den neste.",
    "crawl_delay": "Har nettstedet en lengre Crawl-delay i robots.txt, følger vi den, opptil {cap}.",
    "one_per_host": "Aldri to forespørsler samtidig til samme nettsted.",
    "one_at_a_time": "Forespørslene går én om gangen: aldri to forbindelser samtidig, verken til deg eller til noen "
                     "andre.",
    "in_flight": "Høyst {n} samtidig, for alle nettsteder til sammen.",
    "spacing": "I en runde går det {span} mellom to sider fra samme nettsted.",
    "spacing_fixed": "I en runde går det minst {lo} mellom to sider fra samme nettsted.",
    "conditional": "Vi sender If-None-Match og If-Modified-Since: er siden uendret, svarer du 304 og sender ingenting.",
    "challenge": "en kontrollside",
    "stop_today": "Svarer nettstedet {codes}, stopper vi og henter ikke mer derfra resten av døgnet (UTC).",
    "stop_close": "Avviser du oss med {codes}, stopper vi og merker kilden som stengt: vi kommer ikke tilbake av oss "
                  "selv, og vi prøver verken andre adresser eller andre navn.",
    "retry_after": "En Retry-After-header som ber om lengre tid, følger vi.",
    "retries": "Svarer nettstedet med en feil eller svarer ikke, prøver vi høyst {n} samme dag, første gang etter "
               "{backoff}, deretter med dobbelt så lang ventetid hver gang.",
    "retry_once": "Svarer nettstedet med en feil eller svarer ikke, prøver vi én gang til samme dag, etter {backoff}.",
    "no_retries": "Svarer nettstedet med en feil eller svarer ikke, prøver vi ikke igjen samme dag.",
    "redirects": "En viderekobling følges som en egen forespørsel: målet sjekkes mot robots.txt og får samme tempo "
                 "som alle andre adresser. Vi følger høyst {n} etter hverandre.",
    # robots
    "robots_first": "Vi leser robots.txt før vi henter noe annet fra et nettsted, og henter ikke det som er stengt "
                    "for oss der.",
    "robots_group": "Vi følger gruppen som nevner {token} (store og små bokstaver spiller ingen rolle) hvis du har "
                    "en, ellers gruppen for *. Disallow og Allow virker slik RFC 9309 sier: den lengste regelen som "
                    "passer vinner, ved likhet vinner Allow, og * og $ virker som jokertegn.",
    "robots_host": "Alt gjelder per vert: hvert underdomene trenger sin egen robots.txt, så en regel på example.no "
                   "gjelder ikke for butikk.example.no.",
    "robots_cache": "Vi henter robots.txt høyst {once} per vert og bruker den om igjen i mellomtiden, så endringer "
                    "gjelder innen {ttl}.",
    "robots_size": "Vi leser de første {size} av fila og følger høyst {hops} dit.",
    "rf_4xx_allow_incl": "Ingen robots.txt, eller et HTTP 4xx-svar på den (også 401 og 403): det leser vi som ingen "
                         "begrensninger.",
    "rf_4xx_deny_incl": "Ingen robots.txt, eller et HTTP 4xx-svar på den (også 401 og 403): da henter vi ingenting.",
    "rf_4xx_allow": "Ingen robots.txt, eller et HTTP 4xx-svar på den: det leser vi som ingen begrensninger.",
    "rf_4xx_deny": "Ingen robots.txt, eller et HTTP 4xx-svar på den: da henter vi ingenting.",
    "rf_401_allow": "Nekter nettstedet oss tilgang til robots.txt (401 eller 403), leser vi det som ingen "
                    "begrensninger.",
    "rf_401_deny": "Nekter nettstedet oss tilgang til robots.txt (401 eller 403), henter vi ingenting.",
    "rf_5xx_deny": "Kan vi ikke lese robots.txt fordi nettstedet svarer med en serverfeil (5xx), henter vi "
                   "ingenting før vi kan lese den.",
    "rf_5xx_skip_host": "En serverfeil (5xx) på robots.txt leser vi som «ikke nå»: da hopper vi over nettstedet den "
                        "runden.",
    "rf_unreachable_deny": "Får vi ikke kontakt med robots.txt i det hele tatt (intet svar, brutt forbindelse), "
                           "henter vi ingenting.",
    "rf_unreachable_skip_host": "Får vi ikke kontakt med robots.txt i det hele tatt, hopper vi over nettstedet den "
                                "runden.",
    "crawl_delay_seconds": "Crawl-delay leses i sekunder. Vi følger verdier opptil {cap}; "
                           "alt over regner vi som {cap}.",
    "noindex": "noindex og nofollow, i en robots-meta-tag eller en X-Robots-Tag-header: da tar vi ikke vare på siden "
               "og følger ikke lenkene.",
    # si nei
    "example_path": "/privat/",
    "control_all": "Med robots.txt, i roten av hver vert. Vil du stenge oss helt ute, legger du dette i robots.txt:",
    "control_path": "Du kan også stenge enkelte deler, for eksempel {path}:",
    "control_slow": "Eller be oss gå saktere med en Crawl-delay i sekunder (vi følger den opptil {cap}):",
    "control_when": "Endringene gjelder innen {ttl}, neste gang vi leser fila.",
    # stopp
    "stop_mail": "Skriv til {contact}. Ber du oss stoppe, gjør vi det selv om robots.txt står som før: vi setter "
                 "domenet ditt, med underdomener, på sperrelista vår. Det trengs ingen diskusjon først.",
    "stop_form": "Bruk kontaktskjemaet vårt, {contact}. Ber du oss stoppe, gjør vi det selv om robots.txt står som "
                 "før: vi setter domenet ditt, med underdomener, på sperrelista vår. Det trengs ingen diskusjon først.",
    "stop_delete": "Ber du om det, sletter vi alt vi har lagret fra domenet ditt.",
    # kontakt
    "contact_intro": "Har du spørsmål, eller opplever du at roboten oppfører seg annerledes enn beskrevet her? Send "
                     "en e-post til {contact}. Det hjelper om du tar med:",
    "contact_intro_form": "Har du spørsmål, eller opplever du at roboten oppfører seg annerledes enn beskrevet her? "
                          "Bruk kontaktskjemaet vårt, {contact}. Det hjelper om du tar med:",
    "send_host": "domenet eller vertsnavnet det gjelder;",
    "send_when": "dato og klokkeslett for forespørslene, med tidssone;",
    "send_lines": "noen linjer fra loggen, med sti og User-Agent;",
    "send_want": "hva du vil: saktere, stenge en del, eller ingen besøk i det hele tatt.",
    "privacy": "Slik behandler vi opplysninger: {link}",
    # KI-preferanser (AIPREF) og signerte forespørsler (Web Bot Auth)
    "h_usage": "Hva vi bruker det til",
    "usage_intro": "Hva vi gjør med det vi leser, med ordene fra vokabularet for KI-preferanser (AIPREF) som "
                   "nettsteder bruker i robots.txt og i Content-Usage-headeren:",
    "u_search": "{label}: vi viser folk veien til siden din: det vi viser, lenker tilbake til den.",
    "u_ai_use": "{label}: et KI-system arbeider med teksten (en språkmodell som oppsummerer, henter ut eller "
                "hjelper til med å skrive), uten å bli trent på den.",
    "u_train_ai": "{label}: teksten brukes til å trene en KI-modell.",
    "usage_not": "Vi bruker det ikke til {uses}.",
    "usage_refused": "Sier en Content-Usage-linje i robots.txt (i gruppen som gjelder oss, den lengste stien som "
                     "passer) eller Content-Usage-headeren på en side n til en av disse bruksmåtene, tar vi ikke "
                     "vare på noe fra den siden og følger ingenting derfra.",
    "usage_site_check": "Sjekken av nettstedet ditt registrerer da bare om det svarte og hvor det sendte oss "
                        "videre; ikke navnet, og ikonet hentes ikke.",
    "robots_usage": "Content-Usage-linjer (AIPREF) leser vi fra gruppen som gjelder oss; de endrer ingenting ved "
                    "Allow, Disallow eller Crawl-delay.",
    "control_usage": "Vil du at vi skal lese sidene dine, men ikke bruke dem til ett av disse formålene, legger du "
                     "til en Content-Usage-linje der reglene som gjelder oss allerede står (en ny gruppe for {token} "
                     "ville erstatte *-gruppen for oss):",
    "l_signature": "Signerte forespørsler",
    "sig_row": "Web Bot Auth (RFC 9421), nøkkel-ID {keyid}",
    "sig_verify": "Hver forespørsel vi sender, også den etter robots.txt, har en HTTP-meldingssignatur (Web Bot "
                  "Auth, RFC 9421) med Signature-Agent {agent} og nøkkel-ID {keyid}. For å sjekke en henter du de "
                  "offentlige nøklene våre fra {directory} (katalogen er signert med den samme nøkkelen) og "
                  "verifiserer Signature-headeren i forespørselen mot dem. En forespørsel som bruker navnet vårt "
                  "uten gyldig signatur, er ikke fra oss.",
    "sig_or_rdns": "Uten å sjekke signaturer forteller adressesjekken over deg det samme: en forespørsel fra oss "
                   "kommer fra en av adressene våre, og det omvendte DNS-navnet peker tilbake til den.",
    "sig_or_ips": "Uten å sjekke signaturer kan du sammenligne adressen til forespørselen med listen på {link}.",
}
