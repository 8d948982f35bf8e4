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
.tasks table{width:100%;table-layout:fixed}.tasks col.id{width:38%}
.chunk{content-visibility:auto;contain-intrinsic-size:auto 6400px}
.tasks th[tabindex]{cursor:pointer;text-decoration:underline dotted}
.tasks tbody.open th[scope=row]{font-weight:700}
.tasks tbody:nth-child(even){background:var(--band)}
.tasks th[scope=row]{font-family:ui-monospace,Menlo,Consolas,monospace;font-weight:400;overflow-wrap:anywhere}
td.p,td.f,td.r,td.e,td.m{white-space:nowrap;font-weight:600}
td.p{color:var(--pass)}td.f{color:var(--fail)}td.r{color:var(--review)}td.e{color:var(--error)}td.m{color:var(--missing)}
td.p::after{content:" pass"}td.f::after{content:" fail"}td.r::after{content:" needs a person"}
td.e::after{content:" error"}td.m::after{content:" not done"}
td.p::after,td.f::after,td.r::after,td.e::after,td.m::after{font-weight:400}
.legend span{margin-right:1em;white-space:nowrap}
td.strip{font:600 15px/1.3 ui-monospace,Menlo,Consolas,monospace;letter-spacing:.12em;overflow-wrap:anywhere}
td.strip .p{color:var(--pass)}td.strip .f{color:var(--fail)}td.strip .r{color:var(--review)}
td.strip .e{color:var(--error)}td.strip .m{color:var(--missing)}
details>summary{cursor:pointer;color:var(--muted)}
.attempt{margin:.4em 0 .6em;padding-left:8px;border-left:3px solid var(--line)}
.attempt h4{margin:0;font-size:.92em}
@media (max-width:600px){main{padding:10px}th,td{padding:3px 5px}td.p,td.f,td.r,td.e,td.m{white-space:normal}}
@media print{nav.toc,.filters{display:none}main{max-width:none}a{color:inherit}}
"""

SCRIPT = """
(function(){
var form=document.getElementById('task-filter');var table=document.getElementById('task-table');
if(!form||!table)return;
var bodies=Array.prototype.slice.call(table.querySelectorAll('tbody'));
var chunks=Array.prototype.slice.call(table.querySelectorAll('.chunk'));
var source=document.getElementById('task-details');var data=source?JSON.parse(source.textContent):null;
var out=document.getElementById('task-count');var texts=null;var timer=null;
for(var i=0;i<bodies.length;i++){bodies[i].__i=i;}
function words(i){
if(!data)return bodies[i].textContent;
var t=data.tasks[i];var parts=[bodies[i].querySelector('th').textContent,t[0],t[1]];
t[3].forEach(function(m){m.forEach(function(a){parts.push(a[2],a[3],a[4]);});});
return parts.join('\\n');}
function apply(){
var flag=(form.querySelector('input[name=show]:checked')||{}).value||'all';
var q=form.querySelector('input[type=search]').value.trim().toLowerCase();
if(q&&!texts){texts=bodies.map(function(b,i){return words(i).toLowerCase();});}
var shown=0;
for(var i=0;i<bodies.length;i++){
var b=bodies[i];var ok=(flag==='all'||b.classList.contains(flag))&&(!q||texts[i].indexOf(q)!==-1);
b.hidden=!ok;if(ok)shown++;}
chunks.forEach(function(c){c.hidden=!c.querySelector('tbody:not([hidden])');});
out.textContent='Showing '+shown+' of '+bodies.length+' tasks';
document.body.setAttribute('data-shown',String(shown));}
function node(tag,cls,text){var e=document.createElement(tag);if(cls)e.className=cls;
if(text!==undefined&&text!==null)e.textContent=text;return e;}
function detail(i){
var t=data.tasks[i];var td=node('td');td.colSpan=data.models.length+1;
td.appendChild(node('h4',null,'Input'));td.appendChild(node('pre',null,t[0]||'the golden set could not be read'));
td.appendChild(node('h4',null,'Expected outcome'));td.appendChild(node('pre',null,t[1]||'\u2013'));
if(t[2])td.appendChild(node('p','note','scorer: '+t[2]));
data.models.forEach(function(label,m){
t[3][m].forEach(function(a){
var mark=data.marks[a[1]]||['?',a[1]];var box=node('div','attempt');
var head=label+' \u00b7 attempt '+a[0]+' \u00b7 '+mark[0]+' '+mark[1];
if(a[5]!==null)head+=' \u00b7 TTFT '+a[5]+' ms';if(a[6]!==null)head+=' \u00b7 E2E '+a[6]+' ms';
box.appendChild(node('h4',null,head));box.appendChild(node('pre',null,a[2]||'(empty answer)'));
if(a[3])box.appendChild(node('p',null,'scorer: '+a[3]));if(a[4])box.appendChild(node('p',null,'error: '+a[4]));
td.appendChild(box);});
var r=t[4][m];if(r){var p=node('p','review',label+': a person said ');p.appendChild(node('strong',null,r[0]));
p.appendChild(document.createTextNode((r[1]?': '+r[1]:'')+' ('+(r[2]||'unnamed')+', '+r[3]+')'));td.appendChild(p);}});
var tr=node('tr','d');tr.appendChild(td);return tr;}
function toggle(b,open){
var row=b.querySelector('tr.d');if(row&&open!==true){row.remove();b.classList.remove('open');return;}
if(!row){b.appendChild(detail(b.__i));b.classList.add('open');}}
if(data){
table.addEventListener('click',function(e){var th=e.target.closest('th[scope=row]');if(th)toggle(th.closest('tbody'));});
table.addEventListener('keydown',function(e){var th=e.target.closest('th[scope=row]');
if(th&&(e.key==='Enter'||e.key===' ')){e.preventDefault();toggle(th.closest('tbody'));}});
var all=document.getElementById('open-all');
if(all)all.addEventListener('click',function(){bodies.forEach(function(b){if(!b.hidden)toggle(b,true);});});}
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
