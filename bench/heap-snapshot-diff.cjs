'use strict'
/**
 * Two heap snapshots of the Host compared (host-heap-preload.cjs's P43_SNAPSHOT_AT writes them; not part of `npm run
 * bench`): `node bench/heap-snapshot-diff.cjs a.heapsnapshot b.heapsnapshot` gives the self size by node type and name in
 * each and what grew most; with `--retainers <type>` (default array), the nodes of that type in b grouped by their
 * first three retainers (a posting Map's table: `object:Map .table <- array <- object:Map .table`).
 */
const fs = require('node:fs')

function read(file) {
  const s = JSON.parse(fs.readFileSync(file, 'utf8'))
  const meta = s.snapshot.meta
  const field = (name) => meta.node_fields.indexOf(name)
  return {
    s,
    F: meta.node_fields.length,
    types: meta.node_types[0],
    type: field('type'),
    name: field('name'),
    size: field('self_size'),
    edges: field('edge_count')
  }
}

function bySelf(file) {
  const { s, F, types, type, name, size } = read(file)
  const groups = new Map()
  for (let i = 0; i < s.nodes.length; i += F) {
    const t = types[s.nodes[i + type]]
    const n = /string$/.test(t) ? '' : t === 'closure' ? 'closure' : String(s.strings[s.nodes[i + name]]).slice(0, 50)
    const key = `${t} | ${n}`
    const g = groups.get(key) ?? [0, 0]
    g[0]++
    g[1] += s.nodes[i + size]
    groups.set(key, g)
  }
  return groups
}

function retainers(file, want) {
  const { s, F, types, type, name, size, edges } = read(file)
  const meta = s.snapshot.meta
  const E = meta.edge_fields.length
  const edgeTypes = meta.edge_types[0]
  const [et, en, to] = ['type', 'name_or_index', 'to_node'].map((f) => meta.edge_fields.indexOf(f))
  const N = s.nodes.length / F
  const parent = new Int32Array(N).fill(-1)
  const via = new Array(N)
  for (let n = 0, e = 0; n < N; n++)
    for (let k = 0; k < s.nodes[n * F + edges]; k++, e += E) {
      const child = s.edges[e + to] / F
      const kind = edgeTypes[s.edges[e + et]]
      if (kind === 'weak' || kind === 'shortcut' || parent[child] !== -1) continue
      parent[child] = n
      via[child] = kind === 'element' || kind === 'hidden' ? `[${kind}]` : s.strings[s.edges[e + en]]
    }
  const label = (n) => `${types[s.nodes[n * F + type]]}:${String(s.strings[s.nodes[n * F + name]]).slice(0, 40)} .${via[n]}`
  const groups = new Map()
  for (let n = 0; n < N; n++) {
    if (types[s.nodes[n * F + type]] !== want) continue
    const chain = []
    for (let p = parent[n], c = 0; p >= 0 && c < 3; p = parent[p], c++) chain.push(label(p))
    const key = `.${via[n]} <- ${chain.join(' <- ')}`
    const g = groups.get(key) ?? [0, 0]
    g[0]++
    g[1] += s.nodes[n * F + size]
    groups.set(key, g)
  }
  return groups
}

const mb = (n) => (n / 1e6).toFixed(2)
const [a, b, flag, want] = process.argv.slice(2)
if (flag === '--retainers') {
  for (const [key, [count, bytes]] of [...retainers(b, want ?? 'array')].sort((x, y) => y[1][1] - x[1][1]).slice(0, 25))
    console.log(mb(bytes), count, key)
} else {
  const [x, y] = [bySelf(a), bySelf(b)]
  const total = (g) => [...g.values()].reduce((t, v) => t + v[1], 0)
  console.log(`self size ${mb(total(x))} -> ${mb(total(y))} MB; what grew most (MB, count):`)
  const rows = [...new Set([...x.keys(), ...y.keys()])].map((k) => [
    k,
    (y.get(k) ?? [0, 0])[1] - (x.get(k) ?? [0, 0])[1],
    (y.get(k) ?? [0, 0])[0] - (x.get(k) ?? [0, 0])[0]
  ])
  for (const [key, grew, count] of rows.sort((p, q) => q[1] - p[1]).slice(0, 20)) console.log(mb(grew), count, key)
}
