#!/usr/bin/env bash
# Fetch the real third-party PDFs the tests and benchmarks use, from Debian's packages, unpacked
# into tests/data/cache/: countreg.pdf (r-cran-pscl), lmer.pdf (r-cran-lme4), xtableGallery.pdf
# (r-cran-xtable), zoo.pdf (r-cran-zoo), generalsiminf.pdf (r-cran-multcomp), R-exts.pdf and
# fullrefman.pdf (r-doc-pdf; the 2,415-page reference manual is for bench/ingest.py only), and the
# long vignettes of the structure audit (bench/doc_audit.py --structure): crq.pdf (r-cran-quantreg,
# 26 pages, seven booktabs tables with spanning headers and group labels), strucplot.pdf (r-cran-vcd,
# 48 pages, many figures), sandwich-CL.pdf (r-cran-sandwich, 36 pages, run-in headings), adjcurve.pdf
# and survival.pdf (r-cran-survival, 26 and 98 pages of numbered sections), clm_article.pdf (r-cran-ordinal,
# 46 pages: tables whose columns are lists, raised marks after names, a lettered appendix after the references),
# MAXtest.pdf, Implementation.pdf and LegoCondInf.pdf (r-cran-coin: booktabs headers set on their first rule
# with no rule above, captions above their tables, a header repeated between stacked blocks, centred group
# labels, a double top rule), chfls1.pdf (r-cran-multcomp: group labels ending in a colon, table notes inside
# the rules), rq.pdf (r-cran-quantreg: estimates over their intervals) and validate.pdf (r-cran-survival: rows
# filled on the left only, a header stacked on two lines, vertical rules boxing a spanning header),
# paper2JSS.pdf (r-cran-fitdistrplus: 2 × 2 panels of plots with bold titles, strokes clipped at their frames)
# RcppEigen-Introduction.pdf (r-cran-rcppeigen: method names such as ".llt()" inside sentences) and intro.pdf
# (r-cran-psych: a caption set in one text block with the header and rows of the table under it), and from
# texlive-base the pdfTeX and Kpathsea manuals (pdftex-a.pdf: primitives listed in the outline whose entry
# lines carry their arguments and a pointer in the margin, code lines naming them; kpathsea.pdf: texinfo;
# luatex.pdf: running feet that put the page number before the chapter's title), and KOMA-Script's guide
# (scrguide-en.pdf, texlive-latex-recommended: 566 pages, tables set beside their captions); the documents of the
# seventh truth audit: partial-residuals.pdf (r-cran-effects: x₁² set as a superscript over a subscript that PyMuPDF
# puts in a block of its own, figure panels titled in small type under their captions), dotguide.pdf (graphviz-doc:
# footnotes between a paragraph's two halves, "Figures 7 and 8") and flexmix-intro.pdf (r-cran-flexmix: R's TRUE); and of
# the eighth: graphs.pdf (glpk-doc: headings with a raised footnote number, "Example" heading some pages at their top)
# and gbm.pdf (r-cran-gbm: a section's number and its three-row title read as four lines); and of the fourteenth:
# developers-reference.pdf (Sphinx: chapters opened by "CHAPTER" / "FIVE", running heads "8 Chapter 2. …"),
# lmrob_simulation.pdf (r-cran-robustbase) and pari-doc's tutorial.pdf (a chatty tutorial whose "Chapter 3" is another book's);
# and of the fifteenth: maint-guide.en.pdf, mixtools.pdf (r-cran-mixtools) and debian-faq.en.pdf (acronyms in brackets after
# their words, "Please see Section 6.1 …").
# Idempotent: fetches nothing when every PDF is already there, and only the packages of missing ones.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache="$here/cache"
declare -A package=(
  [countreg]=r-cran-pscl [lmer]=r-cran-lme4 [xtableGallery]=r-cran-xtable [zoo]=r-cran-zoo
  [generalsiminf]=r-cran-multcomp [R-exts]=r-doc-pdf [fullrefman]=r-doc-pdf
  [crq]=r-cran-quantreg [strucplot]=r-cran-vcd [sandwich-CL]=r-cran-sandwich
  [adjcurve]=r-cran-survival [survival]=r-cran-survival [clm_article]=r-cran-ordinal
  [MAXtest]=r-cran-coin [Implementation]=r-cran-coin [LegoCondInf]=r-cran-coin
  [chfls1]=r-cran-multcomp [rq]=r-cran-quantreg [validate]=r-cran-survival
  [paper2JSS]=r-cran-fitdistrplus [RcppEigen-Introduction]=r-cran-rcppeigen [intro]=r-cran-psych
  [RcppArmadillo-intro]=r-cran-rcpparmadillo [over]=r-cran-sp [Rcpp-jss-2011]=r-cran-rcpp
  [seriation]=r-cran-seriation [dbscan]=r-cran-dbscan [constparty]=r-cran-partykit
  [pdftex-a]=texlive-base [kpathsea]=texlive-base [luatex]=texlive-base [scrguide-en]=texlive-latex-recommended
  [partial-residuals]=r-cran-effects [dotguide]=graphviz-doc [flexmix-intro]=r-cran-flexmix [graphs]=glpk-doc [gbm]=r-cran-gbm
  [user]=mpich-doc [residual-shadings]=r-cran-vcd [coin]=r-cran-coin
  [latexdiff-man]=latexdiff [distributions]=r-cran-actuar [gmm_with_R]=r-cran-gmm [rubber]=rubber
  [bfst]=r-cran-mcmc [fasta_guide]=fasta3-doc
  [developers-reference]=developers-reference [lmrob_simulation]=r-cran-robustbase [tutorial]=pari-doc
  [maint-guide.en]=maint-guide [mixtools]=r-cran-mixtools [debian-faq.en]=debian-faq
)
missing=()
for name in "${!package[@]}"; do [ -s "$cache/$name.pdf" ] || missing+=("$name"); done
[ "${#missing[@]}" = 0 ] && exit 0
packages=()
for name in "${missing[@]}"; do packages+=("${package[$name]}"); done
mapfile -t packages < <(printf '%s\n' "${packages[@]}" | sort -u)
mkdir -p "$cache"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
if ! apt-get download "${packages[@]}" >/dev/null 2>&1; then
  apt-get update -qq >/dev/null
  apt-get download "${packages[@]}" >/dev/null
fi
for deb in ./*.deb; do dpkg -x "$deb" x; done
for name in "${missing[@]}"; do
  found=$(find x -name "$name.pdf" -o -name "$name.pdf.gz" | head -n1)
  [ -n "$found" ] || { echo "no $name.pdf in ${packages[*]}" >&2; exit 1; }
  case "$found" in *.gz) gzip -dc "$found" >"$cache/.$name.pdf.$$" ;; *) cp "$found" "$cache/.$name.pdf.$$" ;; esac
  mv "$cache/.$name.pdf.$$" "$cache/$name.pdf"  # readers never see half a file
done
echo "fetched ${missing[*]} into $cache"
