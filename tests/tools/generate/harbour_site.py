"""A small dynamic site served on 127.0.0.1 for the find and view tests: its data is the truth the tests check against.

- ``/vessels/``: 12 vessels (Vessel, Type, Length (m), Port), 5 per page behind a ``_next`` cursor link
  named "Next page"; header links sort (``_sort=length``, then ``_sort_desc=length``); type links filter
  (``type=ferry``, a real restriction); "Show facet: Type" toggles a facet panel (``_facet=type``, whose
  counts link to ``_facet=type&type=…``); "Facet by port" toggles another (``facet=port``); "Download CSV"
  (``as=csv``) shows the same rows as an export preview. Each vessel has its page ``/vessels/<slug>/``.
- ``/fleet.sqlite/``: a table whose first column is ``code`` (codes such as ``KS-01``, each linking to
  ``/fleet.sqlite/<code>``); ``/moorings.html``: other boats with the same columns but no codes, some
  sharing a colour or a type with the fleet's boats.
- ``/notes.html``: short prose; its first sentence also stands deep (after 2,000 characters) in the long
  ``/almanac.html``.
"""

from __future__ import annotations

import html
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlencode, urlparse

__all__ = ["serve_harbour", "VESSELS", "FLEET", "MOORINGS", "SHARED", "NOTES_OWN", "ALMANAC", "PAGE_SIZE"]

PAGE_SIZE = 5
#: (name, type, length in m, port)
VESSELS = [
    ("Albatross", "Ferry", 31, "Whitby"),
    ("Bittern", "Trawler", 18, "Filey"),
    ("Cormorant", "Yacht", 12, "Whitby"),
    ("Dunlin", "Ferry", 27, "Scarborough"),
    ("Eider", "Trawler", 21, "Whitby"),
    ("Fulmar", "Yacht", 9, "Filey"),
    ("Guillemot", "Ferry", 35, "Scarborough"),
    ("Heron", "Trawler", 16, "Whitby"),
    ("Ibis", "Yacht", 14, "Filey"),
    ("Jackdaw", "Ferry", 24, "Whitby"),
    ("Kittiwake", "Trawler", 19, "Scarborough"),
    ("Lapwing", "Yacht", 11, "Whitby"),
]
#: code → (name, type, colour, port)
FLEET = {
    "KS-01": ("Kestrel", "Ferry", "Red", "Whitby"),
    "OS-02": ("Osprey", "Trawler", "Blue", "Whitby"),
    "PT-03": ("Petrel", "Yacht", "Green", "Whitby"),
    "GN-04": ("Gannet", "Ferry", "White", "Scarborough"),
}
#: (name, type, colour, port): each colour of the fleet again, in another port
MOORINGS = [
    ("Merlin", "Ferry", "Red", "Filey"),
    ("Tern", "Trawler", "Blue", "Filey"),
    ("Skua", "Yacht", "Green", "Filey"),
    ("Auk", "Ferry", "White", "Filey"),
]
#: The sentence both /notes.html (first) and /almanac.html (after 2,000 characters) show.
SHARED = "Every spring the lock keepers repaint the iron bollards along the eastern quay."
#: A sentence only /notes.html shows.
NOTES_OWN = "Fishing crews gather at dawn to mend their nets beside the old smokehouse."
_FILLER = [
    "The tide tables printed here were gathered by volunteers who walked the shore with notebooks through every season of the year.",
    "Winter storms often push shingle across the slipway, and the council sends a small digger to clear it after each gale.",
    "Visitors who arrive by train can follow the painted footpath that winds from the station down towards the harbour wall.",
    "Local bakers still sell the heavy fruit loaves that sailors once carried aboard for long voyages to northern waters.",
    "Gulls nest on the chimney pots of the net lofts, and their chicks can be heard calling from the rooftops in early summer.",
    "The lifeboat crew trains on Tuesday evenings, launching from the station ramp whatever the weather happens to be.",
    "A brass plaque beside the chapel door lists the names of those who served as harbour masters since the town was founded.",
    "When the herring shoals returned in the autumn, whole families worked through the night salting fish in wooden barrels.",
    "The old ropewalk behind the market square is now a long narrow garden planted with lavender and sea kale.",
    "Children race paper boats along the mill stream every August, cheered on by a crowd gathered on the footbridge.",
    "Fog can settle in the bay within minutes, so the foghorn on the northern pier is tested at noon on the first Monday.",
    "The museum keeps a collection of ship models carved by retired fishermen during the long dark evenings of winter.",
    "Ferries to the islands leave from the inner basin, and tickets are sold from a green hut beside the ice plant.",
    "Stone steps cut into the cliff lead from the church to the beach, and there are one hundred and ninety nine of them.",
    "Cod, haddock and crab are landed most mornings and auctioned in the fish market before the cafes have opened.",
    "A weather vane shaped like a leaping salmon turns above the customs house and tells the skippers which way the wind blows.",
    "During the summer regatta the harbour fills with dinghies, rowing gigs and a brass band playing from a moored barge.",
    "The breakwater was lengthened twice in the last century after heavy seas broke over it and flooded the lower streets.",
    "Seals haul out on the sandbar at low water and can be watched from the bench at the end of the southern pier.",
    "Every net loft has a number painted above its door so that the owners could find them in the dark.",
]
#: The long page: filler prose, the shared sentence past 2,000 characters, more filler.
ALMANAC = " ".join(_FILLER[:18]) + " " + SHARED + " " + " ".join(_FILLER[18:])
_CSS = "body{font-family:sans-serif} table{border-collapse:collapse} td,th{padding:2px 6px}"


def _slug(name: str) -> str:
    return name.lower()


def _page(title: str, body: str) -> bytes:
    nav = '<nav><a href="/">Home</a> <a href="/vessels/">Vessels</a> <a href="/fleet.sqlite/">Fleet database</a> <a href="/moorings.html">Moorings</a> <a href="/notes.html">Harbour notes</a> <a href="/almanac.html">Almanac</a></nav>'
    text = f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title><style>{_CSS}</style></head><body>{nav}<main><h1>{html.escape(title)}</h1>{body}</main></body></html>"
    return text.encode()


def _link(query: dict[str, str], text: str) -> str:
    href = "/vessels/" + ("?" + urlencode(sorted(query.items())) if query else "")
    return f'<a href="{html.escape(href)}">{html.escape(text)}</a>'


def _vessels(query: dict[str, str]) -> bytes:
    rows = [v for v in VESSELS if "type" not in query or _slug(v[1]) == query["type"]]
    if "_sort" in query:
        rows.sort(key=lambda v: v[2] if query["_sort"] == "length" else v[0])
    elif "_sort_desc" in query:
        rows.sort(key=lambda v: v[2] if query["_sort_desc"] == "length" else v[0], reverse=True)
    start = next((i for i, v in enumerate(rows) if _slug(v[0]) == query.get("_next")), 0)
    shown = rows[start : start + PAGE_SIZE]
    keep = {k: v for k, v in query.items() if k != "_next"}
    length_sort = {
        **{k: v for k, v in keep.items() if not k.startswith("_sort")},
        **({"_sort_desc": "length"} if query.get("_sort") == "length" else {"_sort": "length"}),
    }
    body = [
        "<p>",
        *(_link({**{k: v for k, v in keep.items() if k != "type"}, "type": _slug(t)}, t) + " " for t in ("Ferry", "Trawler", "Yacht")),
        "</p><p>",
        _link({**keep, "_facet": "type"}, "Show facet: Type"),
        " ",
        _link({**keep, "facet": "port"}, "Facet by port"),
        " ",
        _link({**keep, "as": "csv"}, "Download CSV"),
        "</p>",
    ]
    if query.get("_facet") == "type":
        counts = {t: sum(v[1] == t for v in VESSELS) for t in ("Ferry", "Trawler", "Yacht")}
        body.append(
            "<div class='facet'><h2>Type</h2><ul>"
            + "".join(f"<li>{_link({**keep, 'type': _slug(t)}, f'{t} ({n})')}</li>" for t, n in counts.items())
            + "</ul></div>"
        )
    if query.get("facet") == "port":
        ports = sorted({v[3] for v in VESSELS})
        body.append(
            "<div class='facet'><h2>Ports</h2><ul>"
            + "".join(f"<li>{p}: {sum(v[3] == p for v in VESSELS)}</li>" for p in ports)
            + "</ul></div>"
        )
    if query.get("as") == "csv":
        body.append("<pre>" + html.escape("\n".join(",".join(map(str, v)) for v in rows)) + "</pre>")
    body.append(f"<p>{len(rows)} vessels</p>")
    body.append(
        "<table><thead><tr><th>Vessel</th><th>Type</th><th>"
        + _link(length_sort, "Length (m)")
        + "</th><th>Port</th></tr></thead><tbody>"
        + "".join(
            f'<tr><td><a href="/vessels/{_slug(v[0])}/">{v[0]}</a></td><td>{v[1]}</td><td>{v[2]}</td><td>{v[3]}</td></tr>' for v in shown
        )
        + "</tbody></table>"
    )
    if start + PAGE_SIZE < len(rows):
        body.append("<p>" + _link({**keep, "_next": _slug(rows[start + PAGE_SIZE][0])}, "Next page") + "</p>")
    return _page("Vessels", "".join(body))


def _fleet_table() -> str:
    rows = "".join(
        f'<tr><td><a href="/fleet.sqlite/{code}">{code}</a></td><td>{n}</td><td>{t}</td><td>{c}</td><td>{p}</td></tr>'
        for code, (n, t, c, p) in FLEET.items()
    )
    return f"<p>{len(FLEET)} rows</p><table><thead><tr><th>code</th><th>name</th><th>type</th><th>colour</th><th>port</th></tr></thead><tbody>{rows}</tbody></table>"


def _route(path: str, query: dict[str, str]) -> bytes | None:
    if path == "/":
        return _page("Harbour office", "<p>Records of the harbour and its boats.</p>")
    if path == "/vessels/":
        return _vessels(query)
    if path.startswith("/vessels/") and (v := next((v for v in VESSELS if path == f"/vessels/{_slug(v[0])}/"), None)):
        return _page(
            v[0],
            f"<dl><dt>Vessel</dt><dd>{v[0]}</dd><dt>Type</dt><dd>{v[1]}</dd><dt>Length (m)</dt><dd>{v[2]}</dd><dt>Port</dt><dd>{v[3]}</dd></dl>",
        )
    if path == "/fleet.sqlite/":
        return _page("fleet.sqlite", _fleet_table())
    if path.startswith("/fleet.sqlite/") and (code := path.rsplit("/", 1)[-1]) in FLEET:
        n, t, c, p = FLEET[code]
        return _page(
            f"{n} — fleet",
            f"<dl><dt>code</dt><dd>{code}</dd><dt>name</dt><dd>{n}</dd><dt>type</dt><dd>{t}</dd><dt>colour</dt><dd>{c}</dd><dt>port</dt><dd>{p}</dd></dl>",
        )
    if path == "/moorings.html":
        rows = "".join(f"<tr><td>{n}</td><td>{t}</td><td>{c}</td><td>{p}</td></tr>" for n, t, c, p in MOORINGS)
        return _page(
            "Moorings",
            f"<table><thead><tr><th>name</th><th>type</th><th>colour</th><th>port</th></tr></thead><tbody>{rows}</tbody></table>",
        )
    if path == "/notes.html":
        return _page("Harbour notes", f"<p>{SHARED}</p><p>{NOTES_OWN}</p>")
    if path == "/almanac.html":
        return _page("Almanac", f"<p>{ALMANAC}</p>")
    return None


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        parts = urlparse(self.path)
        body = _route(parts.path, dict(parse_qsl(parts.query)))
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        payload = body if body is not None else _page("Not found", "<p>No such page.</p>")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serve_harbour() -> Iterator[str]:
    """Serve the site on 127.0.0.1 (a free port) in a background thread; yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
