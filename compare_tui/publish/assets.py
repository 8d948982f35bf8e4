"""The bundle's stylesheet and script, inlined into every page and allowed by hash in its
Content-Security-Policy (`default-src 'none'`: nothing else may load, run or connect).

The script only filters and searches the task table that is already in the page; without
it (printing, scripts off) every task shows. It never makes a request.
"""

from __future__ import annotations

import base64
import hashlib

STYLE = """
:root{--fg:#1b1b1b;--muted:#555;--bg:#fff;--line:#d0d0d0;--band:#f4f4f4;
--pass:#0072B2;--fail:#D55E00;--review:#6b6b6b;--error:#CC79A7;--missing:#999;color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--fg:#e8e8e8;--muted:#aaa;--bg:#141414;--line:#3a3a3a;--band:#1f1f1f;
--pass:#56B4E9;--fail:#E69F00;--review:#bbb;--error:#CC79A7;--missing:#777}}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:1180px;margin:0 auto;padding:16px}
h1{font-size:1.5rem;margin:.2em 0}h2{font-size:1.2rem;margin:1.6em 0 .5em;border-bottom:1px solid var(--line)}
h3{font-size:1rem;margin:1em 0 .3em}
p,li{overflow-wrap:anywhere}
.muted,.note{color:var(--muted)}.note{font-size:.9em}
nav.toc{display:flex;flex-wrap:wrap;gap:.3em 1em;font-size:.9em}
code,pre{font:13px/1.4 ui-monospace,Menlo,Consolas,monospace}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--band);padding:6px 8px;margin:.2em 0;border-radius:3px}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:.92em}
caption{text-align:left;caption-side:top;padding:2px 0}
th,td{border-bottom:1px solid var(--line);padding:3px 8px;text-align:left;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.lead{font-size:1.1em;font-weight:600;padding:8px 12px;border-left:5px solid var(--pass);background:var(--band)}
.lead.keep{border-left-color:var(--review)}
.banner{padding:8px 12px;border-left:5px solid var(--fail);background:var(--band);margin:.5em 0}
.plots{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,440px),1fr));gap:12px}
svg.plot{max-width:100%;height:auto;color:var(--fg)}svg .grid{stroke:var(--line)}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:.3em 0}dl.kv dt{color:var(--muted)}
dl.kv dd{margin:0;overflow-wrap:anywhere}
.filters{display:flex;flex-wrap:wrap;gap:6px 14px;align-items:center;margin:.5em 0}
.filters input[type=search]{font:inherit;padding:3px 6px;min-width:12em;max-width:100%}
#tasks table{width:100%}
#tasks tbody:nth-child(even){background:var(--band)}
#tasks th[scope=row]{font-family:ui-monospace,Menlo,Consolas,monospace;font-weight:400;overflow-wrap:anywhere}
td.p,td.f,td.r,td.e,td.m{white-space:nowrap;font-weight:600}
td.p{color:var(--pass)}td.f{color:var(--fail)}td.r{color:var(--review)}td.e{color:var(--error)}td.m{color:var(--missing)}
td.p::after{content:" pass"}td.f::after{content:" fail"}td.r::after{content:" needs a person"}
td.e::after{content:" error"}td.m::after{content:" not done"}
td.p::after,td.f::after,td.r::after,td.e::after,td.m::after{font-weight:400}
.legend span{margin-right:1em;white-space:nowrap}
details>summary{cursor:pointer;color:var(--muted)}
.attempt{margin:.4em 0 .6em;padding-left:8px;border-left:3px solid var(--line)}
.attempt h4{margin:0;font-size:.92em}
@media (max-width:600px){main{padding:10px}th,td{padding:3px 5px}.hide-narrow{display:none}}
@media print{nav.toc,.filters{display:none}main{max-width:none}a{color:inherit}}
"""

SCRIPT = """
(function(){
var form=document.getElementById('task-filter');if(!form)return;
var bodies=Array.prototype.slice.call(document.querySelectorAll('#task-table>tbody'));
var out=document.getElementById('task-count');var texts=null;var timer=null;
function apply(){
var flag=(form.querySelector('input[name=show]:checked')||{}).value||'all';
var q=form.querySelector('input[type=search]').value.trim().toLowerCase();
if(q&&!texts){texts=bodies.map(function(b){return b.textContent.toLowerCase();});}
var shown=0;
for(var i=0;i<bodies.length;i++){
var b=bodies[i];var ok=(flag==='all'||b.classList.contains(flag))&&(!q||texts[i].indexOf(q)!==-1);
b.hidden=!ok;if(ok)shown++;}
out.textContent='Showing '+shown+' of '+bodies.length+' tasks';
document.body.setAttribute('data-shown',String(shown));
}
form.addEventListener('change',apply);
form.addEventListener('input',function(){clearTimeout(timer);timer=setTimeout(apply,120);});
form.addEventListener('submit',function(e){e.preventDefault();apply();});
apply();
})();
"""


def csp_hash(text: str) -> str:
    """The CSP source expression that allows exactly this inline text."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; style-src {csp_hash(STYLE)}; script-src {csp_hash(SCRIPT)}; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)
"""Nothing may be fetched, framed or connected to; only this page's own style and script run."""
