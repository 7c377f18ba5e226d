"""English demo sites: a river NGO (stays on topic), a public library (its
domain lapses and is parked), a jazz festival (its hosting account is
suspended) and a local history society (its domain is taken over by an
affiliate blog).  All text written for driftline."""

from __future__ import annotations

from .pages import Comment, SitePage, render_blog, render_parked, render_site, render_suspended

# -- Riverwatch Alliance: always on topic; ads, dates, comments, links change ----

_RIVER_ARTICLE: list[tuple[str, list[str]]] = [
    ("", [
        "The Elder River drains a valley of small farms, two market towns and a chain of wet meadows that "
        "flood almost every winter. For most of the last century the river was pushed into a straight, "
        "embanked channel so that the meadows could be drained and ploughed. The result is a river that "
        "runs fast and shallow in summer, carries silt from the fields into the estuary, and overtops its "
        "banks in the towns when heavy rain falls on the hills.",
        "Riverwatch Alliance was founded by anglers, farmers and teachers who wanted to measure what was "
        "happening rather than argue about it. Since then our volunteers have walked the same thirty-one "
        "monitoring stretches every month, recording water temperature, turbidity, nitrate levels and the "
        "invertebrates they find under the stones.",
    ]),
    ("What a living floodplain does", [
        "A floodplain that is allowed to flood stores water when the river is high and releases it slowly "
        "over the following weeks. Meadows, reed beds and wet woodland slow the flow, trap sediment and give "
        "fish somewhere to shelter during spates. Downstream, the peak of a flood arrives later and lower, "
        "which buys the towns time.",
        "Our restoration sites show the effect clearly. Where the old embankments at Holm Farm were lowered "
        "and the drainage ditches blocked, the meadow now holds water for up to six weeks after a storm. "
        "Turbidity below the site has fallen by roughly a third, and mayfly larvae have returned to a "
        "stretch where volunteers found almost none in the first survey year.",
    ]),
    ("How farmers take part", [
        "None of this works without the people who own and farm the land. We pay for fencing, new water "
        "troughs and gateways so that cattle can graze the wet meadows in summer without trampling the "
        "banks, and we help farmers apply for the stewardship grants that reward them for keeping land "
        "under grass.",
        "Each restored field is mapped, photographed from fixed points and surveyed twice a year, so that "
        "the farmer, the grant body and our members can see what changed.",
    ]),
    ("Join a survey walk", [
        "Survey walks take about three hours and no experience is needed: we provide kick nets, trays, "
        "identification cards and a trained leader. Walks start from the village halls at Ashby Mill, "
        "Kelsey and Underbridge on the first Saturday of each month.",
    ]),
]

_RIVER_ADS = [
    ("Advertisement", "Waders and wading boots: end of season sale, up to 30% off at Valley Outdoor."),
    ("Sponsored", "Try our new trail running shoes. Free returns within 60 days."),
    ("Advertisement", "Kelsey Garden Centre: native wildflower seed mixes now in stock."),
    ("Sponsored", "Insure your home against flooding: compare quotes in two minutes."),
    ("Advertisement", "Learn to fly fish: weekend courses on the Elder with a qualified guide."),
]
_RIVER_NEWS = [
    ["Volunteers record the first otter spraint at Kelsey weir", "Winter survey dates announced",
     "Annual report: nitrate levels down at 19 of 31 stretches"],
    ["Holm Farm meadow floods as designed after October storm",
     "Volunteers record the first otter spraint at Kelsey weir", "Winter survey dates announced"],
    ["New monitoring stretch added below Underbridge", "Holm Farm meadow floods as designed after October storm",
     "School groups join the November kick-sampling day"],
    ["Grant secured for two more wet meadows", "New monitoring stretch added below Underbridge",
     "School groups join the November kick-sampling day"],
    ["Spring walks: booking is open", "Grant secured for two more wet meadows",
     "Thank you to 240 volunteers who walked the river this year"],
]
_RIVER_RELATED = [
    ["Monitoring results by stretch", "Restoration sites map", "Volunteer handbook (PDF)"],
    ["Restoration sites map", "Invertebrate identification guide", "Our partners"],
    ["Monitoring results by stretch", "Stewardship grants explained", "Press coverage"],
    ["Invertebrate identification guide", "Volunteer handbook (PDF)", "Annual report"],
    ["Restoration sites map", "Annual report", "Stewardship grants explained"],
]
_RIVER_COMMENTS = [
    Comment("Margaret H.", "3 September", "We walked the Kelsey stretch last month with the children and found "
            "stonefly nymphs for the first time. Thank you to the leaders for being so patient."),
    Comment("Tom from Ashby", "19 September", "Is there any data on the outflow from the new housing estate? "
            "The water below the culvert looked cloudy after the rain."),
    Comment("Riverwatch Alliance", "20 September", "Thanks Tom, the Ashby culvert is stretch 12; results are on "
            "the monitoring page and we have reported the readings to the council."),
    Comment("Priya", "8 October", "Lovely to see the meadow flooding on purpose for once. Will there be a walk there?"),
    Comment("J. Calder", "29 October", "Farmer here: the new water troughs have kept the cattle off the bank all "
            "summer. Happy to talk to anyone thinking of joining the scheme."),
    Comment("Ellie W.", "12 November", "Signed up for the December walk. Do we need waders or are wellies enough?"),
]
_RIVER_DATES = ["2 September 2025", "16 September 2025", "30 September 2025", "14 October 2025", "28 October 2025"]


def riverwatch_page(i: int) -> str:
    sections = [(h, list(ps)) for h, ps in _RIVER_ARTICLE]
    if i >= 3:
        sections[1][1].append(
            "Update: after the October storm the Holm Farm meadow held water for five weeks, and the flood "
            "peak at Underbridge arrived almost nine hours later than in comparable storms before restoration."
        )
    return render_site(SitePage(
        lang="en", site_name="Riverwatch Alliance", tagline="Volunteers monitoring and restoring the Elder River",
        title="Why the Elder River needs a living floodplain | Riverwatch Alliance",
        nav=["Home", "Our work", "Monitoring", "Restoration", "Get involved", "News", "Donate"],
        breadcrumb=["Home", "Our work", "Floodplain restoration"],
        heading="Why the Elder River needs a living floodplain",
        byline=f"By the Riverwatch Alliance team · Last updated {_RIVER_DATES[i]}",
        sections=sections, sidebar_title="Latest news", sidebar_items=_RIVER_NEWS[i],
        related_title="Related pages", related=_RIVER_RELATED[i], ad=_RIVER_ADS[i],
        comments_title=f"{min(len(_RIVER_COMMENTS), 2 + i)} comments", comments=_RIVER_COMMENTS[: 2 + i],
        footer_lines=["Riverwatch Alliance, The Old Tannery, Mill Lane, Ashby. Registered charity 1187342.",
                      f"© 2025 Riverwatch Alliance · Privacy · Accessibility · Page generated {_RIVER_DATES[i]}"],
        cookie_text="We use cookies to count visits and remember your preferences.",
    ))


# -- Harbourtown Public Library: on topic, then the domain lapses and is parked --

_LIB_SECTIONS: list[tuple[str, list[str]]] = [
    ("", [
        "Harbourtown Public Library is open to everyone who lives, works or studies in the borough. "
        "Membership is free: bring a document with your address to any branch and you can borrow up to "
        "twenty items at a time, including books, audiobooks, DVDs and board games.",
    ]),
    ("Opening hours", [
        "The Central Library on Quay Street is open Monday to Friday from nine in the morning until seven in "
        "the evening, and on Saturdays from ten until four. The Westcliff and Ferry Road branches open on "
        "Tuesdays, Thursdays and Saturdays. All branches are closed on public holidays.",
    ]),
    ("Services", [
        "Every branch has free public computers, printing and scanning, and wireless internet. The local "
        "studies room at Central holds maps, parish registers, photographs and newspapers going back to the "
        "harbour's first customs house, and staff can help you start researching your family history.",
        "Housebound readers can receive a monthly delivery from our volunteers, and large print and audio "
        "books are available in every branch.",
    ]),
    ("Children and families", [
        "Rhyme time for babies and toddlers runs every Wednesday morning, and the Saturday story club "
        "welcomes children from four to eight. During the summer holidays the reading challenge invites "
        "children to read six books and collect a medal and a certificate.",
    ]),
]
_LIB_EVENTS = [
    ["Author talk: the lighthouse keepers of Harbourtown", "Family history drop-in, Thursday", "Knit and natter"],
    ["Half-term craft mornings", "Author talk: the lighthouse keepers of Harbourtown", "Computer help for beginners"],
]


def library_page(i: int) -> str:
    if i >= 2:
        searches = [["Public Library Near Me", "Free Audiobooks", "Library Card Online", "Book Club Ideas",
                     "Online Courses", "Cheap Flights"],
                    ["Ebooks Free Download", "Library Jobs", "Family Tree Search", "Home Insurance",
                     "Online Degree", "Used Books"],
                    ["Audiobook Subscription", "Genealogy Records", "Best Ereader", "Car Insurance Quotes",
                     "Kids Books", "Storage Units"]][i - 2]
        return render_parked("harbourtown-library.org", searches, 2025, f"HTL-{4411 + 17 * i}")
    return render_site(SitePage(
        lang="en", site_name="Harbourtown Public Library", tagline="Books, learning and local history for everyone",
        title="Visit us: opening hours and services | Harbourtown Public Library",
        nav=["Home", "Catalogue", "Visit us", "Events", "Local studies", "Children", "Contact"],
        breadcrumb=["Home", "Visit us"], heading="Visit us: opening hours and services",
        byline="Updated " + ("1 September 2025" if i == 0 else "15 September 2025"),
        sections=_LIB_SECTIONS, sidebar_title="What's on", sidebar_items=_LIB_EVENTS[i],
        related_title="Useful links", related=["Join the library", "Renew your loans", "Accessibility"],
        ad=("Notice", "The Westcliff branch has a new accessible entrance on Marine Parade."),
        comments_title="Questions from readers", comments=[
            Comment("Alan", "28 August", "Can I reserve a local studies microfilm reader in advance?"),
            Comment("Library staff", "29 August", "Yes, ring the Central Library and ask for local studies."),
        ],
        footer_lines=["Harbourtown Public Library is a service of Harbourtown Borough Council.",
                      "© 2025 Harbourtown Borough Council · Privacy notice · Cookies"],
        cookie_text="This website uses essential cookies only.", theme="#5a2d82",
    ))


# -- City Jazz Festival: on topic, then the hosting account is suspended --------

_JAZZ_SECTIONS: list[tuple[str, list[str]]] = [
    ("", [
        "For ten days every October the City Jazz Festival fills concert halls, pubs, churches and the old "
        "tram depot with more than eighty concerts, from solo piano recitals to big bands, and from "
        "traditional New Orleans jazz to new music from the city's conservatoire.",
    ]),
    ("Headliners", [
        "This year's opening night at the Corn Exchange brings together a sixteen-piece big band and a string "
        "quartet for a new suite written for the festival. Later in the week a trio led by a double bassist "
        "returns to the tram depot, and the closing concert is a tribute to the blues singers who recorded "
        "in the city in the nineteen fifties.",
    ]),
    ("Tickets and venues", [
        "Festival passes give entry to every ticketed concert and can be bought from the box office at the "
        "Corn Exchange. Lunchtime concerts in the cathedral and the free stage in Market Square need no "
        "ticket. Most venues are step free; the festival guide lists access details for each of them.",
        "Young people under twenty-six can buy any ticket for five pounds, and students at the conservatoire "
        "can volunteer as stewards in return for a festival pass.",
    ]),
    ("Workshops", [
        "Jazz workshops for beginners, school bands and experienced players run on both weekends. Bring your "
        "instrument; the tutors are musicians playing at the festival.",
    ]),
]


def jazz_page(i: int) -> str:
    if i >= 2:
        return render_suspended(f"{0x5F3A9C + 977 * i:x}-{i}", f"srv{40 + i}.hostingco-shared.net")
    return render_site(SitePage(
        lang="en", site_name="City Jazz Festival", tagline="Ten days of jazz in the heart of the city",
        title="Programme 2025 | City Jazz Festival",
        nav=["Home", "Programme", "Tickets", "Venues", "Workshops", "Volunteer", "Contact"],
        breadcrumb=["Home", "Programme"], heading="Festival programme 2025",
        byline="Programme announced " + ("1 September 2025" if i == 0 else "1 September, updated 14 September 2025"),
        sections=_JAZZ_SECTIONS, sidebar_title="Just announced",
        sidebar_items=(["Late-night jam sessions at the Blue Door", "Family concert on the free stage"] if i == 0
                       else ["Extra matinee for the big band suite", "Late-night jam sessions at the Blue Door"]),
        related_title="Plan your visit", related=["Where to stay", "Getting here", "Festival guide (PDF)"],
        ad=("Partner", "Official festival beer: Depot Pale Ale, brewed two streets away."),
        comments_title="Comments", comments=[Comment("Sam", "2 September", "Can't wait for the tram depot gigs!")],
        footer_lines=["City Jazz Festival Ltd, 4 Exchange Street.", "© 2025 City Jazz Festival · Privacy"],
        cookie_text="We use cookies for ticketing and statistics.", theme="#b5341a",
    ))


# -- Millbrook Local History Society: on topic, then an affiliate blog ---------

_MILL_SECTIONS: list[tuple[str, list[str]]] = [
    ("", [
        "Millbrook grew up around a water mill on the brook that gives the village its name. The mill ground "
        "corn for the manor from at least the fourteenth century, and in 1798 it was rebuilt in brick with "
        "three pairs of stones and a cast iron wheel that still stands in the mill race today.",
        "When the canal reached the village in 1811 the mill became a busy place: barges brought coal and "
        "took flour to the towns, and a wharf, a warehouse and a row of cottages for boatmen were built "
        "beside the new basin.",
    ]),
    ("The people of the wharf", [
        "Parish registers and census returns show whole families living on the boats, children baptised in "
        "the village church between journeys, and boatmen who married into the families of the millers. "
        "Our members have traced more than four hundred people who lived or worked at the wharf between "
        "1811 and the closure of the canal to commercial traffic in 1937.",
    ]),
    ("Our archive", [
        "The society keeps photographs, deeds, trade directories and oral history recordings in the reading "
        "room above the village hall. It is open on the second Tuesday of each month, and members help "
        "visitors look for people, houses and businesses in the records.",
    ]),
]
_SPAM_POSTS = [
    ("Best Travel Credit Cards 2025: Our Top 10 Picks",
     ["Looking for the best travel credit card? We compared dozens of cards on sign-up bonuses, airport "
      "lounge access, foreign transaction fees and points value to find the top picks for every traveller.",
      "Our number one pick offers a huge welcome bonus after you spend a qualifying amount in the first three "
      "months, plus unlimited lounge access and no foreign transaction fees. Apply today through our link.",
      "Frequent flyers should also consider premium cards with annual travel credits. Always read the terms "
      "and compare interest rates before you apply, and pay your balance in full every month."]),
    ("How to Save Money on Car Insurance: 12 Simple Tips",
     ["Car insurance premiums keep rising, but there are easy ways to pay less. Compare quotes every year, "
      "raise your excess, and bundle home and car cover with the same insurer for a multi-policy discount.",
      "Telematics policies reward careful drivers with lower prices, and paying annually instead of monthly "
      "avoids interest charges. Use our comparison tool to see prices from over forty providers.",
      "Finally, check whether your employer or membership clubs offer discounts. Small savings add up."]),
    ("Smart Home Gadgets Review: The Best Deals This Month",
     ["We tested the latest smart speakers, video doorbells, robot vacuums and smart plugs so you don't have "
      "to. Here are the best deals we found this month, with prices checked daily.",
      "The robot vacuum at the top of our list maps your rooms, empties itself and is now at its lowest price "
      "ever. Our favourite video doorbell has no subscription fee and excellent night vision.",
      "Prices change quickly, so grab these offers while they last. Click the buttons below to see today's price."]),
]


def millbrook_page(i: int) -> str:
    if i >= 2:
        title, paras = _SPAM_POSTS[i - 2]
        # The domain was bought at auction by an affiliate network: its own brand, nothing of the society left.
        return render_blog("SmartMoney Daily", f"{title} - SmartMoney Daily", title,
                           f"Posted by admin · {['3 October', '17 October', '31 October'][i - 2]} 2025",
                           paras, ["Home", "Finance", "Insurance", "Tech", "Travel"],
                           ["Compare credit cards", "Get an insurance quote", "Today's tech deals"])
    return render_site(SitePage(
        lang="en", site_name="Millbrook Local History Society", tagline="Researching the village since 1972",
        title="The mill, the canal and the people of Millbrook | Millbrook Local History Society",
        nav=["Home", "History", "Archive", "Publications", "Events", "Membership"],
        breadcrumb=["Home", "History", "The mill and the canal"],
        heading="The mill, the canal and the people of Millbrook",
        byline="Written by the society's research group · " + ("Revised 2025" if i else "Published 2019"),
        sections=_MILL_SECTIONS, sidebar_title="Next meetings",
        sidebar_items=(["Talk: canal boat families", "Archive open morning"] if i == 0
                       else ["Archive open morning", "Walk: the old wharf and basin"]),
        related_title="Read more", related=["The manor and its tenants", "Millbrook in old photographs"],
        ad=("Publications", "New booklet: The Millbrook Wharf 1811-1937, £4.50 from the society."),
        comments_title="Comments", comments=[
            Comment("D. Ashworth", "2 August", "My great-grandfather was a boatman at the wharf in the 1880s. "
                    "I would love to see the census entries."),
        ],
        footer_lines=["Millbrook Local History Society, Village Hall, Church Lane.", "© 2025 MLHS · Contact us"],
        cookie_text="This site uses no tracking cookies.", theme="#3b5d2a",
    ))
