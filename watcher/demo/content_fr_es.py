"""French and Spanish demo sites: a French farmers' NGO (on topic, news and
comments change, one capture is byte-identical) and an Andean water network
(oscillates: one capture is a database-error page, then the site is back).
All text written for driftline."""

from __future__ import annotations

from .pages import Comment, SitePage, render_db_error, render_site

# -- Solidarité Paysanne (French): always on topic --------------------------------

_SP_ARTICLE: list[tuple[str, list[str]]] = [
    ("", [
        "Solidarité Paysanne accompagne depuis vingt ans les agricultrices et agriculteurs qui traversent "
        "des difficultés : endettement, accident, maladie, conflit familial ou difficultés avec "
        "l'administration. Nos bénévoles, souvent eux-mêmes paysans ou anciens paysans, se rendent sur les "
        "fermes, écoutent, aident à faire le point et cherchent avec les familles des solutions durables.",
        "L'association intervient dans douze départements du Sud-Ouest. Elle est indépendante des banques, "
        "des coopératives et des syndicats agricoles, ce qui permet aux familles de parler librement.",
    ]),
    ("Comment se passe un accompagnement", [
        "Le premier contact se fait par téléphone ou par courriel. Deux bénévoles viennent ensuite sur la "
        "ferme pour comprendre la situation : les comptes, les prêts en cours, les stocks, le travail "
        "réalisé et la santé des personnes. Ensemble, nous établissons un diagnostic et un plan d'action.",
        "Selon les cas, nous négocions un étalement des dettes avec les créanciers, nous aidons à monter un "
        "dossier de procédure collective, ou nous accompagnons une reconversion. L'accompagnement dure en "
        "moyenne dix-huit mois et reste confidentiel.",
    ]),
    ("Prévenir plutôt que réparer", [
        "Nous organisons chaque hiver des journées de formation sur la gestion de trésorerie, la lecture d'un "
        "bilan comptable et les droits des exploitants. Ces journées sont ouvertes à tous et se tiennent "
        "dans les salles des fêtes des communes rurales.",
        "Nous travaillons aussi avec les médecins, les travailleurs sociaux et les conseillers des chambres "
        "d'agriculture pour repérer plus tôt les fermes en difficulté.",
    ]),
    ("Devenir bénévole", [
        "Vous êtes paysan, retraité agricole, comptable ou juriste ? Rejoignez une équipe locale. Une "
        "formation de trois jours prépare les nouveaux bénévoles à l'écoute et à l'analyse des situations.",
    ]),
]
_SP_NEWS = [
    ["Assemblée générale le 18 octobre à Auch", "Nouvelle antenne dans le Gers", "Formation trésorerie : inscriptions"],
    ["Assemblée générale le 18 octobre à Auch", "Nouvelle antenne dans le Gers", "Formation trésorerie : inscriptions"],
    ["Retour sur l'assemblée générale", "Sécheresse : une cellule d'écoute renforcée",
     "Formation trésorerie : inscriptions"],
    ["Sécheresse : une cellule d'écoute renforcée", "Appel à bénévoles en Lot-et-Garonne",
     "Rapport d'activité 2024 en ligne"],
    ["Journées d'hiver : le programme", "Appel à bénévoles en Lot-et-Garonne", "Rapport d'activité 2024 en ligne"],
]
_SP_ADS = [
    ("Partenaire", "Mutuelle des campagnes : une assurance pensée pour les exploitants."),
    ("Partenaire", "Mutuelle des campagnes : une assurance pensée pour les exploitants."),
    ("Publicité", "Salon de l'agriculture paysanne, 14-16 novembre, parc des expositions."),
    ("Publicité", "Semences paysannes : catalogue d'automne disponible en ligne."),
    ("Partenaire", "Banque coopérative du Sud-Ouest : prêts à l'installation."),
]
_SP_COMMENTS = [
    Comment("Marie-Claude", "5 septembre", "Merci à l'équipe du Gers, sans vous nous aurions vendu la ferme."),
    Comment("Jean-Pierre B.", "12 septembre", "Est-ce que la formation trésorerie est accessible aux conjoints ?"),
    Comment("Solidarité Paysanne", "13 septembre", "Oui, bien sûr : les formations sont ouvertes à toute la famille."),
    Comment("Hélène", "2 octobre", "Retraitée agricole, je souhaite devenir bénévole dans le Tarn. À qui écrire ?"),
    Comment("Karim", "21 octobre", "Très bonne assemblée générale, merci pour l'accueil à Auch."),
]
_SP_DATES = ["2 septembre 2025", "2 septembre 2025", "30 septembre 2025", "14 octobre 2025", "28 octobre 2025"]


def solidarite_page(i: int) -> str:
    """Capture 1 is byte-identical to capture 0 (the crawler records a revisit)."""
    n_comments = [2, 2, 3, 4, 5][i]
    return render_site(SitePage(
        lang="fr", site_name="Solidarité Paysanne", tagline="Accompagner les familles agricoles en difficulté",
        title="Notre accompagnement des agriculteurs en difficulté | Solidarité Paysanne",
        nav=["Accueil", "Qui sommes-nous", "Notre action", "Formations", "Actualités", "Nous rejoindre", "Don"],
        breadcrumb=["Accueil", "Notre action", "Accompagnement"],
        heading="Notre accompagnement des agriculteurs en difficulté",
        byline=f"Mis à jour le {_SP_DATES[i]}",
        sections=_SP_ARTICLE, sidebar_title="Actualités", sidebar_items=_SP_NEWS[i],
        related_title="À lire aussi",
        related=(["Témoignages de familles", "Nos antennes locales", "Faire un don"] if i < 3
                 else ["Rapport d'activité", "Témoignages de familles", "Nos partenaires"]),
        ad=_SP_ADS[i], comments_title=f"{n_comments} commentaires", comments=_SP_COMMENTS[:n_comments],
        footer_lines=["Solidarité Paysanne, 7 place du Foirail, 32000 Auch. Association loi 1901.",
                      "© 2025 Solidarité Paysanne · Mentions légales · Données personnelles"],
        cookie_text="Ce site utilise des cookies de mesure d'audience. Vous pouvez les refuser.",
        theme="#2f6b3a", labels={"reply": "Laisser un commentaire", "send": "Envoyer", "search": "Rechercher"},
    ))


# -- Red Agua Andina (Spanish): oscillates, one soft error in the middle -------

_RA_ARTICLE: list[tuple[str, list[str]]] = [
    ("", [
        "La Red Agua Andina reúne a comunidades campesinas, juntas de regantes y universidades de tres "
        "países para cuidar las fuentes de agua de la cordillera. Los glaciares que alimentan nuestros ríos "
        "retroceden año tras año, y los bofedales y humedales de altura son cada vez más importantes para "
        "guardar el agua de la temporada de lluvias.",
        "Desde 2016 acompañamos a las comunidades en la medición de caudales, lluvias y calidad del agua, "
        "con equipos sencillos que ellas mismas instalan y mantienen.",
    ]),
    ("Monitoreo comunitario", [
        "Cada comunidad elige a dos monitores o monitoras, que reciben una formación de una semana. Miden "
        "el caudal de los manantiales y canales cada quince días y anotan la lluvia diaria en pluviómetros "
        "instalados junto a las escuelas. Los datos se comparten en asambleas y se envían a la red por "
        "mensaje de texto cuando no hay internet.",
        "Con estos registros, las juntas de regantes pueden planificar los turnos de riego y defender sus "
        "derechos de agua frente a proyectos mineros o hidroeléctricos.",
    ]),
    ("Restaurar los bofedales", [
        "Los bofedales son humedales de altura que funcionan como esponjas. Junto con las comunidades "
        "reparamos canales antiguos, construimos pequeños diques de piedra y ordenamos el pastoreo de "
        "alpacas y llamas para que la vegetación se recupere.",
    ]),
    ("Participa", [
        "Estudiantes y profesionales pueden sumarse como voluntarios durante las campañas de medición de "
        "junio y diciembre. Escríbenos para conocer las fechas y los requisitos.",
    ]),
]
_RA_NEWS = [
    ["Encuentro regional de monitores en Cusco", "Nuevo pluviómetro en la escuela de Chillca"],
    ["Nuevo pluviómetro en la escuela de Chillca", "Informe de caudales de la temporada seca"],
    [],
    ["Campaña de medición de diciembre: inscripciones abiertas", "Informe de caudales de la temporada seca"],
    ["Campaña de medición de diciembre: inscripciones abiertas", "Taller de restauración de bofedales en Puno"],
]
_RA_COMMENTS = [
    Comment("Rosa Quispe", "4 de septiembre", "Gracias por la capacitación, ya medimos el manantial de nuestra "
            "comunidad cada quince días."),
    Comment("Andrés", "19 de septiembre", "¿Los datos de caudal están disponibles para tesis universitarias?"),
    Comment("Red Agua Andina", "20 de septiembre", "Sí, escríbenos y te enviamos el convenio de uso de datos."),
    Comment("Lucía M.", "16 de octubre", "Me gustaría participar en la campaña de diciembre como voluntaria."),
]


def red_agua_page(i: int) -> str:
    """Capture 2 is a database-connection error served with status 200."""
    if i == 2:
        return render_db_error("Red Agua Andina")
    n = [1, 2, 0, 3, 4][i]
    return render_site(SitePage(
        lang="es", site_name="Red Agua Andina", tagline="Comunidades que cuidan el agua de la cordillera",
        title="Monitoreo comunitario del agua en los Andes | Red Agua Andina",
        nav=["Inicio", "Quiénes somos", "Programas", "Datos abiertos", "Noticias", "Voluntariado", "Contacto"],
        breadcrumb=["Inicio", "Programas", "Monitoreo comunitario"],
        heading="Monitoreo comunitario del agua en los Andes",
        byline="Actualizado el " + ["1", "15", "", "13", "27"][i] + (" de septiembre de 2025" if i < 2
                                                                   else " de octubre de 2025"),
        sections=_RA_ARTICLE, sidebar_title="Noticias", sidebar_items=_RA_NEWS[i],
        related_title="Enlaces relacionados", related=["Datos de caudales", "Manual del monitor", "Aliados"],
        ad=("Apoya", "Con una donación mensual financias un pluviómetro para una escuela."),
        comments_title=f"{n} comentarios", comments=_RA_COMMENTS[:n],
        footer_lines=["Red Agua Andina · Av. de la Cultura 1200, Cusco.",
                      "© 2025 Red Agua Andina · Política de privacidad"],
        cookie_text="Usamos cookies propias para mejorar la navegación.", theme="#0f6f8f",
        labels={"reply": "Deja un comentario", "send": "Publicar", "search": "Buscar"},
    ))
