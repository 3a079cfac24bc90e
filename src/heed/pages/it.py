"""Italiano: le frasi della pagina informativa. I segnaposto vengono dal profilo."""
from __future__ import annotations

from heed.pages.words import Words

NAME = "Italiano"

_UNITS = {"second": ("secondo", "secondi"), "minute": ("minuto", "minuti"), "hour": ("ora", "ore"),
          "day": ("giorno", "giorni"), "week": ("settimana", "settimane")}

WORDS = Words(
    decimal=",", conj="e", disj="o", units=_UNITS, units_dat=_UNITS,
    nouns={"item": ("elemento", "elementi"), "character": ("carattere", "caratteri"),
           "child_sitemap": ("sitemap secondaria", "sitemap secondarie"),
           "new_page": ("pagina nuova", "pagine nuove"), "page": ("pagina", "pagine"),
           "article_page": ("pagina di articolo", "pagine di articolo"), "request": ("richiesta", "richieste"),
           "retry": ("altra volta", "altre volte"), "redirect": ("reindirizzamento", "reindirizzamenti"),
           "round": ("giro", "giri")},
    singular_for_fractions=False,
    weekdays={1: "domenica", 2: "lunedì", 3: "martedì", 4: "mercoledì", 5: "giovedì", 6: "venerdì",
              7: "sabato"},
    every={"second": "ogni {n} {unit}", "minute": "ogni {n} {unit}", "hour": "ogni {n} {unit}",
           "day": "ogni {n} {unit}", "week": "ogni {n} {unit}",
           "minute_1": "ogni minuto", "hour_1": "ogni ora", "day_1": "ogni giorno", "week_1": "ogni settimana"},
    once_every={"second": "una volta ogni {n} {unit}", "minute": "una volta ogni {n} {unit}",
                "hour": "una volta ogni {n} {unit}", "day": "una volta ogni {n} {unit}",
                "week": "una volta ogni {n} {unit}",
                "minute_1": "una volta al minuto", "hour_1": "una volta all’ora", "day_1": "una volta al giorno",
                "week_1": "una volta alla settimana"},
    schedule={
        "once_day": "una volta al giorno, alle {at}",
        "per_day": "{rounds} al giorno, alle {at}",
        "per_working_day": "{rounds} per giorno feriale, alle {at}",
        "per_weekend_day": "{rounds} per giorno del fine settimana, alle {at}",
        "once_week": "una volta alla settimana, il {day} alle {at}",
        "per_weekday": "{rounds} ogni {day}, alle {at}",
        "per_days": "{rounds} al giorno il {days}, alle {at}",
        "raw": "secondo il calendario {expr} (UTC)",
    },
    hour_list="{hours} UTC", time_list="{times} UTC",
)

PHRASES = {
    "title": "{token}: il nostro crawler",
    "switch_label": "Lingua",
    "toc_label": "In questa pagina",
    "generated": "Questa pagina è generata dalla configurazione con cui gira {token}: ogni numero che vi compare è "
                 "quello che il crawler usa.",
    # titoli
    "h_who": "Chi siamo e perché passiamo",
    "h_recognise": "Come riconoscerci",
    "h_fetch": "Cosa leggiamo",
    "h_keep": "Cosa conserviamo, e perché",
    "h_third": "Servizi che lavorano per noi",
    "h_published": "Cosa viene pubblicato a partire dai tuoi contenuti",
    "h_never": "Cosa non facciamo",
    "h_pace": "Cadenza",
    "h_robots": "Come leggiamo il tuo robots.txt",
    "h_control": "Rallentarci o vietargli il tuo sito",
    "h_stop": "Rimozione, o uno stop senza toccare robots.txt",
    "h_contact": "Contatto",
    # riconoscere
    "l_user_agent": "User-Agent",
    "l_token": "Token per robots.txt",
    "l_operator": "Gestore",
    "l_info": "Questa pagina",
    "l_contact": "Contatto",
    "l_origin": "Origine delle richieste",
    "l_addresses": "I nostri indirizzi",
    "l_rdns": "DNS inverso",
    "ips_json": "La stessa lista, leggibile da una macchina: {link}",
    "rdns": "Ogni indirizzo ha come nome DNS inverso {name}, e quel nome punta di nuovo agli stessi indirizzi.",
    "ua_only": "Usiamo solo questo User-Agent e non ci nascondiamo mai dietro la stringa di un browser: se nei tuoi "
               "log vedi un browser, non siamo noi.",
    "not_us": "Uno User-Agent che si chiama {token} ma è diverso da quello qui sopra, o che si comporta diversamente "
              "da quanto descritto qui, probabilmente non siamo noi. Mandaci le righe del log e verifichiamo.",
    "verify": "Per controllare che una richiesta venga da noi, cerca il suo indirizzo e poi il nome che ottieni:",
    # lettura e conservazione
    "f_feed": "Il tuo flusso RSS o Atom pubblico: al massimo {items} per lettura.",
    "f_feed_only": "Di un flusso apriamo solo gli indirizzi che ha pubblicato, e non seguiamo alcun link interno al "
                   "tuo sito.",
    "k_feed": "Di ogni elemento del flusso: titolo, link e data, e al massimo {chars} del suo sommario.",
    "k_feed_no_summary": "Di ogni elemento del flusso: titolo, link e data.",
    "f_article_short": "Nient’altro finché il flusso basta: la pagina di un articolo solo quando il flusso ne "
                       "pubblica un sommario di meno di {chars}.",
    "f_article_selected": "Per gli elementi di cui scriviamo, la pagina dell’articolo a cui il flusso rimanda.",
    "f_article_once": "Una pagina di articolo viene letta una volta e non viene mai richiesta di nuovo.",
    "k_article_text": "Il testo delle pagine di articolo che apriamo.",
    "k_article_read": "Di una pagina di articolo conserviamo il titolo e l’indirizzo; il testo viene letto, non "
                      "conservato.",
    "k_tdmrep": "Dove è dichiarata una riserva sul text and data mining (TDMRep: un’intestazione tdm-reservation: 1, "
                "un meta tag tdm-reservation o /.well-known/tdmrep.json), non conserviamo il testo. Leggiamo "
                "tdmrep.json al massimo {once} per host, e solo dove robots.txt lo permette.",
    "f_page": "Le pagine che i nostri clienti hanno aggiunto: di ogni elemento elencato, titolo, link e ora di "
              "pubblicazione.",
    "k_page": "Titolo, link e ora di pubblicazione di ogni elemento; mai un autore, un nome utente o il testo di un "
              "messaggio.",
    "f_fallback": "Se una tale pagina è costruita con JavaScript e non dà elementi, leggiamo invece la tua "
                  "sitemap.xml (e al massimo {children} sotto di essa) e il titolo di al massimo {pages} sotto lo "
                  "stesso percorso.",
    "f_title_refetch": "Un titolo già letto non viene richiesto di nuovo entro {d}.",
    "f_sitemap": "La tua sitemap, e i titoli delle pagine che elenca.",
    "f_site_check": "La tua home page e la sua icona: se il sito risponde, dove reindirizza e come si chiama. Non "
                    "leggiamo altro.",
    "k_site_check": "Se il tuo sito ha risposto, dove ha reindirizzato e il suo nome; nulla della home page stessa.",
    "f_subsidy": "Partiamo dalla tua sitemap e seguiamo solo le pagine il cui indirizzo riguarda i contributi: "
                 "contiene {topics}.",
    "f_compare": "Ogni pagina viene confrontata con la versione precedente. Se non è cambiato nulla, l’elaborazione "
                 "si ferma lì: una nuova visita ti costa una richiesta e nient’altro.",
    "k_subsidy": "Il testo di ogni pagina di contributi, per vedere quando cambia. I nostri clienti ricevono un "
                 "riassunto di al massimo {chars} con un link alla tua pagina come fonte.",
    "f_agenda": "Partiamo dalla tua sitemap.xml e seguiamo solo le pagine sul programma o sui biglietti "
                "(l’indirizzo contiene {patterns}). Non esploriamo il tuo sito alla cieca.",
    "f_structured": "Gli eventi vengono letti prima di tutto dai dati strutturati della pagina (schema.org).",
    "k_agenda": "Di ogni evento: nome, data e ora, luogo, prezzo, descrizione, un’immagine e il link alla tua pagina.",
    # mai
    "never_get": "Solo richieste GET: nessun modulo, nessun accesso ad account, nessun ordine, nessuna ricerca nel "
                 "sito.",
    "never_js": "Nessun JavaScript, nessun cookie accettato o inviato, nessun tracciamento; i dialoghi per il "
                "consenso non vengono caricati.",
    "never_paywall": "Solo pagine aperte a ogni visitatore: niente dietro un accesso o un paywall.",
    "never_paywall_text": "Solo pagine aperte a ogni visitatore: niente dietro un accesso, e un articolo a pagamento "
                          "non viene mai estratto, nemmeno quando la pagina ne trasporta il testo.",
    "never_personal": "Nessun dato personale oltre a ciò che l’elemento pubblico mostra già.",
    # cadenza
    "rounds": "{task}: {when}.",
    "task_feed": "Lettura dei flussi",
    "task_page": "Lettura delle pagine",
    "task_sitemap": "Lettura delle sitemap",
    "task_site_check": "Controllo dei siti",
    "task_subsidy": "Giri sui contributi",
    "task_agenda": "Giro sugli eventi",
    "feed_interval": "Ogni flusso viene letto al massimo {once}, e nessun dato è trasmesso quando non è cambiato "
                     "niente.",
    "site_check_interval": "Ogni sito viene controllato al massimo {once}.",
    "cap_page": "Al massimo {pages} per fonte a ogni giro.",
    "cap_subsidy": "Al massimo {pages} per host a ogni giro.",
    "cap_agenda": "Al massimo {pages} per sito a ogni giro.",
    "cap_articles": "Al massimo {per} per fonte ogni {window}, {total} in totale su tutte le fonti.",
    "min_delay": "Almeno {d} tra due richieste verso lo stesso host, contati dalla fine di una richiesta all’inizio "
                 "della successiva.",
    "crawl_delay": "Il tuo Crawl-delay prevale se è più lungo, fino a {cap}.",
    "one_per_host": "Mai due richieste contemporanee verso lo stesso host.",
    "one_at_a_time": "Le richieste partono una alla volta: mai due connessioni insieme, né verso di te né verso "
                     "chiunque altro.",
    "in_flight": "Al massimo {n} insieme, su tutti i siti.",
    "spacing": "In un giro passano {span} tra due pagine dello stesso sito.",
    "spacing_fixed": "In un giro passano almeno {lo} tra due pagine dello stesso sito.",
    "conditional": "Con richieste condizionali (If-None-Match, If-Modified-Since): se non è cambiato niente, il tuo "
                   "server risponde 304 e non invia alcun corpo.",
    "challenge": "una pagina di verifica",
    "stop_today": "Se rispondi con {codes}, smettiamo di leggere dal tuo sito per il resto della giornata (UTC).",
    "stop_close": "Se ci respingi con {codes}, ci fermiamo e segniamo la fonte come chiusa: non torniamo da soli, e "
                  "non proviamo altri indirizzi né altre identità.",
    "retry_after": "Un’intestazione Retry-After che chiede di più viene rispettata.",
    "retries": "Dopo un errore del server o un timeout riproviamo al massimo {n} nella stessa giornata, la prima "
               "dopo {backoff}, poi ogni volta dopo il doppio del tempo.",
    "retry_once": "Dopo un errore del server o un timeout riproviamo una sola volta nella stessa giornata, dopo "
                  "{backoff}.",
    "no_retries": "Dopo un errore del server o un timeout non riproviamo nella stessa giornata.",
    "redirects": "Un reindirizzamento è una nuova richiesta: la destinazione viene verificata con robots.txt e "
                 "cadenzata come ogni altro indirizzo. Seguiamo al massimo {n} di fila.",
    # robots
    "robots_first": "Leggiamo il tuo robots.txt prima di ogni altra richiesta verso un host, e non leggiamo nulla di "
                    "ciò che ci vieta.",
    "robots_group": "Seguiamo il gruppo che nomina {token} (maiuscole o minuscole non contano), se c’è, altrimenti "
                    "quello per *. Disallow e Allow valgono come dice la RFC 9309: vince la regola più lunga che "
                    "corrisponde, a parità vince Allow, e * e $ funzionano come caratteri jolly.",
    "robots_host": "Tutto vale per host: ogni sottodominio ha bisogno del suo robots.txt, quindi una regola su "
                   "example.it non copre negozio.example.it.",
    "robots_cache": "Il file viene riletto al massimo {once} per host e riusato nel frattempo: una modifica ha "
                    "effetto entro {ttl}.",
    "robots_size": "Leggiamo i primi {size} del file e seguiamo al massimo {hops} per arrivarci.",
    "rf_4xx_allow_incl": "Nessun robots.txt, o un HTTP 4xx su di esso (401 e 403 compresi): lo leggiamo come "
                         "nessuna restrizione.",
    "rf_4xx_deny_incl": "Nessun robots.txt, o un HTTP 4xx su di esso (401 e 403 compresi): non leggiamo nulla.",
    "rf_4xx_allow": "Nessun robots.txt, o un HTTP 4xx su di esso: lo leggiamo come nessuna restrizione.",
    "rf_4xx_deny": "Nessun robots.txt, o un HTTP 4xx su di esso: non leggiamo nulla.",
    "rf_401_allow": "Se l’accesso a robots.txt ci viene negato (401 o 403), lo leggiamo come nessuna restrizione.",
    "rf_401_deny": "Se l’accesso a robots.txt ci viene negato (401 o 403), non leggiamo nulla.",
    "rf_5xx_deny": "Se robots.txt risponde con un errore del server (5xx), non leggiamo nulla finché non riusciamo a "
                   "leggerlo.",
    "rf_5xx_skip_host": "Un errore del server (5xx) su robots.txt significa «non adesso»: saltiamo il tuo host per "
                        "quel giro.",
    "rf_unreachable_deny": "Se robots.txt non è raggiungibile (nessuna risposta, una connessione interrotta), non "
                           "leggiamo nulla.",
    "rf_unreachable_skip_host": "Se robots.txt non è raggiungibile, saltiamo il tuo host per quel giro.",
    "crawl_delay_seconds": "Il Crawl-delay è in secondi. Rispettiamo valori fino a {cap}; oltre, lo trattiamo "
                           "come {cap}.",
    "noindex": "noindex e nofollow, in un meta tag robots o in un’intestazione X-Robots-Tag: la pagina non viene "
               "conservata e i suoi link non vengono seguiti.",
    # rallentare
    "example_path": "/riservato/",
    "control_all": "Con il tuo robots.txt, alla radice di ogni host. Per chiudergli del tutto la porta bastano "
                   "queste righe, e vengono rispettate senza discutere:",
    "control_path": "Per chiudere solo una sezione, per esempio {path}:",
    "control_slow": "Per rallentare invece di chiudere, un Crawl-delay in secondi (lo rispettiamo fino a {cap}):",
    "control_when": "Una modifica ha effetto entro {ttl}, alla prossima lettura del file.",
    # stop
    "stop_mail": "Scrivi a {contact}. Una richiesta di stop viene eseguita anche se il tuo robots.txt resta com’è: "
                 "mettiamo il tuo dominio, con i suoi sottodomini, nella nostra lista di blocco. Non serve alcuna "
                 "discussione prima.",
    "stop_form": "Usa il nostro modulo di contatto, {contact}. Una richiesta di stop viene eseguita anche se il tuo "
                 "robots.txt resta com’è: mettiamo il tuo dominio, con i suoi sottodomini, nella nostra lista di "
                 "blocco. Non serve alcuna discussione prima.",
    "stop_delete": "Su richiesta cancelliamo tutto ciò che abbiamo conservato dal tuo dominio.",
    # contatto
    "contact_intro": "Domande, o il nostro crawler si comporta diversamente da quanto descritto qui? Scrivi a "
                     "{contact}. Ci aiuta se mandi:",
    "contact_intro_form": "Domande, o il nostro crawler si comporta diversamente da quanto descritto qui? Usa il "
                          "nostro modulo di contatto, {contact}. Ci aiuta se mandi:",
    "send_host": "il dominio o il nome dell’host in questione;",
    "send_when": "la data e l’ora delle richieste, con il fuso orario;",
    "send_lines": "qualche riga del tuo log, con il percorso e lo User-Agent;",
    "send_want": "cosa vuoi: più lentezza, una sezione chiusa, o nessuna visita.",
    "privacy": "Come trattiamo i dati: {link}",
    # preferenze sull’IA (AIPREF) e richieste firmate (Web Bot Auth)
    "h_usage": "Per cosa lo usiamo",
    "usage_intro": "Cosa facciamo con ciò che leggiamo, nei termini del vocabolario delle preferenze sull’IA "
                   "(AIPREF) che i siti usano nel robots.txt e nell’intestazione Content-Usage:",
    "u_search": "{label}: indichiamo alle persone la strada verso la tua pagina: ciò che mostriamo rimanda a essa "
                "con un link.",
    "u_ai_use": "{label}: un sistema di IA lavora sul testo (un modello linguistico che riassume, estrae dati o "
                "aiuta a scrivere), senza essere addestrato su di esso.",
    "u_train_ai": "{label}: il testo serve ad addestrare un modello di IA.",
    "usage_not": "Non lo usiamo per {uses}.",
    "usage_refused": "Se una riga Content-Usage del tuo robots.txt (nel gruppo che vale per noi, il percorso "
                     "corrispondente più lungo) o l’intestazione Content-Usage di una pagina dice n a uno di questi "
                     "usi, non conserviamo nulla di quella pagina e non seguiamo nulla da lì.",
    "usage_site_check": "Il nostro controllo del sito registra allora solo se ha risposto e dove ha reindirizzato; "
                        "non il suo nome, e l’icona non viene scaricata.",
    "robots_usage": "Le righe Content-Usage (AIPREF) le leggiamo dal gruppo che vale per noi; non cambiano nulla di "
                    "Allow, Disallow o Crawl-delay.",
    "control_usage": "Per lasciarci leggere le tue pagine senza usarle per uno di questi scopi, aggiungi una riga "
                     "Content-Usage dove sono già le regole che valgono per noi (un nuovo gruppo per {token} "
                     "sostituirebbe per noi il gruppo *):",
    "l_signature": "Richieste firmate",
    "sig_row": "Web Bot Auth (RFC 9421), ID della chiave {keyid}",
    "sig_verify": "Ogni richiesta che inviamo, robots.txt compreso, porta una firma dei messaggi HTTP (Web Bot "
                  "Auth, RFC 9421) con Signature-Agent {agent} e ID della chiave {keyid}. Per verificarne una, "
                  "prendi le nostre chiavi pubbliche da {directory} (l’elenco è firmato con la stessa chiave) e "
                  "verifica con esse l’intestazione Signature della richiesta. Una richiesta che usa il nostro nome "
                  "senza una firma valida non è nostra.",
    "sig_or_rdns": "Senza verificare le firme, il controllo dell’indirizzo qui sopra ti dice lo stesso: una nostra "
                   "richiesta arriva da uno dei nostri indirizzi, e il suo nome DNS inverso punta di nuovo a esso.",
    "sig_or_ips": "Senza verificare le firme, confronta l’indirizzo della richiesta con l’elenco su {link}.",
}
