/**
 * Hostile text an agent might send, for the renderer's XSS test: script
 * tags, event handlers, `javascript:` and other dangerous URLs, SVG and
 * MathML payloads, CSS tricks, and markdown link tricks. Every payload that
 * executes calls `window.__xss(<name>)`, which the test counts. The scripted
 * agent streams them with `/xss` (see README.md).
 */

export interface XssPayload {
  name: string
  payload: string
}

const hit = (name: string): string => `window.__xss('${name}')`

export const XSS_CORPUS: XssPayload[] = [
  // ---- HTML: scripts and event handlers ----
  { name: 'script', payload: `<script>${hit('script')}</script>` },
  { name: 'img-onerror', payload: `<img src=x onerror="${hit('img-onerror')}">` },
  { name: 'img-unquoted', payload: `<img src=x onerror=${hit('img-unquoted')}>` },
  { name: 'svg-onload', payload: `<svg onload="${hit('svg-onload')}"></svg>` },
  { name: 'svg-slash', payload: `<svg/onload=${hit('svg-slash')}>` },
  { name: 'svg-script', payload: `<svg><script>${hit('svg-script')}</script></svg>` },
  { name: 'svg-animate', payload: `<svg><animate onbegin="${hit('svg-animate')}" attributeName="x" dur="1s"/></svg>` },
  { name: 'svg-xlink', payload: `<svg><a xlink:href="javascript:${hit('svg-xlink')}"><text y="20">svg link</text></a></svg>` },
  {
    name: 'svg-use-data',
    payload: `<svg><use href="data:image/svg+xml,<svg id='x' xmlns='http://www.w3.org/2000/svg'><image href='x' onerror='${hit('svg-use-data')}'/></svg>#x"/></svg>`
  },
  { name: 'body-onload', payload: `<body onload="${hit('body-onload')}">` },
  { name: 'details-ontoggle', payload: `<details open ontoggle="${hit('details-ontoggle')}">toggle</details>` },
  { name: 'input-onfocus', payload: `<input autofocus onfocus="${hit('input-onfocus')}">` },
  { name: 'video-source', payload: `<video><source onerror="${hit('video-source')}"></video>` },
  { name: 'iframe-js', payload: `<iframe src="javascript:parent.${hit('iframe-js')}"></iframe>` },
  { name: 'iframe-srcdoc', payload: `<iframe srcdoc="<script>parent.${hit('iframe-srcdoc')}</script>"></iframe>` },
  { name: 'object', payload: `<object data="javascript:${hit('object')}"></object>` },
  { name: 'embed', payload: `<embed src="javascript:${hit('embed')}">` },
  { name: 'raw-anchor', payload: `<a href="javascript:${hit('raw-anchor')}">raw anchor</a>` },
  { name: 'anchor-entity', payload: `<a href="&#106;avascript:${hit('anchor-entity')}">entity anchor</a>` },
  { name: 'form-action', payload: `<form action="javascript:${hit('form-action')}"><button>go</button></form>` },
  { name: 'meta-refresh', payload: `<meta http-equiv="refresh" content="0;url=javascript:${hit('meta-refresh')}">` },
  { name: 'base-href', payload: `<base href="javascript:${hit('base-href')}//">` },
  { name: 'noscript-mxss', payload: `<noscript><p title="</noscript><img src=x onerror=${hit('noscript-mxss')}>">` },
  { name: 'math-mxss', payload: `<math><mtext><table><mglyph><style><img src=x onerror=${hit('math-mxss')}>` },
  { name: 'template', payload: `<template><script>${hit('template')}</script></template>` },
  { name: 'attr-breakout', payload: `"><script>${hit('attr-breakout')}</script>` },
  { name: 'entities', payload: `&lt;script&gt;${hit('entities')}&lt;/script&gt; &#60;img src=x onerror=${hit('entities')}&#62;` },
  // ---- CSS tricks ----
  { name: 'style-tag', payload: `<style>body{background:url("javascript:${hit('style-tag')}")} .markdown{display:none}</style>` },
  { name: 'style-import', payload: `<style>@import 'javascript:${hit('style-import')}';</style>` },
  { name: 'style-attr', payload: `<div style="background-image:url(javascript:${hit('style-attr')})">styled</div>` },
  { name: 'overlay', payload: `<div style="position:fixed;inset:0;z-index:9999;background:red">overlay</div>` },
  { name: 'link-stylesheet', payload: `<link rel="stylesheet" href="javascript:${hit('link-stylesheet')}">` },
  // ---- markdown link tricks ----
  { name: 'md-js', payload: `[md link](javascript:${hit('md-js')})` },
  { name: 'md-js-case', payload: `[md link](JaVaScRiPt:${hit('md-js-case')})` },
  { name: 'md-entity-colon', payload: `[md link](javascript&#58;${hit('md-entity-colon')})` },
  { name: 'md-hex-entity', payload: `[md link](&#x6A;avascript:${hit('md-hex-entity')})` },
  { name: 'md-tab-entity', payload: `[md link](java&#9;script:${hit('md-tab-entity')})` },
  { name: 'md-encoded-newline', payload: `[md link](java%0ascript:${hit('md-encoded-newline')})` },
  { name: 'md-angle', payload: `[md link](<javascript:${hit('md-angle')}>)` },
  { name: 'md-vbscript', payload: '[md link](vbscript:msgbox(1))' },
  { name: 'md-data-html', payload: '[md link](data:text/html;base64,PHNjcmlwdD53aW5kb3cuX194c3MoJ21kLWRhdGEtaHRtbCcpPC9zY3JpcHQ+)' },
  { name: 'md-reference', payload: `[reference link][evil]\n\n[evil]: javascript:${hit('md-reference')}` },
  { name: 'md-autolink', payload: `<javascript:${hit('md-autolink')}>` },
  { name: 'md-title-breakout', payload: `[titled](https://example.com "t\\" onmouseover=\\"${hit('md-title-breakout')}")` },
  { name: 'md-image-js', payload: `![md image](javascript:${hit('md-image-js')})` },
  { name: 'md-image-attr', payload: `![md image](x" onerror="${hit('md-image-attr')})` },
  {
    name: 'md-image-svg',
    payload:
      '![svg image](data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIG9ubG9hZD0id2luZG93Ll9feHNzKCdtZC1pbWFnZS1zdmcnKSIvPg==)'
  },
  { name: 'md-file-link', payload: '[a file outside](file:///etc/passwd)' },
  { name: 'code-span', payload: `\`<img src=x onerror=${hit('code-span')}>\`` },
  { name: 'fence-lang', payload: `\`\`\`" onmouseover="${hit('fence-lang')}\n<script>${hit('fence-lang')}</script>\n\`\`\`` },
  { name: 'fence-html', payload: `\`\`\`html\n<img src=x onerror="${hit('fence-html')}">\n<script>${hit('fence-html')}</script>\n\`\`\`` },
  { name: 'html-in-list', payload: `- item <img src=x onerror=${hit('html-in-list')}>\n- [list link](javascript:${hit('html-in-list')})` },
  { name: 'html-in-table', payload: `| a | b |\n|---|---|\n| <svg onload=${hit('html-in-table')}> | [t](javascript:${hit('html-in-table')}) |` }
]
