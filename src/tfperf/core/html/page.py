"""The one page shell every HTML report shares: its style (light, dark, print), its script
(sorting, hover values, collapsing) and the report's JSON document embedded in it.

Nothing here is fetched: no font, stylesheet, script or image comes from anywhere but this
file, so a report opens offline, from a copied file, with the network off.
"""

from __future__ import annotations

import html

from tfperf import __version__

# Every rule is under .tfperf, so a fragment in a notebook styles itself and nothing else.
STYLE = """
.tfperf{--bg:#fff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--card:#f6f8fa;
--accent:#0969da;--bar:#0969da;--bar2:#8250df;--good:#1a7f37;--warn:#9a6700;--bad:#cf222e;
--skip:#6e7781;--add:#dafbe1;--del:#ffebe9;
background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",
Roboto,"Helvetica Neue",Arial,sans-serif}
@media (prefers-color-scheme:dark){.tfperf{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;
--line:#3d444d;--card:#151b23;--accent:#4493f8;--bar:#4493f8;--bar2:#ab7df8;--good:#3fb950;
--warn:#d29922;--bad:#f85149;--skip:#9198a1;--add:#12361f;--del:#3c1618}}
body.tfperf{margin:0 auto;padding:1.5em 2em;max-width:70em}
.tfperf h1{font-size:1.5em;margin:.2em 0}.tfperf h2{font-size:1.2em;margin:1.4em 0 .4em;
border-bottom:1px solid var(--line);padding-bottom:.2em}.tfperf h3{font-size:1em;margin:1em 0 .3em}
.tfperf .sub,.tfperf .note{color:var(--muted)}.tfperf .note{font-size:.9em}
.tfperf table{border-collapse:collapse;margin:.4em 0;font-variant-numeric:tabular-nums}
.tfperf th,.tfperf td{border-bottom:1px solid var(--line);padding:.25em .6em;text-align:left;
vertical-align:top}.tfperf th{font-weight:600;white-space:nowrap}
.tfperf .scroll{overflow-x:auto;max-width:100%}.tfperf td{overflow-wrap:break-word}
.tfperf td.r,.tfperf th.r{text-align:right}.tfperf td.r{white-space:nowrap}
.tfperf table.sortable th{cursor:pointer;user-select:none}
.tfperf table.sortable th:after{content:" \\2195";color:var(--muted);font-size:.8em}
.tfperf th[aria-sort=ascending]:after{content:" \\2191"}
.tfperf th[aria-sort=descending]:after{content:" \\2193"}
.tfperf code,.tfperf pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;
font-size:.9em}.tfperf pre{background:var(--card);padding:.6em;overflow-x:auto;
border-radius:4px;white-space:pre-wrap}
.tfperf .badge{display:inline-block;padding:0 .45em;border-radius:3px;font-size:.8em;
font-weight:700;color:#fff;background:var(--skip);white-space:nowrap}
.tfperf .pass,.tfperf .holds,.tfperf .yes{background:var(--good)}
.tfperf .warn,.tfperf .direction{background:var(--warn)}
.tfperf .fail,.tfperf .no,.tfperf .error{background:var(--bad)}
.tfperf .info{background:var(--accent)}
.tfperf .loud{color:var(--bad);font-weight:600}
.tfperf svg{display:block;max-width:100%;height:auto;margin:.4em 0}
.tfperf svg text{fill:var(--fg);font-size:12px}.tfperf svg .axis{stroke:var(--line)}
.tfperf svg .tick{fill:var(--muted);font-size:11px}
.tfperf svg .bar{fill:var(--bar)}.tfperf svg .bar2{fill:var(--bar2)}
.tfperf svg .off{fill:var(--skip);opacity:.45}
.tfperf svg .whisker{stroke:var(--fg);stroke-width:1.5}
.tfperf svg .good{fill:var(--good)}.tfperf svg .warn{fill:var(--warn)}
.tfperf svg .bad{fill:var(--bad)}.tfperf svg .skip{fill:var(--skip)}
.tfperf svg [data-tip]:hover{opacity:.75}
.tfperf .meter{display:inline-block;width:5em;height:.7em;background:var(--card);
border:1px solid var(--line);vertical-align:middle;margin-right:.4em}
.tfperf .meter>span{display:block;height:100%;background:var(--bar)}
.tfperf details{margin:.3em 0}.tfperf summary{cursor:pointer}
.tfperf .card{border:1px solid var(--line);border-radius:6px;padding:.5em .8em;margin:.5em 0}
.tfperf .legend span{margin-right:1em;white-space:nowrap}
.tfperf .swatch{display:inline-block;width:.8em;height:.8em;margin-right:.3em;
vertical-align:middle}
.tfperf .diff .add{background:var(--add);display:block}
.tfperf .diff .del{background:var(--del);display:block}
.tfperf .diff .hunk{color:var(--accent);display:block}.tfperf .diff .ctx{display:block}
.tfperf .tools{float:right}.tfperf button{font:inherit;font-size:.85em;color:var(--fg);
background:var(--card);border:1px solid var(--line);border-radius:4px;padding:.1em .6em;
cursor:pointer}
.tfperf-tip{position:absolute;z-index:9;pointer-events:none;background:#1f2328;color:#fff;
font:12px system-ui,sans-serif;padding:.25em .5em;border-radius:3px;max-width:30em}
@media print{.tfperf{--bg:#fff;--fg:#000;--muted:#444;--line:#bbb;--card:#f4f4f4;
--add:#e6ffec;--del:#ffebe9}.tfperf .tools,.tfperf-tip{display:none}
body.tfperf{padding:0;max-width:none;font-size:10pt}.tfperf h2{break-after:avoid}
.tfperf table,.tfperf svg,.tfperf .card{break-inside:avoid}
.tfperf .badge{-webkit-print-color-adjust:exact;print-color-adjust:exact}
.tfperf svg *{-webkit-print-color-adjust:exact;print-color-adjust:exact}}
"""

# Plain JavaScript, no library: sortable tables, a tip that shows a mark's value on hover,
# expand/collapse all (and every section opened for printing). Binding twice is harmless, so
# a notebook showing several reports runs it once per report.
SCRIPT = r"""
(function(){"use strict";
function key(c){var v=c.getAttribute("data-value");if(v!==null&&v!==""&&!isNaN(+v))return +v;
return c.textContent.trim().toLowerCase();}
function sortBy(t,th,i){var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows),
up=th.getAttribute("aria-sort")!=="ascending";rows.sort(function(a,z){
var x=key(a.cells[i]),y=key(z.cells[i]);if(typeof x!==typeof y)return typeof x==="number"?-1:1;
return(x<y?-1:x>y?1:0)*(up?1:-1);});
Array.prototype.forEach.call(t.tHead.rows[0].cells,function(h){h.setAttribute("aria-sort","none");});
th.setAttribute("aria-sort",up?"ascending":"descending");
rows.forEach(function(r){b.appendChild(r);});}
document.querySelectorAll(".tfperf table.sortable").forEach(function(t){
if(t.getAttribute("data-bound"))return;t.setAttribute("data-bound","1");
Array.prototype.forEach.call(t.tHead.rows[0].cells,function(th,i){th.tabIndex=0;
th.setAttribute("aria-sort","none");th.addEventListener("click",function(){sortBy(t,th,i);});
th.addEventListener("keydown",function(e){if(e.key==="Enter"||e.key===" "){
e.preventDefault();sortBy(t,th,i);}});});});
document.querySelectorAll(".tfperf [data-tip]>title").forEach(function(t){t.remove();});
var tip=document.querySelector(".tfperf-tip");
if(!tip){tip=document.createElement("div");tip.className="tfperf-tip";tip.hidden=true;
document.body.appendChild(tip);
document.addEventListener("mouseover",function(e){var el=e.target.closest?
e.target.closest(".tfperf [data-tip]"):null;if(!el){tip.hidden=true;return;}
tip.textContent=el.getAttribute("data-tip");tip.hidden=false;});
document.addEventListener("mousemove",function(e){if(!tip.hidden){
tip.style.left=(e.pageX+14)+"px";tip.style.top=(e.pageY+14)+"px";}});}
document.querySelectorAll(".tfperf [data-details]").forEach(function(btn){
if(btn.getAttribute("data-bound"))return;btn.setAttribute("data-bound","1");
btn.addEventListener("click",function(){var open=btn.getAttribute("data-details")==="open";
btn.closest(".tfperf").querySelectorAll("details").forEach(function(d){d.open=open;});});});
if(!window.tfperfPrint){window.tfperfPrint=1;
window.addEventListener("beforeprint",function(){document.querySelectorAll(".tfperf details")
.forEach(function(d){if(!d.open){d.open=true;d.setAttribute("data-print","1");}});});
window.addEventListener("afterprint",function(){document.querySelectorAll(
".tfperf details[data-print]").forEach(function(d){d.open=false;
d.removeAttribute("data-print");});});}
})();
"""

_TOOLS = ('<div class="tools"><button type="button" data-details="open">expand all</button> '
          '<button type="button" data-details="close">collapse all</button></div>')


def _script_safe(text: str) -> str:
    """Text that cannot end the ``<script>`` element it sits in (nor open a comment)."""
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


def page(title: str, body: str, document: str) -> str:
    """A whole report: ``body`` (the view's HTML) in the shell, ``document`` (the report's
    JSON text, as ``--json`` prints it) embedded for whoever wants the figures back."""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
        "<meta name=\"color-scheme\" content=\"light dark\">"
        f"<meta name=\"generator\" content=\"tfperf {html.escape(__version__)}\">"
        # Nothing may be fetched: the page itself says so to the browser.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>\n"
        f"<body class=\"tfperf\">{_TOOLS}{body}\n"
        f"<script type=\"application/json\" id=\"tfperf-data\">{_script_safe(document)}"
        f"</script>\n<script>{SCRIPT}</script></body></html>\n")


def fragment(body: str) -> str:
    """The same report for a notebook's output area: scoped style, the script, no data."""
    return (f"<div class=\"tfperf\" style=\"padding:.5em\"><style>{STYLE}</style>{_TOOLS}{body}"
            f"<script>{SCRIPT}</script></div>")
