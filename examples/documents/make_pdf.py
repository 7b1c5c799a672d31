"""Render field-guide.html to field-guide.pdf with pymupdf's Story (run once; the PDF is committed).

The PDF gets an outline built from the rendered headings, so it exercises the
outline-confirmed heading path of the PDF parser like a real typeset document.
Usage: python examples/documents/make_pdf.py
"""

from __future__ import annotations

import re
from pathlib import Path

import pymupdf

HERE = Path(__file__).parent
CSS = """
body { font-family: serif; font-size: 10.5pt; line-height: 1.3; }
h1 { font-size: 18pt; font-weight: bold; text-align: center; }
h2 { font-size: 14pt; font-weight: bold; margin-top: 12pt; }
h3 { font-size: 12pt; font-weight: bold; margin-top: 8pt; }
p { text-align: justify; margin-bottom: 6pt; }
table { border-collapse: collapse; margin: 6pt 0; }
th, td { border: 0.5pt solid black; padding: 2pt 4pt; font-size: 9.5pt; }
figcaption, caption { font-size: 9.5pt; }
pre { font-family: monospace; font-size: 9pt; }
"""


def main() -> None:
    html = (HERE / "field-guide.html").read_text(encoding="utf-8")
    html = re.sub(r"<(script|style|nav|footer)\b.*?</\1>", "", html, flags=re.S)
    html = re.sub(r"<img\b[^>]*>", "<p><b>[Photograph: rain gauge on the community centre roof]</b></p>", html)
    story = pymupdf.Story(html=html, user_css=CSS)
    out = HERE / "field-guide.pdf"
    writer = pymupdf.DocumentWriter(str(out))
    mediabox = pymupdf.paper_rect("a4")
    where = mediabox + (60, 60, -60, -60)
    toc: list[list[object]] = []
    page = 0

    def record(position: object) -> None:
        level = getattr(position, "heading", 0)
        text = getattr(position, "text", "")
        if level and getattr(position, "open_close", 0) & 1 and level >= 2:
            toc.append([level - 1, text.strip(), page])

    more = True
    while more:
        page += 1
        device = writer.begin_page(mediabox)
        more, _ = story.place(where)
        story.element_positions(record)
        story.draw(device)
        writer.end_page()
    writer.close()
    doc = pymupdf.open(out)
    doc.set_toc(toc)
    doc.set_metadata({"title": "Running a Community Weather Station: A Field Guide", "author": "Harbourside Weather Volunteers"})
    doc.save(out, incremental=True, encryption=pymupdf.PDF_ENCRYPT_KEEP)
    print(f"wrote {out} ({doc.page_count} pages, {len(toc)} outline entries)")


if __name__ == "__main__":
    main()
