// The report's stylesheet and script, written here so they are source text (never trace data). The
// script only adds interaction (zoom, frame inspector, table filter and sort); every figure is in the
// markup already, so the page reads the same with JavaScript off. It never uses innerHTML: it moves
// and clones nodes the escaping writer already made. Both are kept readable here, one rule or
// statement a line, and written into the page compacted (`SourceMarkup`).

enum PageAssets {
    /// The stylesheet and the script as every page carries them (the script's hash is in the page's policy).
    static let pageStylesheet = SourceMarkup(compacting: stylesheet)
    static let pageScript = SourceMarkup(compacting: script)

    static let stylesheet: StaticString = """
    :root{--bg:#f7f7f5;--card:#fff;--ink:#1d1d1f;--mute:#6b6b70;--line:#e3e3e0;--grid:#ececea;--ok:#8fb3d9;--bad:#d93025;--warn:#e8a317;--good:#1e8e3e;--accent:#3867d6;--deadline:#9a9a9a;--hl:#fff4d6;
    --s0:#4e79a7;--s1:#f28e2b;--s2:#59a14f;--s3:#b07aa1;--s4:#76b7b2;--s5:#edc948;--s6:#ff9da7;--s7:#9c755f;--s8:#bab0ac;--s9:#e15759;
    --h0:#f6c28b;--h1:#f4a261;--h2:#f7b267;--h3:#f9c74f;--h4:#f2a65a;--h5:#eeb868;--h6:#f5cb5c;--h7:#f8961e}
    @media (prefers-color-scheme:dark){:root{--bg:#161618;--card:#202023;--ink:#ececee;--mute:#9a9aa2;--line:#34343a;--grid:#2a2a2f;--ok:#5b7fa8;--bad:#ff5f52;--warn:#f0b93a;--good:#4cc26a;--accent:#7aa2ff;--deadline:#8a8a90;--hl:#3a3320;
    --h0:#a0522d;--h1:#b5651d;--h2:#8b5a2b;--h3:#a67b2d;--h4:#9c5b24;--h5:#b0703a;--h6:#96652a;--h7:#a8561c}}
    *{box-sizing:border-box}
    html{-webkit-text-size-adjust:100%}
    body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
    bdi{unicode-bidi:isolate}
    main{max-width:1180px;margin:0 auto;padding:16px 20px 48px}
    header.top{padding:20px 0 8px}
    h1{font-size:24px;margin:0 0 4px;letter-spacing:-.01em;overflow-wrap:anywhere}
    h2{font-size:18px;margin:0 0 12px}
    h3{font-size:14px;margin:16px 0 8px;color:var(--mute);text-transform:uppercase;letter-spacing:.04em}
    .sub{color:var(--mute);margin:0;overflow-wrap:anywhere}
    nav.toc{display:flex;flex-wrap:wrap;gap:6px;margin:12px 0 4px}
    nav.toc a{font-size:13px;padding:3px 10px;border:1px solid var(--line);border-radius:999px;color:var(--ink);text-decoration:none;background:var(--card)}
    nav.toc a:hover{border-color:var(--accent)}
    section.card{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:16px 18px;margin:16px 0;min-width:0}
    .note{color:var(--mute);font-size:13px;margin:6px 0}
    .cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:12px}
    .verdict{border:1px solid var(--line);border-radius:10px;padding:12px 14px;border-left:6px solid var(--mute);min-width:0}
    .verdict.good{border-left-color:var(--good)}.verdict.warning{border-left-color:var(--warn)}.verdict.critical{border-left-color:var(--bad)}
    .verdict .rate{font-weight:600;color:var(--mute);font-size:12px;text-transform:uppercase;letter-spacing:.05em}
    .verdict .big{font-size:30px;font-weight:700;line-height:1.1;margin:4px 0}
    .verdict .big small{font-size:14px;font-weight:500;color:var(--mute)}
    .lead{display:grid;grid-template-columns:minmax(220px,300px) 1fr;gap:10px 28px;border:1px solid var(--line);border-radius:10px;padding:14px 16px;margin:0 0 14px;border-left:6px solid var(--mute);min-width:0}
    .lead.good{border-left-color:var(--good)}.lead.warning{border-left-color:var(--warn)}.lead.critical{border-left-color:var(--bad)}
    .lead .rate{font-weight:600;color:var(--mute);font-size:12px;text-transform:uppercase;letter-spacing:.05em}
    .lead .big{font-size:40px;font-weight:700;line-height:1.1;margin:4px 0}
    .lead .big small{font-size:15px;font-weight:500;color:var(--mute)}
    .lead-why{min-width:0}
    .whyline{font-size:17px;margin:2px 0 8px}
    .lead-label{color:var(--mute);font-size:13px;margin:10px 0 2px}
    ul.heaviest{margin:0 0 8px;padding-left:18px}
    ul.heaviest li{margin:2px 0}
    .verdictline{font-size:17px;margin:4px 0 10px}.verdictline.good{color:var(--good)}.verdictline.bad{color:var(--bad)}.verdictline.mute{color:var(--mute)}
    .badge{display:inline-block;font-size:12px;font-weight:600;padding:1px 8px;border-radius:999px;margin:2px 4px 2px 0;border:1px solid currentColor}
    .badge.good{color:var(--good)}.badge.warning{color:var(--warn)}.badge.critical,.badge.bad{color:var(--bad)}.badge.neutral{color:var(--mute)}
    dl.facts{display:grid;grid-template-columns:auto 1fr;gap:2px 12px;margin:8px 0 0;font-size:13px}
    dl.facts dt{color:var(--mute)}dl.facts dd{margin:0;font-variant-numeric:tabular-nums;overflow-wrap:anywhere}
    .stats{display:flex;flex-wrap:wrap;gap:10px 28px;margin:8px 0}
    .stat .v{font-size:22px;font-weight:700;font-variant-numeric:tabular-nums}
    .stat .k{font-size:12px;color:var(--mute)}
    svg.chart{width:100%;height:auto;display:block;overflow:visible}
    svg.chart.narrow{max-width:680px}
    caption{caption-side:bottom;text-align:left}
    svg .grid{stroke:var(--grid);stroke-width:1}
    svg .axisline{stroke:var(--mute);stroke-width:1}
    svg .axis{fill:var(--mute);font-size:11px}
    svg .lbl{fill:var(--ink);font-size:12px}
    svg .small{font-size:10.5px}
    svg .deadline{stroke:var(--deadline);stroke-width:1;stroke-dasharray:5 4}
    svg .deadline-label{font-size:10px}
    svg .marker{stroke:var(--accent);stroke-width:1.5}
    svg .marker-label{fill:var(--accent)}
    svg .bar.ok{fill:var(--ok)}
    svg .bar.hitch{fill:var(--bad)}
    svg .bar.clipped{fill:var(--bad);stroke:var(--ink);stroke-width:.5}
    svg a:hover .bar,svg .bar:hover{opacity:.7}
    svg .s0{fill:var(--s0)}svg .s1{fill:var(--s1)}svg .s2{fill:var(--s2)}svg .s3{fill:var(--s3)}svg .s4{fill:var(--s4)}
    svg .s5{fill:var(--s5)}svg .s6{fill:var(--s6)}svg .s7{fill:var(--s7)}svg .s8{fill:var(--s8)}svg .s9{fill:var(--s9)}
    svg .roof{fill:none;stroke:var(--ink)}
    svg .pt{stroke:var(--card);stroke-width:1}
    svg .link{fill:none;stroke:var(--accent);stroke-opacity:.35}
    svg .link:hover{stroke-opacity:.8}
    svg .node.cause{fill:var(--hl);stroke:var(--warn)}
    svg .node.effect{fill:var(--card);stroke:var(--accent)}
    svg .flame{stroke:var(--card);stroke-width:.5}
    svg .h0{fill:var(--h0)}svg .h1{fill:var(--h1)}svg .h2{fill:var(--h2)}svg .h3{fill:var(--h3)}
    svg .h4{fill:var(--h4)}svg .h5{fill:var(--h5)}svg .h6{fill:var(--h6)}svg .h7{fill:var(--h7)}
    svg .flame-label{fill:#1d1d1f;pointer-events:none}
    svg .fl:hover .flame{opacity:.75}
    .legend{list-style:none;display:flex;flex-wrap:wrap;gap:4px 14px;padding:0;margin:4px 0 8px;font-size:12px}
    .legend li{display:flex;align-items:center;gap:5px;min-width:0}
    .swatch{display:inline-block;width:11px;height:11px;border-radius:2px;flex:none}
    .swatch.s0{background:var(--s0)}.swatch.s1{background:var(--s1)}.swatch.s2{background:var(--s2)}.swatch.s3{background:var(--s3)}.swatch.s4{background:var(--s4)}
    .swatch.s5{background:var(--s5)}.swatch.s6{background:var(--s6)}.swatch.s7{background:var(--s7)}.swatch.s8{background:var(--s8)}.swatch.s9{background:var(--s9)}
    .hbars{display:grid;grid-template-columns:minmax(min-content,34%) 1fr auto;gap:4px 10px;align-items:center;font-size:13px}
    .hbar{display:contents}
    .hbar-label{min-width:0}
    .hbar-track{background:var(--grid);border-radius:3px;height:12px;overflow:hidden;min-width:40px}
    .hbar-fill{display:block;height:100%;border-radius:3px}
    .hbar-fill.s0{background:var(--s0)}.hbar-fill.s1{background:var(--s1)}.hbar-fill.s2{background:var(--s2)}.hbar-fill.s3{background:var(--s3)}.hbar-fill.s4{background:var(--s4)}
    .hbar-fill.s5{background:var(--s5)}.hbar-fill.s6{background:var(--s6)}.hbar-fill.s7{background:var(--s7)}.hbar-fill.s8{background:var(--s8)}.hbar-fill.s9{background:var(--s9)}
    .hbar.hl .hbar-fill{background:var(--bad)}
    .hbar-value{font-variant-numeric:tabular-nums;color:var(--mute);white-space:nowrap;text-align:right}
    .scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;max-width:100%}
    table{border-collapse:collapse;width:100%;font-size:13px}
    th,td{padding:5px 8px;border-bottom:1px solid var(--line);text-align:right;vertical-align:top;font-variant-numeric:tabular-nums}
    th{font-weight:600;color:var(--mute);font-size:12px;white-space:nowrap;position:sticky;top:0;background:var(--card)}
    td{white-space:nowrap}
    td.wrap{white-space:normal;text-align:left;min-width:16em}
    th:first-child,td:first-child{text-align:left;min-width:9em;max-width:340px;white-space:normal}
    th[data-sortable]{cursor:pointer}th[data-sortable]:hover{color:var(--ink)}
    tr.hl td{background:var(--hl)}
    td .bad,.delta.worse{color:var(--bad);font-weight:600}.delta.better{color:var(--good);font-weight:600}.delta.same{color:var(--mute)}
    input.filter{font:inherit;padding:5px 9px;border:1px solid var(--line);border-radius:8px;background:var(--bg);color:var(--ink);margin:0 0 8px;width:min(320px,100%)}
    .grid2{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:16px;min-width:0}
    .grid2>*{min-width:0}
    .compare{display:grid;grid-template-columns:1fr 1fr;gap:16px}
    .compare>*{min-width:0}
    .compare.stacked{grid-template-columns:1fr}
    .runlabel{font-size:12px;font-weight:700;color:var(--mute);text-transform:uppercase;letter-spacing:.05em;margin:0 0 6px}
    details.frame{border:1px solid var(--line);border-radius:8px;padding:6px 10px;margin:6px 0}
    details.frame>summary{cursor:pointer;font-variant-numeric:tabular-nums}
    details.frame .target:target,details.frame:has(.target:target){outline:2px solid var(--accent);outline-offset:3px}
    .inspector{border:1px dashed var(--accent);border-radius:8px;padding:8px 12px;margin:10px 0}
    .inspector:empty{display:none}
    .zoomctl{display:flex;gap:6px;margin:6px 0}
    .zoomctl button{font:inherit;font-size:12px;padding:2px 10px;border:1px solid var(--line);border-radius:6px;background:var(--card);color:var(--ink);cursor:pointer}
    details.more>summary{cursor:pointer;color:var(--accent);margin:8px 0}
    @media (max-width:700px){.scroll.wide>svg{min-width:720px}.scroll.wide>svg.graph{min-width:900px}}
    svg.chart.graph{max-width:900px}
    svg .graph-label{font-size:14px}
    ol.stack{overflow-x:auto;margin:4px 0;padding-left:22px;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
    ol.stack li{min-width:0}
    code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;overflow-wrap:anywhere}
    .meter{position:relative;height:22px;border-radius:6px;background:var(--grid);overflow:hidden;display:flex}
    .meter>span{display:block;height:100%}
    .meter .s0{background:var(--s0)}.meter .s1{background:var(--s1)}.meter .s2{background:var(--s2)}.meter .s3{background:var(--s3)}.meter .s4{background:var(--s4)}.meter .s5{background:var(--s5)}
    .meter .over{background:var(--bad)}
    footer{color:var(--mute);font-size:12px;margin-top:24px;overflow-wrap:anywhere}
    @media (max-width:700px){main{padding:10px 10px 32px}h1{font-size:20px}section.card{padding:12px;border-radius:10px}
    .compare{grid-template-columns:1fr}.lead{grid-template-columns:1fr}.lead .big{font-size:32px}.hbars{grid-template-columns:1fr auto}.hbar-label{grid-column:1/-1}.verdict .big{font-size:26px}th,td{padding:4px 5px}}
    @media print{nav.toc,.zoomctl,input.filter{display:none}section.card{break-inside:avoid}}
    """

    static let script: StaticString = """
    (function(){'use strict';
    function svgZoom(svg){
      var box=svg.viewBox.baseVal,full={x:box.x,w:box.width},wrap=document.createElement('div');
      wrap.className='zoomctl';
      function set(x,w){w=Math.max(full.w/64,Math.min(full.w,w));x=Math.max(full.x,Math.min(full.x+full.w-w,x));
        svg.setAttribute('viewBox',x+' '+box.y+' '+w+' '+box.height);}
      function btn(label,f){var b=document.createElement('button');b.type='button';b.textContent=label;b.addEventListener('click',f);wrap.appendChild(b);}
      btn('Zoom in',function(){set(box.x+box.width/4,box.width/2);});
      btn('Zoom out',function(){set(box.x-box.width/2,box.width*2);});
      btn('Reset',function(){set(full.x,full.w);});
      svg.parentNode.insertBefore(wrap,svg);
      svg.addEventListener('wheel',function(e){if(!e.ctrlKey&&!e.metaKey)return;e.preventDefault();
        var r=svg.getBoundingClientRect(),fx=(e.clientX-r.left)/r.width,cx=box.x+fx*box.width,nw=box.width*(e.deltaY<0?0.8:1.25);
        set(cx-fx*nw,nw);},{passive:false});
      var drag=null;
      svg.addEventListener('pointerdown',function(e){if(box.width>=full.w)return;drag={x:e.clientX,bx:box.x};});
      window.addEventListener('pointerup',function(){drag=null;});
      svg.addEventListener('pointermove',function(e){if(!drag)return;var r=svg.getBoundingClientRect();
        set(drag.bx-(e.clientX-drag.x)/r.width*box.width,box.width);});
    }
    document.querySelectorAll('svg[data-zoom]').forEach(svgZoom);
    document.addEventListener('click',function(e){
      var a=e.target.closest&&e.target.closest('a[href^="#"]');if(!a)return;
      var target=document.getElementById(a.getAttribute('href').slice(1));if(!target)return;
      var frame=target.closest('details.frame');if(!frame)return;
      var inspector=document.getElementById(a.closest('[data-inspector]')?a.closest('[data-inspector]').getAttribute('data-inspector'):'');
      for(var d=frame;d;d=d.parentElement&&d.parentElement.closest('details')){d.open=true;}
      if(inspector&&a.closest('svg')){e.preventDefault();inspector.replaceChildren(frame.cloneNode(true));
        inspector.firstChild.removeAttribute('id');inspector.querySelectorAll('[id]').forEach(function(n){n.removeAttribute('id');});}
    });
    document.querySelectorAll('input.filter').forEach(function(input){
      var table=document.getElementById(input.getAttribute('data-table'));if(!table)return;
      input.addEventListener('input',function(){var q=input.value.toLowerCase();
        table.querySelectorAll('tbody tr').forEach(function(tr){tr.style.display=tr.cells[0].textContent.toLowerCase().indexOf(q)>=0?'':'none';});});
    });
    document.querySelectorAll('th[data-sortable]').forEach(function(th){
      th.addEventListener('click',function(){var table=th.closest('table'),body=table.tBodies[0],i=th.cellIndex,desc=th.getAttribute('data-dir')!=='desc';
        th.setAttribute('data-dir',desc?'desc':'asc');
        var rows=Array.prototype.slice.call(body.rows);
        rows.sort(function(a,b){var x=a.cells[i].getAttribute('data-v'),y=b.cells[i].getAttribute('data-v');
          var c=(x!==null&&y!==null)?(parseFloat(x)-parseFloat(y)):a.cells[i].textContent.localeCompare(b.cells[i].textContent);return desc?-c:c;});
        rows.forEach(function(r){body.appendChild(r);});});
    });
    })();
    """
}

/// Stylesheet or script text from this module's source, compacted: each line's indentation dropped and
/// the lines joined. Lines that end in `{`, `}`, `;` or `,` join with nothing, others with one space, so
/// the text means the same to a browser as long as it holds no `//` comment (the assets above hold none)
/// and no string runs over a line end.
struct SourceMarkup: Sendable {
    let text: String

    init(compacting source: StaticString) {
        var text = ""
        for line in source.description.split(separator: "\n") {
            let trimmed = line.trimmingPrefix { $0 == " " }.reversed().drop { $0 == " " }.reversed()
            guard !trimmed.isEmpty else { continue }
            if let last = text.last, !"{};,".contains(last) { text += " " }
            text += String(trimmed)
        }
        self.text = text
    }
}
