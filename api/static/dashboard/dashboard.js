// citegraph dashboard: a science map of the store in the browser, and a client of the GraphQL API only.
//
// Views (the `view` URL parameter): `map`, a co-citation network drawn with sigma.js (WebGL) over a graphology
// graph, laid out by ForceAtlas2 in a web worker (graphology-library's FA2Layout), node size by citations,
// colour by cluster (the legend names the clusters) or by average year (a colour bar), burst rings, labels
// that thin out as you zoom out (sigma's label grid); `timeline`, the clusters as lanes over the years
// (CiteSpace's timeline view); `ego`, one paper's citation neighbourhood (egoNetwork).
// Clicking a node or an edge opens its details (the papers citing a work; the documents citing both ends of an
// edge, its counts per year), paged; every filter and the selection live in the URL, so a view can be shared,
// reloaded and left with the browser's Back button. The map comes from `mapNetwork` where the server has it
// (its units read by introspection), else from the store's co-cited pairs (`coCitationPairs`, clustered in
// the browser by Louvain). Export: PNG and SVG of the screen, GraphML/GEXF/VOSviewer/CSV of the same subgraph
// through `exportNetwork` (the project's exporters).
//
// Plain JavaScript, no build step; the libraries come from the local npm packages (/assets). For tests and
// benchmarks the page keeps `window.citegraphMap` (what is drawn, layout state), performance marks
// (`map:request`, `map:data`, `map:drawn`) and measures (`map:filter-to-drawn`, `map:data-to-drawn`, and
// `graphql:<operation>` for every request), and `window.citegraph` exposes `draw(network)`.
"use strict";

const ENDPOINT = "/graphql";
const $ = (id) => document.getElementById(id);
// Paul Tol's "muted" scheme: nine colours told apart under every common colour-vision deficiency.
const PALETTE = ["#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255", "#AA4499"];
const OTHER = "#BBBBBB";
const VIRIDIS = ["#440154", "#3b528b", "#21918c", "#5ec962", "#fde725"]; // colour-blind-safe sequential (overlay)
const PAGE = 10; // papers per page in the details panel
const PAIR_PAGE = 200; // coCitationPairs page size (the server's default max_results)
const DEFAULTS = {
  view: "map", unit: "REFERENCES", measure: "COUNT", min: "2", top: "500", color: "cluster", from: "", to: "",
  seed: "", cluster: "", sel: "", edge: "", paper: "", depth: "2", direction: "BOTH", limit: "60", co: "",
  search: "", passage: "", citance: "",
};
const MAP_KEYS = ["unit", "measure", "min", "top", "from", "to", "seed", "cluster"];

// ---------------------------------------------------------------------------------------------- queries
const CAPABILITIES = `query Capabilities {
  query: __type(name: "Query") { fields { name } }
  units: __type(name: "MapUnit") { enumValues { name } }
}`;
const UNITS = `query Units { mapUnits { unit built command } }`;
const MAP = `query Map($unit: MapUnit!, $yearMin: Int, $yearMax: Int, $minCount: Int, $measure: MapMeasure, $top: Int,
  $seed: ID, $clusterId: Int) {
  mapNetwork(unit: $unit, yearMin: $yearMin, yearMax: $yearMax, minCount: $minCount, measure: $measure, top: $top,
    seed: $seed, clusterId: $clusterId) {
    unit truncated
    nodes { id label weight year avgYear firstYear cluster clusterLabel burstStrength burstBegin burstEnd betweenness
      sigma }
    edges { source target count strength }
  }
}`;
const PAIRS = `query Pairs($measure: CoCitationMeasure!, $minCount: Int!, $yearMin: Int, $yearMax: Int, $first: Int!,
  $after: String) {
  coCitationPairs(measure: $measure, minCount: $minCount, yearMin: $yearMin, yearMax: $yearMax, first: $first,
    after: $after) {
    pageInfo { hasNextPage endCursor }
    edges { node { source { id label year nCited } target { id label year nCited } count association cosine
      jaccard inclusion } }
  }
}`;
const SEARCH = `query Search($text: String!, $id: ID!, $first: Int!) {
  byId: paper(id: $id) { id label title year nCited }
  papers(search: $text, first: $first) { totalCount edges { node { id label title year nCited } } }
  authors(search: $text, first: 5) { totalCount edges { node { id name
    papers(first: 5) { edges { node { id label title year nCited } } } } } }
}`;
const NODE = `query Node($id: ID!, $first: Int!, $after: String) {
  paper(id: $id) { id label title year venue doi arxivId nCited stub reference authors { name }
    citedBy(first: $first, after: $after) { totalCount pageInfo { hasNextPage endCursor }
      edges { node { id label year } } } }
}`;
const PAIR = `query Pair($source: ID!, $target: ID!, $first: Int!, $after: String) {
  coCitationPair(source: $source, target: $target) {
    __typename
    ... on CoCitationPair { label count sentenceCount association cosine jaccard inclusion
      countsByYear { year count }
      citedBy(first: $first, after: $after) { totalCount pageInfo { hasNextPage endCursor }
        edges { node { id label year } } } }
    ... on NotFound { message }
  }
}`;
const EDGE_DOCUMENTS = `query EdgeDocuments($unit: MapUnit!, $source: ID!, $target: ID!, $yearMin: Int,
  $yearMax: Int, $first: Int!, $after: String) {
  mapEdgeDocuments(unit: $unit, source: $source, target: $target, yearMin: $yearMin, yearMax: $yearMax, first: $first,
    after: $after) { totalCount pageInfo { hasNextPage endCursor } edges { node { id label year } } }
}`;
// What the documents behind a link are, per unit (the panel's heading).
const EDGE_DOCUMENT_TITLES = {
  AUTHORS: "Documents citing both", SOURCES: "Documents citing both", COAUTHORS: "Papers written together",
  INSTITUTIONS: "Papers written together", COUNTRIES: "Papers written together",
  KEYWORDS: "Documents with both keywords", COUPLING: "References both cite",
};
const TIMELINE = `query Timeline($yearMin: Int, $yearMax: Int) {
  clusterTimeline(first: 20, yearMin: $yearMin, yearMax: $yearMax) { cluster label years { year citations } }
}`;
const EXPORT = `query Export($format: ExportFormat!, $measure: CoCitationMeasure!, $nodes: [ExportNodeInput!]!,
  $edges: [ExportEdgeInput!]!) {
  exportNetwork(format: $format, measure: $measure, nodes: $nodes, edges: $edges) { name mediaType content }
}`;
const EGO = `query Ego($id: ID!, $depth: Int!, $direction: Direction!, $limit: Int!, $co: Boolean!) {
  egoNetwork(paperId: $id, depth: $depth, direction: $direction, limit: $limit, includeCoCitation: $co) {
    __typename
    ... on EgoNetwork { seed truncated reached
      nodes { id label title year nCited cluster clusterLabel hops }
      edges { source target kind weight } }
    ... on NotFound { message }
  }
}`;
const COCITED = `query CoCited($id: ID!) {
  coCitations(paperId: $id, measure: ASSOCIATION, first: 15) {
    __typename
    ... on CoCitationList { pairs { target { id label title year } count association } }
    ... on NotFound { message }
  }
}`;
const RECOMMEND = `query Recommend($context: String!, $yearMax: Int) {
  recommend(input: {context: $context, k: 10, yearMax: $yearMax}) {
    __typename
    ... on Recommendations { candidates seconds items { rank score why paper { id label title year } } }
    ... on RecommendUnavailable { reason message }
  }
}`;
const CITANCE_LINKS = `query CitanceLinks($id: ID!) {
  citanceLinks(paperId: $id, first: 20) {
    __typename
    ... on CitanceLinks { totalCount truncated
      links { citingPaperId citingText citedSid citedText method score annotator } }
    ... on NotFound { message }
  }
}`;
const LINKAGE = `query Linkage($sentence: String!, $id: ID!) {
  linkage(citingSentence: $sentence, paperId: $id, k: 5) {
    __typename
    ... on Linkage { sentences { sid section text score linked } }
    ... on LinkageUnavailable { reason message }
  }
}`;

/** POST one operation; its round trip is recorded as the performance measure `graphql:<operation name>`. */
async function graphql(query, variables) {
  const started = performance.now();
  try {
    return await post(query, variables);
  } finally {
    const name = (/^\s*query\s+(\w+)/.exec(query) || [])[1] || "anonymous";
    performance.measure(`graphql:${name}`, { start: started, end: performance.now() });
  }
}

async function post(query, variables) {
  const headers = { "content-type": "application/json" };
  const key = $("api-key").value.trim();
  if (key) headers["authorization"] = `Bearer ${key}`;
  const response = await fetch(ENDPOINT, { method: "POST", headers, body: JSON.stringify({ query, variables }) });
  let body;
  try {
    body = await response.json();
  } catch {
    throw new Error(`the server answered HTTP ${response.status} without a GraphQL body`);
  }
  if (body.errors && body.errors.length) {
    const e = body.errors[0];
    const error = new Error(`${e.extensions && e.extensions.code ? e.extensions.code + ": " : ""}${e.message}`);
    error.code = e.extensions && e.extensions.code;
    throw error;
  }
  return body.data;
}

// ---------------------------------------------------------------------------------------------- helpers
const decoder = document.createElement("textarea");
/** Text as it should read: HTML entities some sources leave in titles (`&quot;`, `&amp;`) decoded, never parsed. */
function clean(text) {
  if (text === null || text === undefined) return "";
  const value = String(text);
  if (!value.includes("&")) return value;
  decoder.innerHTML = value.replace(/</g, "&lt;");
  return decoder.value;
}

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props || {});
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

function fmt(value, digits = 2) {
  if (value === null || value === undefined || Number.isNaN(value)) return "–";
  return Number.isInteger(value) ? String(value) : Number(value).toFixed(digits);
}

function note(id, text, isError) {
  $(id).textContent = text;
  $(id).className = isError ? "error" : "";
}

function status(text, isError) {
  note("graph-status", text, isError);
}

function hashUnit(text, salt) {
  // a stable pseudo-random number in [0, 1) from a string (FNV-1a): the same map starts from the same layout
  let h = 2166136261 ^ salt;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return ((h >>> 0) % 1_000_003) / 1_000_003;
}

function lerpColor(stops, t) {
  const x = Math.min(1, Math.max(0, t)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(x));
  const f = x - i;
  const parse = (hex) => [1, 3, 5].map((k) => parseInt(hex.slice(k, k + 2), 16));
  const [a, b] = [parse(stops[i]), parse(stops[i + 1])];
  return "#" + a.map((v, k) => Math.round(v + (b[k] - v) * f).toString(16).padStart(2, "0")).join("");
}

// ---------------------------------------------------------------------------------------------- URL state
function readState() {
  const params = new URL(window.location.href).searchParams;
  const state = { ...DEFAULTS };
  for (const key of Object.keys(DEFAULTS)) if (params.has(key)) state[key] = params.get(key);
  if (params.has("paper") && !params.has("view")) state.view = "ego"; // /?paper=<id>: the ego network, as before
  return state;
}

function writeState(state, push = true) {
  const url = new URL(window.location.href);
  url.search = "";
  for (const [key, value] of Object.entries(state)) if (value !== DEFAULTS[key] && value !== "") url.searchParams.set(key, value);
  if (url.href === window.location.href) return;
  if (push) history.pushState(null, "", url);
  else history.replaceState(null, "", url);
}

let state = readState();

/** Change some of the state, record it in the URL (a history entry unless `push` is false) and redraw. */
function update(changes, push = true) {
  state = { ...state, ...changes };
  writeState(state, push);
  return render();
}

// ---------------------------------------------------------------------------------------------- capabilities
let capabilities = null;
async function loadCapabilities() {
  if (capabilities) return capabilities;
  try {
    const data = await graphql(CAPABILITIES, {});
    const fields = new Set((data.query?.fields || []).map((f) => f.name));
    capabilities = {
      mapNetwork: fields.has("mapNetwork"),
      units: data.units ? data.units.enumValues.map((v) => v.name) : ["REFERENCES"],
      exportNetwork: fields.has("exportNetwork"),
      coCitationPair: fields.has("coCitationPair"),
      mapEdgeDocuments: fields.has("mapEdgeDocuments"),
      clusterTimeline: fields.has("clusterTimeline"),
      unbuilt: new Map(), // unit -> the command that builds it, for the units this store cannot map
    };
    if (fields.has("mapUnits")) {
      for (const u of (await graphql(UNITS, {})).mapUnits) if (!u.built) capabilities.unbuilt.set(u.unit, u.command);
    }
  } catch (err) {
    capabilities = { mapNetwork: false, units: ["REFERENCES"], exportNetwork: false, coCitationPair: false,
      mapEdgeDocuments: false, clusterTimeline: false, unbuilt: new Map() };
    status(`could not read the schema: ${err.message}`, true);
  }
  const unit = $("unit");
  // a unit the store has nothing for is listed disabled, its option saying what builds it (never offered, then refused)
  unit.replaceChildren(...capabilities.units.map((u) => {
    const missing = capabilities.unbuilt.get(u);
    return el("option", { value: u, textContent: missing ? `${u.toLowerCase()} (not built)` : u.toLowerCase(),
      disabled: !!missing, title: missing ? `not built in this store: ${missing}` : "" });
  }));
  if (!capabilities.units.includes(state.unit)) state.unit = capabilities.units[0];
  if (capabilities.mapNetwork) $("measure").append(el("option", { value: "INCLUSION", textContent: "inclusion" }));
  else unit.title = "this server draws the map from co-cited references only (no mapNetwork field)";
  return capabilities;
}

// ---------------------------------------------------------------------------------------------- map data
const mapCache = new Map();

function mapKey(s) {
  return JSON.stringify(MAP_KEYS.map((k) => s[k]));
}

function yearWindow(s) {
  return { yearMin: s.from ? Number(s.from) : null, yearMax: s.to ? Number(s.to) : null };
}

async function fetchMap(s) {
  const key = mapKey(s);
  if (mapCache.has(key)) return mapCache.get(key);
  const { yearMin, yearMax } = yearWindow(s);
  let network;
  if (capabilities.mapNetwork) {
    const data = await graphql(MAP, {
      unit: s.unit, yearMin, yearMax, minCount: Number(s.min), measure: s.measure, top: Number(s.top),
      seed: s.seed || null, clusterId: s.cluster === "" ? null : Number(s.cluster),
    });
    network = { ...data.mapNetwork, source: "mapNetwork", clustersFrom: "store" };
  } else {
    network = await fetchPairsMap(s, yearMin, yearMax);
  }
  mapCache.set(key, network);
  return network;
}

/** The map from the store's strongest co-cited pairs (`coCitationPairs`, paged) up to `top` works; clusters by
 * Louvain over the pairs' counts, in the browser (the server computes none for an ad-hoc subgraph). */
async function fetchPairsMap(s, yearMin, yearMax) {
  const top = Number(s.top);
  const nodes = new Map();
  const edges = [];
  let after = null;
  let truncated = false;
  const measure = s.measure.toLowerCase();
  for (let pages = 0; ; pages++) {
    const data = await graphql(PAIRS, {
      measure: s.measure, minCount: Number(s.min), yearMin, yearMax, first: PAIR_PAGE, after,
    });
    const page = data.coCitationPairs;
    for (const { node: pair } of page.edges) {
      const ends = [pair.source, pair.target];
      const fresh = ends.filter((p) => !nodes.has(p.id)).length;
      if (nodes.size + fresh > top) { truncated = true; continue; }
      for (const p of ends) {
        if (!nodes.has(p.id)) nodes.set(p.id, { id: p.id, label: p.label, weight: p.nCited || 0, year: p.year });
      }
      edges.push({ source: pair.source.id, target: pair.target.id, count: pair.count,
        strength: measure === "count" ? pair.count : pair[measure] ?? 0 });
    }
    if (!page.pageInfo.hasNextPage) break;
    if (nodes.size >= top || pages >= 24) { truncated = true; break; }
    after = page.pageInfo.endCursor;
  }
  let network = { unit: "REFERENCES", truncated, nodes: [...nodes.values()], edges, source: "coCitationPairs" };
  if (s.seed) network = around(network, s.seed);
  return withLouvain(network);
}

function around(network, seed) {
  const keep = new Set([seed]);
  for (const e of network.edges) {
    if (e.source === seed) keep.add(e.target);
    if (e.target === seed) keep.add(e.source);
  }
  return { ...network, nodes: network.nodes.filter((n) => keep.has(n.id)),
    edges: network.edges.filter((e) => keep.has(e.source) && keep.has(e.target)) };
}

function withLouvain(network) {
  const graph = new graphology.UndirectedGraph();
  for (const n of network.nodes) graph.addNode(n.id);
  for (const e of network.edges) if (!graph.hasEdge(e.source, e.target)) graph.addEdge(e.source, e.target, { weight: e.count });
  const communities = graph.size ? graphologyLibrary.communitiesLouvain(graph, { getEdgeWeight: "weight", rng: seeded(7) }) : {};
  // renumber by size, largest first, and name each group by its most cited member
  const sizes = new Map();
  for (const c of Object.values(communities)) sizes.set(c, (sizes.get(c) || 0) + 1);
  const order = [...sizes.keys()].sort((a, b) => sizes.get(b) - sizes.get(a) || a - b);
  const number = new Map(order.map((c, i) => [c, i]));
  const names = new Map();
  for (const n of [...network.nodes].sort((a, b) => b.weight - a.weight)) {
    const c = number.get(communities[n.id]);
    if (c !== undefined && !names.has(c)) names.set(c, `around ${clean(n.label).slice(0, 40)}`);
  }
  const nodes = network.nodes.map((n) => {
    const c = number.get(communities[n.id]);
    return { ...n, cluster: c ?? null, clusterLabel: c === undefined ? null : names.get(c) };
  });
  return { ...network, nodes, clustersFrom: "Louvain in the browser" };
}

function seeded(seed) {
  let x = seed;
  return () => ((x = Math.imul(x ^ (x >>> 15), 2246822507) + 0x9e3779b9 | 0) >>> 0) / 4294967296;
}

// ---------------------------------------------------------------------------------------------- drawing
let renderer = null;
let graph = null;
let layout = null;
let layoutTimer = null;
let current = null; // the network drawn: {nodes, edges, unit, ...}
let rings = null; // the burst-ring overlay canvas
const mapInfo = (window.citegraphMap = { nodes: 0, edges: 0, layout: "none", source: null, drawn: 0 });

function clusterColor(cluster) {
  return cluster === null || cluster === undefined || cluster >= PALETTE.length ? OTHER : PALETTE[cluster];
}

function nodeColors(network, by) {
  if (by === "year") {
    const years = network.nodes.map((n) => n.avgYear ?? n.year).filter((y) => y !== null && y !== undefined);
    const lo = Math.min(...years), hi = Math.max(...years);
    return { range: [lo, hi], color: (n) => {
      const y = n.avgYear ?? n.year;
      return y === null || y === undefined ? OTHER : lerpColor(VIRIDIS, hi > lo ? (y - lo) / (hi - lo) : 0.5);
    } };
  }
  return { color: (n) => clusterColor(n.cluster) };
}

function killRenderer() {
  if (layoutTimer) clearTimeout(layoutTimer);
  if (layout) { layout.kill(); layout = null; }
  if (resumeTimer) { clearTimeout(resumeTimer); resumeTimer = null; }
  if (renderer) { renderer.kill(); renderer = null; }
  if (rings) { rings.remove(); rings = null; }
  ringBox = null;
}

// Above these sizes the map is drawn for speed (the issue's target is 5,000 nodes and 50,000 links panned and zoomed
// smoothly): links as one-pixel GL lines (sigma's EdgeLineProgram: 2 vertices a link, against 6 for the thick
// EdgeRectangleProgram) without edge picking (a second draw of every link into the picking buffer each frame; a
// link of such a map is reached from its node's "strongest links" list instead), links and labels hidden while
// the camera moves, fewer labels, and no z-ordering (a sort of every node at each layout step).
const BIG_EDGES = 5000;
const BIG_NODES = 1000;

/** Sigma's settings for a graph of `order` nodes and `size` links (the thresholds above). */
function rendererSettings(order, size) {
  const manyEdges = size > BIG_EDGES;
  const big = manyEdges || order > BIG_NODES;
  return {
    enableEdgeEvents: !manyEdges,
    renderEdgeLabels: false,
    labelDensity: big ? 0.1 : 0.25,
    labelGridCellSize: big ? 160 : 120,
    labelRenderedSizeThreshold: big ? 12 : 9,
    stagePadding: 40,
    labelFont: "system-ui, sans-serif",
    zIndex: !big,
    hideEdgesOnMove: manyEdges,
    hideLabelsOnMove: big,
    minCameraRatio: 0.02,
    maxCameraRatio: 8,
    edgeProgramClasses: { fast: Sigma.rendering.EdgeLineProgram },
  };
}

function maxOf(items, value, floor) {
  let best = floor;
  for (const item of items) {
    const v = value(item);
    if (v > best) best = v;
  }
  return best;
}

/** Draw a map network ({nodes, edges}) with sigma.js and start ForceAtlas2 in its worker. */
function draw(network, options = {}) {
  killRenderer();
  current = network;
  graph = new graphology.Graph({ type: options.directed ? "directed" : "undirected", multi: false });
  const maxWeight = maxOf(network.nodes, (n) => n.weight || 0, 1);
  const { color } = nodeColors(network, state.color);
  burstNodes = [];
  for (const n of network.nodes) {
    graph.addNode(n.id, {
      x: Math.cos(2 * Math.PI * hashUnit(n.id, 1)) * Math.sqrt(hashUnit(n.id, 2)) * 100,
      y: Math.sin(2 * Math.PI * hashUnit(n.id, 1)) * Math.sqrt(hashUnit(n.id, 2)) * 100,
      size: 3 + 14 * Math.sqrt((n.weight || 0) / maxWeight),
      label: clean(n.label),
      color: n.hops === 0 ? "#000000" : color(n),
      data: n,
    });
    if (n.burstStrength) burstNodes.push(n.id);
  }
  const maxStrength = maxOf(network.edges, (e) => e.strength || 0, 1e-9);
  const many = network.edges.length > BIG_EDGES;
  for (const e of network.edges) {
    if (!graph.hasNode(e.source) || !graph.hasNode(e.target) || graph.hasEdge(e.source, e.target)) continue;
    graph.addEdge(e.source, e.target, {
      size: (many ? 0.5 : 1) + (many ? 1.5 : 4) * Math.sqrt((e.strength || 0) / maxStrength),
      color: e.kind === "CO_CITED" ? "#CC6677" : many ? "#dddddd" : "#c4c4c4",
      type: options.directed && e.kind !== "CO_CITED" ? "arrow" : many ? "fast" : "line",
      data: e,
    });
  }
  focus = neighbourhood();
  renderer = new Sigma(graph, $("graph"), {
    ...rendererSettings(graph.order, graph.size),
    nodeReducer: focus ? reduceNode : null,
    edgeReducer: focus ? reduceEdge : null,
  });
  rings = el("canvas", { className: "rings" });
  Object.assign(rings.style, { position: "absolute", inset: "0", pointerEvents: "none" });
  $("graph").append(rings);
  let first = true;
  renderer.on("afterRender", () => {
    drawRings();
    mapInfo.drawn += 1;
    if (first) {
      first = false;
      performance.mark("map:drawn");
      measureOnce("map:data-to-drawn", "map:data", "map:drawn");
      measureOnce("map:filter-to-drawn", "map:request", "map:drawn");
    }
  });
  renderer.on("clickNode", ({ node }) => update({ sel: node, edge: "" }));
  renderer.on("clickEdge", ({ edge }) => {
    const [s, t] = graph.extremities(edge);
    update({ edge: `${s}~${t}`, sel: "" });
  });
  renderer.on("clickStage", () => { if (state.sel || state.edge) update({ sel: "", edge: "" }); });
  renderer.on("enterNode", () => { $("graph").style.cursor = "pointer"; });
  renderer.on("leaveNode", () => { $("graph").style.cursor = ""; });
  renderer.on("enterEdge", () => { $("graph").style.cursor = "pointer"; });
  renderer.on("leaveEdge", () => { $("graph").style.cursor = ""; });
  // ForceAtlas2 moves every node at each step, and each step makes sigma re-index the whole graph: it pauses
  // while the user drags or zooms, so that the camera alone changes from frame to frame, and resumes after.
  const captor = renderer.getMouseCaptor();
  captor.on("mousedown", pauseLayout);
  captor.on("wheel", pauseLayout);
  captor.on("mouseup", resumeLayoutSoon);
  Object.assign(mapInfo, { nodes: graph.order, edges: graph.size, source: network.source || "egoNetwork",
    unit: network.unit || null, truncated: !!network.truncated, edgeEvents: !many });
  startLayout(options.layoutMs ?? Math.min(6000, 800 + 2 * graph.order));
  return renderer;
}

function measureOnce(name, from, to) {
  if (performance.getEntriesByName(from, "mark").length) {
    performance.measure(name, from, to);
    performance.clearMarks(from);
  }
}

let layoutUntil = 0; // when the layout stops for good (performance.now() time)
let resumeTimer = null;

function startLayout(ms) {
  if (graph.order < 2) { mapInfo.layout = "done"; return; }
  const settings = graphologyLibrary.layoutForceAtlas2.inferSettings(graph);
  layout = new graphologyLibrary.FA2Layout(graph, { settings: { ...settings, barnesHutOptimize: graph.order > 300, adjustSizes: false } });
  layout.start();
  mapInfo.layout = "running";
  layoutUntil = performance.now() + ms;
  layoutTimer = setTimeout(stopLayout, ms);
}

function stopLayout() {
  if (resumeTimer) { clearTimeout(resumeTimer); resumeTimer = null; }
  if (layout) layout.stop();
  mapInfo.layout = "done";
  renderer && renderer.refresh();
}

/** The user moves the camera: ForceAtlas2 waits (its remaining time is kept), so frames only move the camera. */
function pauseLayout() {
  if (resumeTimer) { clearTimeout(resumeTimer); resumeTimer = null; }
  if (layout && mapInfo.layout === "running" && layout.isRunning()) {
    layout.stop();
    mapInfo.layout = "paused";
  }
}

function resumeLayoutSoon() {
  if (mapInfo.layout !== "paused") return;
  if (resumeTimer) clearTimeout(resumeTimer);
  resumeTimer = setTimeout(() => {
    resumeTimer = null;
    if (!layout || mapInfo.layout !== "paused") return;
    if (performance.now() >= layoutUntil) return stopLayout();
    layout.start();
    mapInfo.layout = "running";
  }, 400);
}

/** The selection's neighbourhood on the map (null without one): computed once per selection, never per node. */
function neighbourhood() {
  if (!graph) return null;
  if (state.sel && graph.hasNode(state.sel)) return { node: state.sel, around: new Set([state.sel, ...graph.neighbors(state.sel)]) };
  if (state.edge) {
    const [s, t] = state.edge.split("~");
    if (graph.hasNode(s) && graph.hasNode(t)) return { edge: [s, t], around: new Set([s, t]) };
  }
  return null;
}

let focus = null; // the neighbourhood the reducers grey everything else out around

/** Show the current selection: the reducers are set only while something is selected (sigma then calls them once
 * per node and link when it indexes the graph; without a selection it copies the attributes as they are). */
function applyFocus() {
  if (!renderer) return;
  focus = neighbourhood();
  renderer.setSettings({ nodeReducer: focus ? reduceNode : null, edgeReducer: focus ? reduceEdge : null });
}

function reduceNode(node, data) {
  if (!focus) return data;
  if (focus.around.has(node)) {
    data.zIndex = 1;
    data.highlighted = node === focus.node || (!!focus.edge && focus.around.has(node));
    data.forceLabel = true;
    return data;
  }
  data.color = "#e4e4e4";
  data.label = "";
  data.zIndex = 0;
  return data;
}

function reduceEdge(edge, data) {
  if (!focus) return data;
  const [s, t] = graph.extremities(edge);
  if (focus.node && (s === focus.node || t === focus.node)) {
    data.color = "#0b5394";
    data.zIndex = 1;
    if (data.type === "fast") data.type = "line"; // a selected node's links drawn thick
    return data;
  }
  if (focus.edge && focus.around.has(s) && focus.around.has(t)) {
    data.color = "#D55E00";
    data.size = Math.max(3, data.size * 2);
    data.zIndex = 1;
    if (data.type === "fast") data.type = "line";
    return data;
  }
  data.hidden = true;
  return data;
}

/** Burst rings: a ring around each work whose citations burst (Kleinberg), thicker for a stronger burst. Drawn after
 * every frame, over the works with a burst only (listed once per map), into a canvas sized on resize. */
let burstNodes = [];
let ringBox = null; // the map's CSS size, read on draw and resize (not each frame: a layout read)

function drawRings() {
  if (!rings || !renderer) return;
  if (!ringBox) {
    const { width, height } = $("graph").getBoundingClientRect();
    const ratio = window.devicePixelRatio || 1;
    ringBox = { width, height, ratio };
    rings.width = Math.round(width * ratio);
    rings.height = Math.round(height * ratio);
  }
  const ctx = rings.getContext("2d");
  const { width, height, ratio } = ringBox;
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, width, height);
  if (!burstNodes.length) return;
  ctx.strokeStyle = "#D55E00";
  for (const { at, radius, strength } of ringPositions()) {
    ctx.beginPath();
    ctx.arc(at.x, at.y, radius + 2 + strength, 0, 2 * Math.PI);
    ctx.lineWidth = 1 + Math.min(3, strength);
    ctx.stroke();
  }
}

function ringPositions() {
  const out = [];
  if (!graph || !renderer) return out;
  for (const node of burstNodes) {
    if (!graph.hasNode(node)) continue;
    const attrs = graph.getNodeAttributes(node);
    const display = renderer.getNodeDisplayData(node);
    if (!display || display.hidden) continue;
    out.push({ node, at: renderer.graphToViewport(attrs), radius: renderer.scaleSize(display.size), strength: Math.log1p(attrs.data.burstStrength) });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------- legend
function drawLegend(network) {
  const legend = $("legend");
  legend.replaceChildren();
  if (!network || !network.nodes.length) return;
  if (state.color === "year") {
    const { range } = nodeColors(network, "year");
    if (!range || !Number.isFinite(range[0])) return;
    const bar = el("div", { className: "bar" });
    bar.style.background = `linear-gradient(to right, ${VIRIDIS.join(", ")})`;
    legend.append(el("div", { textContent: "average year" }), bar,
      el("div", { className: "ends" }, el("span", { textContent: fmt(range[0], 0) }), el("span", { textContent: fmt(range[1], 0) })));
  } else {
    const clusters = new Map();
    for (const n of network.nodes) {
      if (n.cluster === null || n.cluster === undefined) continue;
      const entry = clusters.get(n.cluster) || { label: n.clusterLabel, size: 0 };
      entry.size += 1;
      clusters.set(n.cluster, entry);
    }
    const list = el("ul");
    const sorted = [...clusters.entries()].sort((a, b) => a[0] - b[0]);
    for (const [cluster, { label, size }] of sorted.slice(0, PALETTE.length)) {
      const swatch = el("span", { className: "swatch" });
      swatch.style.background = clusterColor(cluster);
      const button = el("button", { type: "button", className: "linklike", textContent: `${cluster}: ${clean(label || "cluster " + cluster)}`,
        title: network.source === "mapNetwork" ? "show this cluster only" : "clusters found in the browser" });
      if (network.source === "mapNetwork") button.addEventListener("click", () => update({ cluster: String(cluster), sel: "", edge: "" }));
      list.append(el("li", {}, swatch, button, el("span", { className: "meta", textContent: `(${size})` })));
    }
    if (sorted.length > PALETTE.length) {
      const swatch = el("span", { className: "swatch" });
      swatch.style.background = OTHER;
      list.append(el("li", {}, swatch, el("span", { textContent: `${sorted.length - PALETTE.length} smaller clusters` })));
    }
    const fold = el("details", { open: !window.matchMedia("(max-width: 1100px)").matches || sorted.length <= 3 },
      el("summary", { className: "meta", textContent: `clusters (${network.clustersFrom || "store"})` }), list);
    legend.append(fold);
  }
  if (network.nodes.some((n) => n.burstStrength)) {
    const ring = el("span", { className: "swatch" });
    ring.style.border = "2px solid #D55E00";
    legend.append(el("ul", {}, el("li", {}, ring, el("span", { textContent: "citation burst" }))));
  }
}

// ---------------------------------------------------------------------------------------------- timeline
let timelineLanes = null; // clusterTimeline's answer for the drawn timeline (null: the map's own clusters)
const timelineCache = new Map();

/** The store's co-citation clusters and their citations per year (`clusterTimeline`, in the map's citing window);
 * only for a map of references, whose clusters they are; null without them. */
async function fetchTimeline(network) {
  if (!capabilities.clusterTimeline || (network.unit || "REFERENCES") !== "REFERENCES") return null;
  const { yearMin, yearMax } = yearWindow(state);
  const key = `${yearMin}-${yearMax}`;
  if (!timelineCache.has(key)) {
    try {
      timelineCache.set(key, (await graphql(TIMELINE, { yearMin, yearMax })).clusterTimeline);
    } catch (err) {
      status(`cluster timeline: ${err.message}`, true);
      return null;
    }
  }
  return timelineCache.get(key);
}

/** Where the timeline places a node: a cited work at the start of its citation burst, else at its first citation
 * in the window (CiteSpace's timeline: when the work entered the field); a unit without those at its average
 * year, else its publication year. */
function timelineYear(n) {
  const y = n.burstBegin ?? n.firstYear ?? n.avgYear ?? n.year;
  return y === null || y === undefined ? null : Math.round(y);
}

/** CiteSpace's timeline view: one lane per cluster (the store's co-citation clusters, from `clusterTimeline`, with
 * their citations per year drawn as a band along the lane), each work placed at the year it entered the field
 * (`timelineYear`), sized by its weight, burst works outlined. */
function drawTimeline(network, lanesFrom) {
  const box = $("timeline");
  box.replaceChildren();
  const placed = network.nodes.filter((n) => timelineYear(n) !== null);
  if (!placed.length) { box.textContent = "No node of this map has a year."; return; }
  const bands = new Map((lanesFrom || []).map((c) => [c.cluster, c]));
  const names = new Map(placed.map((n) => [n.cluster ?? -1, n.clusterLabel]));
  for (const c of lanesFrom || []) names.set(c.cluster, c.label);
  // the store's clusters in their order (largest first), then any other cluster of the map; lanes without members
  // or citations are left out, 20 at most
  const onMap = new Set(placed.map((n) => n.cluster ?? -1));
  const order = [...(lanesFrom || []).map((c) => c.cluster), ...[...onMap].sort((a, b) => (a < 0) - (b < 0) || a - b)];
  const lanes = [...new Set(order)].filter((c) => onMap.has(c)).slice(0, 20);
  const years = placed.map(timelineYear);
  for (const lane of lanes) for (const { year } of bands.get(lane)?.years || []) years.push(year);
  const lo = Math.min(...years), hi = Math.max(...years);
  const laneH = 56, left = 190, right = 30, top = 24;
  const width = Math.max(box.clientWidth - 4, 600), height = top + lanes.length * laneH + 24;
  const x = (y) => left + (hi > lo ? ((y - lo) / (hi - lo)) * (width - left - right) : (width - left - right) / 2);
  const yearW = hi > lo ? (width - left - right) / (hi - lo) : 8;
  const maxWeight = maxOf(placed, (n) => n.weight || 0, 1);
  const NS = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `timeline of ${lanes.length} clusters, ${lo}–${hi}`);
  const add = (parent, tag, attrs, text) => {
    const node = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    parent.append(node);
    return node;
  };
  const step = Math.max(1, Math.ceil((hi - lo) / 12));
  for (let y = lo; y <= hi; y += step) {
    add(svg, "line", { x1: x(y), x2: x(y), y1: top - 6, y2: height - 20, stroke: "#eee" });
    add(svg, "text", { x: x(y), y: top - 10, "text-anchor": "middle", fill: "#555" }, String(y));
  }
  lanes.forEach((lane, i) => {
    const cy = top + i * laneH + laneH / 2;
    const band = bands.get(lane);
    if (band && band.years.length) {
      // the cluster's citations per year: a bar under the lane per year, as tall as its share of the busiest year
      const most = maxOf(band.years, (r) => r.citations, 1);
      const g = add(svg, "g", { class: "band", "data-cluster": lane });
      for (const { year, citations } of band.years) {
        const h = 4 + (laneH / 2 - 6) * (citations / most);
        const r = add(g, "rect", { x: x(year) - Math.max(1, yearW / 2 - 0.5), y: cy - h, width: Math.max(2, yearW - 1), height: h,
          fill: clusterColor(lane), "fill-opacity": 0.18, "data-year": year, "data-citations": citations });
        add(r, "title", {}, `${year}: ${citations} citations to the cluster`);
      }
    }
    add(svg, "line", { x1: left, x2: width - right, y1: cy, y2: cy, stroke: clusterColor(lane), "stroke-width": 2, opacity: 0.5 });
    add(svg, "text", { x: 6, y: cy + 4, fill: "#222" }, `${lane < 0 ? "–" : lane}: ${clean(names.get(lane) || "no cluster").slice(0, 28)}`);
    const members = placed.filter((n) => (n.cluster ?? -1) === lane).sort((a, b) => b.weight - a.weight);
    members.forEach((n, k) => {
      const when = timelineYear(n);
      const r = 3 + 12 * Math.sqrt((n.weight || 0) / maxWeight);
      const c = add(svg, "circle", { cx: x(when), cy, r, fill: clusterColor(lane), "fill-opacity": 0.75, stroke: n.burstStrength ? "#D55E00" : "#fff",
        "stroke-width": n.burstStrength ? 2 : 1, tabindex: k < 30 ? 0 : -1, "data-id": n.id, "data-year": when });
      const entered = n.burstBegin !== null && n.burstBegin !== undefined ? `burst from ${n.burstBegin}`
        : n.firstYear !== null && n.firstYear !== undefined ? `first cited ${n.firstYear}` : `year ${when}`;
      add(c, "title", {}, `${clean(n.label)} (${entered}; weight ${n.weight})`);
      c.addEventListener("click", () => update({ sel: n.id, edge: "" }));
      c.addEventListener("keydown", (event) => { if (event.key === "Enter") update({ sel: n.id, edge: "" }); });
      if (k < 3) add(svg, "text", { x: x(when) + r + 2, y: cy - r + (k % 2 ? 20 : 0), fill: "#333" }, clean(n.label).slice(0, 30));
    });
  });
  box.append(svg);
}

// ---------------------------------------------------------------------------------------------- details
function paperButton(paper, extra, onClick) {
  const li = el("li");
  const button = el("button", { type: "button", textContent: clean(paper.label || paper.title || paper.id) });
  button.dataset.paperId = paper.id;
  button.addEventListener("click", onClick || (() => selectPaper(paper.id)));
  const meta = el("div", { className: "meta" });
  meta.textContent = [paper.year, extra].filter((x) => x !== null && x !== undefined && x !== "").join(" · ");
  li.append(button, meta);
  return li;
}

/** A paper chosen outside the map (search, a citing paper): select it on the map when it is there, else show it. */
function selectPaper(id) {
  if (state.view === "ego") return update({ paper: id, sel: id, edge: "" });
  return update({ sel: id, edge: "" });
}

function facts(rows) {
  const dl = el("dl", { className: "facts" });
  for (const [name, value] of rows) {
    if (value === null || value === undefined || value === "" || value === "–") continue;
    dl.append(el("dt", { textContent: name }), el("dd", {}, value instanceof Node ? value : String(value)));
  }
  return dl;
}

function actionButton(text, onClick, id) {
  const button = el("button", { type: "button", textContent: text });
  if (id) button.id = id;
  button.addEventListener("click", onClick);
  return button;
}

/** A paged list of papers: `load(after)` answers a PaperConnection; "more" fetches the next page. */
async function pagedPapers(title, load, id) {
  const box = el("div");
  box.id = id;
  const head = el("h3", { textContent: title });
  const list = el("ol");
  const more = el("button", { type: "button", textContent: "more", hidden: true });
  box.append(head, list, more);
  let after = null;
  async function next() {
    more.disabled = true;
    try {
      const page = await load(after);
      for (const { node } of page.edges) list.append(paperButton(node, ""));
      head.textContent = `${title} (${page.totalCount ?? list.children.length})`;
      after = page.pageInfo.endCursor;
      more.hidden = !page.pageInfo.hasNextPage;
    } catch (err) {
      list.append(el("li", { className: "error", textContent: err.message }));
    }
    more.disabled = false;
  }
  more.addEventListener("click", next);
  await next();
  return box;
}

function mapNode(id) {
  return current && current.nodes.find((n) => n.id === id);
}

async function showNodeDetails(id) {
  const panel = $("details");
  const n = mapNode(id);
  $("details-title").textContent = clean(n ? n.label : id);
  const parts = [];
  if (n) {
    parts.push(facts([
      ["id", n.id],
      ["year", n.year],
      ["average year", n.avgYear !== null && n.avgYear !== undefined ? fmt(n.avgYear, 1) : null],
      [current.unit === "REFERENCES" || !current.unit ? "citations (window)" : "documents", n.weight],
      ["cluster", n.cluster === null || n.cluster === undefined ? null : `${n.cluster}: ${clean(n.clusterLabel || "")}`],
      ["burst", n.burstStrength ? `${fmt(n.burstStrength)} (${n.burstBegin ?? "?"}–${n.burstEnd ?? "?"})` : null],
      ["betweenness", n.betweenness !== null && n.betweenness !== undefined ? fmt(n.betweenness, 3) : null],
      ["sigma", n.sigma !== null && n.sigma !== undefined ? fmt(n.sigma, 3) : null],
      ["links on the map", graph && graph.hasNode(id) ? graph.degree(id) : null],
    ]));
  }
  // a paper unit's node, or a paper chosen from a list (a document behind a link of an author or keyword map)
  const paperUnit = !current || !current.unit || current.unit === "REFERENCES" || current.unit === "COUPLING" || !n;
  panel.replaceChildren(...parts, el("p", { className: "meta", textContent: "Loading…" }));
  const body = [...parts];
  if (paperUnit) {
    try {
      const data = await graphql(NODE, { id, first: PAGE, after: null });
      const p = data.paper;
      if (p) {
        $("details-title").textContent = clean(p.label);
        body.push(facts([
          ["title", clean(p.title)],
          ["reference", p.stub ? clean(p.reference) : null],
          ["year", n ? null : p.year],
          ["venue", clean(p.venue)],
          ["authors", p.authors.map((a) => clean(a.name)).join(", ")],
          ["DOI", p.doi],
          ["arXiv", p.arxivId],
          ["cited in the store", p.nCited],
        ]));
        const actions = el("div", { className: "actions" },
          actionButton("Map around it", () => update({ view: "map", seed: p.id, sel: p.id, edge: "" }), "act-seed"),
          actionButton("Ego network", () => update({ view: "ego", paper: p.id, sel: p.id, edge: "" }), "act-ego"),
          actionButton("Recommend / link", () => openPaperPanels(p.id), "act-link"));
        body.push(actions);
        body.push(await pagedPapers("Cited by", async (after) =>
          (await graphql(NODE, { id, first: PAGE, after })).paper.citedBy, "node-cited-by"));
      } else if (!n) {
        body.push(el("p", { className: "error", textContent: `no paper has id ${id}` }));
      }
    } catch (err) {
      body.push(el("p", { className: "error", textContent: err.message }));
    }
  }
  if (graph && graph.hasNode(id)) {
    const links = graph.edges(id).map((e) => ({ e, d: graph.getEdgeAttribute(e, "data") }))
      .sort((a, b) => (b.d.strength || 0) - (a.d.strength || 0)).slice(0, 10);
    if (links.length) {
      const list = el("ol");
      for (const { e, d } of links) {
        const other = graph.opposite(id, e);
        const li = el("li");
        const button = el("button", { type: "button", textContent: clean(graph.getNodeAttribute(other, "label")) });
        button.addEventListener("click", () => update({ edge: `${id}~${other}`, sel: "" }));
        li.append(button, el("div", { className: "meta", textContent: `count ${d.count ?? d.weight}${d.strength !== undefined ? `, strength ${fmt(d.strength, 3)}` : ""}` }));
        list.append(li);
      }
      body.push(el("h3", { textContent: "Strongest links on the map" }), list);
    }
  }
  if (state.sel === id) panel.replaceChildren(...body);
}

function yearsChart(rows) {
  const NS = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(NS, "svg");
  const known = rows.filter((r) => r.year !== null);
  const w = 300, h = 70, barW = Math.max(2, Math.min(24, (w - 10) / Math.max(1, known.length)));
  svg.setAttribute("viewBox", `0 0 ${w} ${h + 14}`);
  svg.setAttribute("width", w);
  svg.setAttribute("class", "years-chart");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "documents citing both, per year: " + rows.map((r) => `${r.year ?? "no year"} ${r.count}`).join(", "));
  const max = Math.max(1, ...known.map((r) => r.count));
  known.forEach((r, i) => {
    const bh = (r.count / max) * h;
    const rect = document.createElementNS(NS, "rect");
    Object.entries({ x: 4 + i * barW, y: h - bh, width: barW - 1, height: bh, fill: "#44AA99" }).forEach(([k, v]) => rect.setAttribute(k, v));
    const title = document.createElementNS(NS, "title");
    title.textContent = `${r.year}: ${r.count}`;
    rect.append(title);
    svg.append(rect);
  });
  if (known.length) {
    const ends = known.length > 1 ? [[0, "start"], [known.length - 1, "end"]] : [[0, "start"]];
    for (const [i, anchor] of ends) {
      const t = document.createElementNS(NS, "text");
      Object.entries({ x: anchor === "start" ? 4 : 4 + known.length * barW, y: h + 12, "text-anchor": anchor, "font-size": 10 }).forEach(([k, v]) => t.setAttribute(k, v));
      t.textContent = String(known[i].year);
      svg.append(t);
    }
  }
  return svg;
}

async function showEdgeDetails(key) {
  const [s, t] = key.split("~");
  const panel = $("details");
  const label = (id) => clean(graph && graph.hasNode(id) ? graph.getNodeAttribute(id, "label") : id);
  $("details-title").textContent = `${label(s)} + ${label(t)}`;
  const edgeData = graph && graph.hasEdge(s, t) ? graph.getEdgeAttribute(graph.edge(s, t), "data") : null;
  const ends = el("div", { className: "actions" },
    actionButton(`◦ ${label(s).slice(0, 30)}`, () => update({ sel: s, edge: "" })),
    actionButton(`◦ ${label(t).slice(0, 30)}`, () => update({ sel: t, edge: "" })));
  const body = [ends];
  if (edgeData) {
    const strength = state.measure === "COUNT" || edgeData.strength === undefined ? null : fmt(edgeData.strength, 4);
    body.push(facts([["count (map)", edgeData.count ?? edgeData.weight], [`${state.measure.toLowerCase()} (map)`, strength]]));
  }
  panel.replaceChildren(...body, el("p", { className: "meta", textContent: "Loading…" }));
  const paperUnit = !current || !current.unit || current.unit === "REFERENCES";
  if (paperUnit && capabilities.coCitationPair) {
    try {
      const pair = (await graphql(PAIR, { source: s, target: t, first: PAGE, after: null })).coCitationPair;
      if (pair.__typename === "NotFound") {
        body.push(el("p", { className: "meta", textContent: pair.message }));
      } else {
        body.push(facts([
          ["co-cited by", pair.count], ["in sentences", pair.sentenceCount], ["association", fmt(pair.association, 3)],
          ["cosine", fmt(pair.cosine, 3)], ["Jaccard", fmt(pair.jaccard, 3)], ["inclusion", fmt(pair.inclusion, 3)],
        ]));
        body.push(el("h3", { textContent: "Documents citing both, per year" }), yearsChart(pair.countsByYear));
        const undated = pair.countsByYear.filter((r) => r.year === null).reduce((sum, r) => sum + r.count, 0);
        if (undated) body.push(el("p", { className: "meta", textContent: `${undated} of them without a year` }));
        body.push(await pagedPapers("Documents citing both", async (after) =>
          (await graphql(PAIR, { source: s, target: t, first: PAGE, after })).coCitationPair.citedBy, "edge-cited-by"));
      }
    } catch (err) {
      body.push(el("p", { className: "error", textContent: err.message }));
    }
  } else if (!paperUnit && capabilities.mapEdgeDocuments && current && current.unit in EDGE_DOCUMENT_TITLES) {
    // the documents behind a link of the other units (co-cited authors and sources, co-authors, their institutions
    // and countries, co-occurring keywords, coupled documents), paged, from `mapEdgeDocuments`
    const unit = current.unit;
    const variables = { unit, source: s, target: t, ...yearWindow(state), first: PAGE };
    body.push(await pagedPapers(EDGE_DOCUMENT_TITLES[unit], async (after) =>
      (await graphql(EDGE_DOCUMENTS, { ...variables, after })).mapEdgeDocuments, "edge-documents"));
  }
  if (state.edge === key) panel.replaceChildren(...body);
}

function showOverview(network) {
  $("details-title").textContent = state.view === "ego" ? "In this network" : "On the map";
  const panel = $("details");
  if (!network || !network.nodes.length) { panel.replaceChildren(); return; }
  const top = [...network.nodes].sort((a, b) => (b.weight || 0) - (a.weight || 0)).slice(0, 15);
  const list = el("ol");
  for (const n of top) list.append(paperButton(n, `${n.weight ?? ""}${n.cluster !== null && n.cluster !== undefined ? ` · cluster ${n.cluster}` : ""}`,
    () => update({ sel: n.id, edge: "" })));
  panel.replaceChildren(el("p", { className: "meta", textContent: "Click a node or an edge for its details; the most cited:" }), list);
}

// ---------------------------------------------------------------------------------------------- views
let drawnKey = null;

async function render() {
  syncControls();
  const views = { map: "Map", timeline: "Timeline", ego: "Ego network" };
  for (const b of $("views").querySelectorAll("button")) b.setAttribute("aria-pressed", String(b.dataset.view === state.view));
  $("ego-controls").hidden = state.view !== "ego";
  $("seed-title").className = state.view === "ego" ? "" : "visually-hidden";
  document.title = `citegraph — ${views[state.view] || "map"}`;
  $("back").disabled = history.length <= 1;
  try {
    if (state.view === "ego") await renderEgo();
    else await renderMap();
  } catch (err) {
    status(err.message, true);
  }
  if (state.sel) await showNodeDetails(state.sel);
  else if (state.edge) await showEdgeDetails(state.edge);
  else showOverview(current);
  applyFocus();
  if (state.sel && (state.view !== "ego" || state.sel !== state.paper)) {
    $("cocited-panel").hidden = true;
  }
}

async function renderMap() {
  await loadCapabilities();
  const key = mapKey(state) + state.view + state.color;
  $("graph").hidden = state.view === "timeline";
  $("timeline").hidden = state.view !== "timeline";
  $("cocited-panel").hidden = true;
  $("seed-title").textContent = state.seed ? `Map around ${state.seed}` : "Map";
  if (key === drawnKey && current) return;
  const missing = capabilities.unbuilt.get(state.unit);
  if (missing) {
    killRenderer();
    current = null;
    drawnKey = null;
    $("legend").replaceChildren();
    $("timeline").replaceChildren();
    Object.assign(mapInfo, { nodes: 0, edges: 0, layout: "done", source: null, unit: state.unit });
    status(`${state.unit.toLowerCase()}: not built in this store — ${missing}`, true);
    return;
  }
  performance.mark("map:request");
  status("Loading the map…");
  let network;
  try {
    network = await fetchMap(state);
  } catch (err) {
    if (err.code === "BAD_USER_INPUT") status(`${err.message}`, true);
    else status(err.message, true);
    return;
  }
  performance.mark("map:data");
  drawnKey = key;
  setYearDomain(network);
  if (state.seed) {
    $("seed-chip").hidden = false;
    const seedNode = network.nodes.find((n) => n.id === state.seed);
    $("seed-label").textContent = clean(seedNode ? seedNode.label : state.seed).slice(0, 40);
  } else {
    $("seed-chip").hidden = true;
  }
  if (state.view === "timeline") {
    killRenderer();
    current = network;
    graph = graphFor(network);
    timelineLanes = await fetchTimeline(network);
    drawTimeline(network, timelineLanes);
    performance.mark("map:drawn");
    measureOnce("map:filter-to-drawn", "map:request", "map:drawn");
    Object.assign(mapInfo, { nodes: network.nodes.length, edges: network.edges.length, source: network.source, layout: "done" });
  } else {
    draw(network);
  }
  if (state.view === "timeline") $("legend").replaceChildren(); // the lanes carry the cluster labels
  else drawLegend(network);
  const { yearMin, yearMax } = yearWindow(state);
  const window_ = yearMin || yearMax ? `, citing years ${yearMin ?? "…"}–${yearMax ?? "…"}` : "";
  status(`${network.nodes.length} nodes, ${network.edges.length} links (${(network.unit || state.unit).toLowerCase()}, ` +
    `${state.measure.toLowerCase()}, min count ${state.min}${window_})` + (network.truncated ? `; cut to the top ${state.top}` : "") +
    (network.nodes.length ? "" : " — lower the minimum count or widen the years"));
}

/** A graphology graph of a network without a renderer (the timeline's node and edge details read it). */
function graphFor(network) {
  const g = new graphology.UndirectedGraph();
  for (const n of network.nodes) g.addNode(n.id, { label: clean(n.label), data: n });
  for (const e of network.edges) if (g.hasNode(e.source) && g.hasNode(e.target) && !g.hasEdge(e.source, e.target)) g.addEdge(e.source, e.target, { data: e });
  return g;
}

let yearDomain = null;
function setYearDomain(network) {
  if (yearDomain) return;
  const years = network.nodes.map((n) => n.year).filter((y) => y !== null && y !== undefined);
  if (!years.length) return;
  const now = new Date().getFullYear();
  yearDomain = [Math.min(...years), Math.max(now, Math.max(...years))];
  for (const id of ["year-from", "year-to"]) { $(id).min = yearDomain[0]; $(id).max = yearDomain[1]; }
  syncControls();
}

async function renderEgo() {
  $("graph").hidden = false;
  $("timeline").hidden = true;
  $("seed-chip").hidden = true;
  $("legend").replaceChildren();
  const id = state.paper || state.sel;
  if (!id) {
    killRenderer();
    current = null;
    status("Search a paper, or select one on the map, to draw its citation neighbourhood.");
    return;
  }
  const key = JSON.stringify(["ego", id, state.depth, state.direction, state.limit, state.co]);
  if (key === drawnKey && current) return;
  status("Loading…");
  performance.mark("map:request");
  const variables = { id, depth: Number(state.depth), direction: state.direction, limit: Number(state.limit), co: state.co === "1" };
  const [ego] = await Promise.all([graphql(EGO, variables), showCoCited(id), showCitanceLinks(id)]);
  const network = ego.egoNetwork;
  if (network.__typename === "NotFound") { status(network.message, true); return; }
  performance.mark("map:data");
  drawnKey = key;
  const seed = network.nodes[0];
  $("seed-title").textContent = clean(seed.title || seed.label || seed.id);
  const nodes = network.nodes.map((n) => ({ ...n, weight: n.nCited || 0 }));
  const edges = network.edges.map((e) => ({ ...e, count: e.weight, strength: e.weight }));
  draw({ nodes, edges, unit: null, source: "egoNetwork", clustersFrom: "store" }, { directed: true, layoutMs: 1200 });
  drawLegend({ nodes, clustersFrom: "store" });
  status(`${network.nodes.length} papers, ${network.edges.length} edges` +
    (network.truncated ? ` (cut to the limit; the walk reached ${network.reached})` : ""));
}

async function showCoCited(id) {
  const list = $("cocited");
  list.replaceChildren();
  $("cocited-panel").hidden = false;
  try {
    const data = await graphql(COCITED, { id });
    if (data.coCitations.__typename === "CoCitationList") {
      for (const pair of data.coCitations.pairs) {
        list.append(paperButton(pair.target, `co-cited ${pair.count}×, association ${pair.association?.toFixed(2) ?? "–"}`));
      }
      if (!data.coCitations.pairs.length) list.textContent = "Not co-cited with any paper.";
    }
  } catch (err) {
    list.textContent = err.message;
  }
}

function openPaperPanels(id) {
  $("linkage-panel").open = true;
  $("recommend-panel").open = true;
  showCitanceLinks(id);
  $("citance").focus();
}

// ---------------------------------------------------------------------------------------------- controls
function syncControls() {
  $("unit").value = state.unit;
  $("measure").value = state.measure;
  $("min-count").value = state.min;
  $("top").value = state.top;
  $("color-by").value = state.color;
  $("depth").value = state.depth;
  $("direction").value = state.direction;
  $("limit").value = state.limit;
  $("cocitation").checked = state.co === "1";
  const lo = Number($("year-from").min), hi = Number($("year-to").max);
  $("year-from").value = state.from || lo;
  $("year-to").value = state.to || hi;
  $("year-window").textContent = state.from || state.to ? `${state.from || lo}–${state.to || hi}` : "all years";
}

function yearChange(event) {
  let from = Number($("year-from").value), to = Number($("year-to").value);
  if (from > to) { if (event.target.id === "year-from") to = from; else from = to; }
  const lo = Number($("year-from").min), hi = Number($("year-to").max);
  update({ from: from > lo ? String(from) : "", to: to < hi ? String(to) : "", sel: "", edge: "" });
}

for (const id of ["year-from", "year-to"]) {
  $(id).addEventListener("input", () => {
    const from = $("year-from").value, to = $("year-to").value;
    $("year-window").textContent = `${Math.min(from, to)}–${Math.max(from, to)}`;
  });
  $(id).addEventListener("change", yearChange);
}
const controls = { unit: "unit", measure: "measure", "min-count": "min", top: "top", depth: "depth", direction: "direction", limit: "limit" };
for (const [id, key] of Object.entries(controls)) {
  $(id).addEventListener("change", () => {
    const value = $(id).value;
    if ($(id).type === "number" && !$(id).checkValidity()) { status(`${id}: ${$(id).validationMessage}`, true); return; }
    update({ [key]: value, ...(MAP_KEYS.includes(key) ? { sel: "", edge: "", cluster: key === "unit" ? "" : state.cluster } : {}) });
  });
}
$("color-by").addEventListener("change", () => update({ color: $("color-by").value }));
$("cocitation").addEventListener("change", () => update({ co: $("cocitation").checked ? "1" : "" }));
$("seed-clear").addEventListener("click", () => update({ seed: "", cluster: "", sel: "", edge: "" }));
$("filters").addEventListener("submit", (event) => event.preventDefault());
for (const b of $("views").querySelectorAll("button")) {
  b.addEventListener("click", () => {
    const view = b.dataset.view;
    if (view === "ego" && !state.paper && state.sel) return update({ view, paper: state.sel });
    return update({ view });
  });
}
$("back").addEventListener("click", () => history.back());
window.addEventListener("popstate", () => { state = readState(); render(); });

$("graph").addEventListener("keydown", (event) => {
  if (!renderer) return;
  const camera = renderer.getCamera();
  const step = 0.1 * camera.ratio;
  const moves = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] };
  if (moves[event.key]) {
    const [dx, dy] = moves[event.key];
    camera.setState({ x: camera.x + dx, y: camera.y + dy });
  } else if (event.key === "+" || event.key === "=") camera.animatedZoom({ duration: 200 });
  else if (event.key === "-") camera.animatedUnzoom({ duration: 200 });
  else if (event.key === "0") camera.animatedReset({ duration: 200 });
  else if (event.key === "Escape") update({ sel: "", edge: "" });
  else return;
  event.preventDefault();
});
new ResizeObserver(() => {
  ringBox = null;
  if (renderer) { renderer.resize(); renderer.refresh(); }
  if (state.view === "timeline" && current) drawTimeline(current, timelineLanes);
}).observe($("graph-panel"));

// ---------------------------------------------------------------------------------------------- search
async function search(text) {
  const list = $("results");
  $("results-panel").hidden = false;
  list.replaceChildren(el("li", { className: "meta", textContent: "Searching…" }));
  try {
    const data = await graphql(SEARCH, { text, id: text, first: 15 });
    const items = [];
    if (data.byId) items.push(el("li", { className: "meta", textContent: "by id" }), paperButton(data.byId, `cited ${data.byId.nCited ?? 0}×`));
    if (data.papers.edges.length) {
      items.push(el("li", { className: "meta", textContent: `titles (${data.papers.totalCount})` }));
      for (const { node } of data.papers.edges) items.push(paperButton(node, `cited ${node.nCited ?? 0}×`));
    }
    for (const { node: author } of data.authors.edges) {
      items.push(el("li", { className: "meta", textContent: `author ${clean(author.name || author.id)}` }));
      for (const { node } of author.papers.edges) items.push(paperButton(node, `cited ${node.nCited ?? 0}×`));
    }
    list.replaceChildren(...items);
    list.dataset.total = data.papers.totalCount;
    if (!items.length) list.replaceChildren(el("li", { textContent: "No paper has that id, title or author." }));
  } catch (err) {
    list.replaceChildren(el("li", { className: "error", textContent: err.message }));
  }
}

$("search-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = $("search").value.trim();
  if (text) { state.search = text; writeState(state, false); search(text); }
});

// ---------------------------------------------------------------------------------------------- export
function download(name, blob) {
  const a = el("a", { href: URL.createObjectURL(blob), download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

function exportName(ext) {
  const parts = ["citegraph", state.view, (current && current.unit) || state.unit, state.from, state.to].filter(Boolean);
  return `${parts.join("-").toLowerCase()}.${ext}`;
}

function exportPng() {
  if (state.view === "timeline") return exportTimelineSvg(true);
  if (!renderer) return status("Nothing to export: draw a map first.", true);
  renderer.refresh(); // the WebGL layers are read right after a synchronous render, before the browser clears them
  const { width, height } = $("graph").getBoundingClientRect();
  const ratio = window.devicePixelRatio || 1;
  const out = el("canvas", { width: Math.round(width * ratio), height: Math.round(height * ratio) });
  const ctx = out.getContext("2d");
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, out.width, out.height);
  const canvases = renderer.getCanvases();
  for (const name of ["edges", "nodes", "edgeLabels", "labels", "hovers", "hoverNodes"]) {
    if (canvases[name]) ctx.drawImage(canvases[name], 0, 0, out.width, out.height);
  }
  if (rings) ctx.drawImage(rings, 0, 0, out.width, out.height);
  out.toBlob((blob) => { download(exportName("png"), blob); window.citegraphExported = { name: exportName("png"), size: blob.size }; }, "image/png");
}

const escapeXml = (text) => String(text).replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c]);

/** The screen as SVG: every visible edge and node where sigma draws it, the labels sigma shows, burst rings. */
function exportSvg() {
  if (state.view === "timeline") return exportTimelineSvg(false);
  if (!renderer) return status("Nothing to export: draw a map first.", true);
  const { width, height } = $("graph").getBoundingClientRect();
  const lines = [`<svg xmlns="http://www.w3.org/2000/svg" width="${Math.round(width)}" height="${Math.round(height)}" viewBox="0 0 ${Math.round(width)} ${Math.round(height)}">`,
    `<rect width="100%" height="100%" fill="#fff"/>`, `<g id="edges">`];
  const at = (node) => renderer.graphToViewport(graph.getNodeAttributes(node));
  graph.forEachEdge((edge, attrs, s, t) => {
    const display = renderer.getEdgeDisplayData(edge);
    if (!display || display.hidden) return;
    const [a, b] = [at(s), at(t)];
    lines.push(`<line x1="${a.x.toFixed(1)}" y1="${a.y.toFixed(1)}" x2="${b.x.toFixed(1)}" y2="${b.y.toFixed(1)}" stroke="${escapeXml(display.color)}" stroke-width="${Math.max(0.5, display.size).toFixed(2)}" data-source="${escapeXml(s)}" data-target="${escapeXml(t)}"/>`);
  });
  lines.push(`</g>`, `<g id="nodes">`);
  graph.forEachNode((node) => {
    const display = renderer.getNodeDisplayData(node);
    if (!display || display.hidden) return;
    const p = at(node);
    lines.push(`<circle cx="${p.x.toFixed(1)}" cy="${p.y.toFixed(1)}" r="${renderer.scaleSize(display.size).toFixed(2)}" fill="${escapeXml(display.color)}" data-id="${escapeXml(node)}"><title>${escapeXml(display.label || node)}</title></circle>`);
  });
  lines.push(`</g>`, `<g id="rings" fill="none" stroke="#D55E00">`);
  for (const { at: p, radius, strength } of ringPositions()) {
    lines.push(`<circle cx="${p.x.toFixed(1)}" cy="${p.y.toFixed(1)}" r="${(radius + 2 + strength).toFixed(2)}" stroke-width="${(1 + Math.min(3, strength)).toFixed(2)}"/>`);
  }
  lines.push(`</g>`, `<g id="labels" font-family="system-ui, sans-serif" font-size="12" fill="#000">`);
  for (const node of renderer.getNodeDisplayedLabels()) {
    const display = renderer.getNodeDisplayData(node);
    if (!display || display.hidden || !display.label) continue;
    const p = at(node);
    lines.push(`<text x="${(p.x + renderer.scaleSize(display.size) + 3).toFixed(1)}" y="${(p.y + 4).toFixed(1)}">${escapeXml(display.label)}</text>`);
  }
  lines.push(`</g>`, `</svg>`);
  const text = lines.join("\n");
  download(exportName("svg"), new Blob([text], { type: "image/svg+xml" }));
  window.citegraphExported = { name: exportName("svg"), size: text.length };
}

function exportTimelineSvg(png) {
  const svg = $("timeline").querySelector("svg");
  if (!svg) return status("Nothing to export.", true);
  const text = new XMLSerializer().serializeToString(svg);
  if (!png) { download(exportName("svg"), new Blob([text], { type: "image/svg+xml" })); return; }
  const image = new Image();
  image.onload = () => {
    const out = el("canvas", { width: svg.width.baseVal.value, height: svg.height.baseVal.value });
    const ctx = out.getContext("2d");
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, out.width, out.height);
    ctx.drawImage(image, 0, 0);
    out.toBlob((blob) => download(exportName("png"), blob), "image/png");
  };
  image.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(text);
}

async function exportFile() {
  if (!current || !current.nodes.length) return status("Nothing to export: draw a map first.", true);
  const format = $("export-format").value;
  const measure = state.view === "ego" ? "COUNT" : state.measure;
  const nodes = current.nodes.map((n) => ({ id: n.id, label: clean(n.label), year: n.year ?? null,
    weight: n.weight ?? null, cluster: n.cluster ?? null }));
  const seen = new Set();
  const edges = [];
  for (const e of current.edges) {
    const key = e.source < e.target ? `${e.source}~${e.target}` : `${e.target}~${e.source}`;
    if (seen.has(key)) continue;
    seen.add(key);
    edges.push({ source: e.source, target: e.target, count: Math.round(e.count ?? e.weight ?? 1), strength: e.strength ?? e.weight ?? 1 });
  }
  status(`Writing ${format}…`);
  try {
    const files = (await graphql(EXPORT, { format, measure, nodes, edges })).exportNetwork;
    for (const f of files) download(f.name, new Blob([f.content], { type: f.mediaType }));
    window.citegraphExported = { name: files.map((f) => f.name).join(", ") };
    status(`Exported ${nodes.length} nodes and ${edges.length} links as ${files.map((f) => f.name).join(", ")}`);
  } catch (err) {
    status(`export failed: ${err.message}`, true);
  }
}

$("export-png").addEventListener("click", exportPng);
$("export-svg").addEventListener("click", exportSvg);
$("export-file").addEventListener("click", exportFile);

// ---------------------------------------------------------------------------------------------- recommend and link
async function recommend(context) {
  const list = $("recommendations");
  $("recommend-panel").open = true;
  list.replaceChildren();
  note("recommend-status", "Ranking…");
  const year = $("year-max").value.trim();
  try {
    const data = await graphql(RECOMMEND, { context, yearMax: year ? Number(year) : null });
    const result = data.recommend;
    if (result.__typename === "RecommendUnavailable") {
      note("recommend-status", `${result.reason}: ${result.message}`, true);
      return;
    }
    for (const item of result.items) list.append(paperButton(item.paper, `#${item.rank} · ${item.why}`));
    note("recommend-status", `${result.items.length} of ${result.candidates} candidates, ${(result.seconds * 1000).toFixed(0)} ms`);
  } catch (err) {
    note("recommend-status", err.message, true);
  }
}

function selectedPaper() {
  return state.sel || state.paper || null;
}

function sentenceItem(head, text, meta, isLinked) {
  const quote = el("div", { textContent: head ? `${head} → ${text}` : text });
  if (isLinked) quote.className = "linked";
  return el("li", {}, quote, el("div", { className: "meta", textContent: meta }));
}

// The stored LINKS_TO edges into the selected paper: which of its sentences other papers' citances point at,
// by whom (gold annotator, silver labeller, model).
async function showCitanceLinks(id) {
  const list = $("citance-links");
  list.replaceChildren();
  $("linkage-paper").textContent = `in ${id}`;
  try {
    const result = (await graphql(CITANCE_LINKS, { id })).citanceLinks;
    if (result.__typename === "NotFound") {
      note("citance-links-status", result.message, true);
      return;
    }
    for (const link of result.links) {
      const score = link.score === null ? "" : ` ${link.score.toFixed(2)}`;
      const who = link.annotator ? ` by ${link.annotator}` : "";
      list.append(sentenceItem(`“${clean(link.citingText)}”`, `sentence ${link.citedSid}: ${clean(link.citedText)}`,
        `${link.method}${score}${who} · from ${link.citingPaperId ?? "unknown paper"}`, false));
    }
    note("citance-links-status", result.totalCount
      ? `${result.links.length} of ${result.totalCount} stored links` + (result.truncated ? " (first ones shown)" : "")
      : "No stored links into this paper's sentences.");
    if (result.totalCount) $("linkage-panel").open = true;
  } catch (err) {
    note("citance-links-status", err.message, true);
  }
}

async function link(sentence) {
  const list = $("linked-sentences");
  $("linkage-panel").open = true;
  list.replaceChildren();
  const id = selectedPaper();
  if (!id) {
    note("linkage-status", "Select a paper first (search, or a node of the map): its sentences are scored.", true);
    return;
  }
  note("linkage-status", "Scoring…");
  try {
    const result = (await graphql(LINKAGE, { sentence, id })).linkage;
    if (result.__typename === "LinkageUnavailable") {
      note("linkage-status", `${result.reason}: ${result.message}`, true);
      return;
    }
    for (const s of result.sentences) {
      list.append(sentenceItem("", `sentence ${s.sid}: ${clean(s.text)}`,
        `score ${s.score.toFixed(3)}${s.section ? ` · ${s.section}` : ""}${s.linked ? " · linked" : ""}`, s.linked));
    }
    note("linkage-status", `${result.sentences.filter((s) => s.linked).length} linked of the ${result.sentences.length} best sentences of ${id}`);
  } catch (err) {
    note("linkage-status", err.message, true);
  }
}

$("linkage-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const sentence = $("citance").value.trim();
  if (sentence) link(sentence);
});
$("recommend-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const passage = $("passage").value.trim();
  if (passage) recommend(passage);
});
$("api-key").value = localStorage.getItem("citegraph-api-key") || "";
$("api-key").addEventListener("change", () => localStorage.setItem("citegraph-api-key", $("api-key").value));

// ---------------------------------------------------------------------------------------------- start
window.citegraph = {
  /** Draw a MapNetwork answer ({nodes, edges, unit}) as the map: benchmarks time the renderer alone with it. */
  draw(network) {
    performance.mark("map:data");
    current = network;
    drawnKey = "external";
    const r = draw(network);
    drawLegend(network);
    showOverview(network);
    return r !== null;
  },
  state: () => ({ ...state }),
  renderer: () => renderer,
  graph: () => graph,
  nodePosition(id) {
    // where a node is on screen (CSS pixels in the page), for tests that click it
    if (!renderer || !graph.hasNode(id)) return null;
    const p = renderer.graphToViewport(graph.getNodeAttributes(id));
    const box = $("graph").getBoundingClientRect();
    return { x: box.left + p.x, y: box.top + p.y };
  },
};

const initial = readState();
if (initial.search) { $("search").value = initial.search; search(initial.search); }
if (initial.passage) { $("passage").value = initial.passage; recommend(initial.passage); }
render().then(() => {
  if (initial.citance) { $("citance").value = initial.citance; link(initial.citance); }
});
