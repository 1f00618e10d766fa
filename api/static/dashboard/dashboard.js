// citegraph dashboard: an example client of the GraphQL API (search, ego network, co-cited papers,
// citation recommendations for a passage, sentence linkage). Plain JavaScript, no build step;
// cytoscape.js comes from the local npm package (/assets). Open /?paper=<id> to draw a paper at once,
// /?passage=<text> to recommend at once, /?paper=<id>&citance=<text> to link a citance into that
// paper's sentences. To add a panel, write its query below and call `graphql(query, variables)`.
"use strict";

const ENDPOINT = "/graphql";
const $ = (id) => document.getElementById(id);
const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];

const SEARCH = `query Search($text: String!, $first: Int!) {
  papers(search: $text, first: $first) { totalCount edges { node { id label title year nCited } } }
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

async function graphql(query, variables) {
  const headers = { "content-type": "application/json" };
  const key = $("api-key").value.trim();
  if (key) headers["authorization"] = `Bearer ${key}`;
  const response = await fetch(ENDPOINT, { method: "POST", headers, body: JSON.stringify({ query, variables }) });
  const body = await response.json();
  if (body.errors && body.errors.length) {
    const e = body.errors[0];
    throw new Error(`${e.extensions && e.extensions.code ? e.extensions.code + ": " : ""}${e.message}`);
  }
  return body.data;
}

function paperItem(paper, extra) {
  const li = document.createElement("li");
  const button = document.createElement("button");
  button.textContent = paper.label || paper.title || paper.id;  // a cited-reference stub reads by its label
  button.dataset.paperId = paper.id;
  button.addEventListener("click", () => showPaper(paper.id));
  const meta = document.createElement("div");
  meta.className = "meta";
  meta.textContent = [paper.year, extra].filter((x) => x !== null && x !== undefined && x !== "").join(" · ");
  li.append(button, meta);
  return li;
}

function status(text, isError) {
  const el = $("graph-status");
  el.textContent = text;
  el.className = isError ? "error" : "";
}

async function search(text) {
  const list = $("results");
  list.replaceChildren();
  try {
    const data = await graphql(SEARCH, { text, first: 25 });
    for (const { node } of data.papers.edges) list.append(paperItem(node, `cited ${node.nCited ?? 0}×`));
    list.dataset.total = data.papers.totalCount;
    if (!data.papers.edges.length) list.textContent = "No paper title contains that.";
  } catch (err) {
    list.textContent = err.message;
    list.className = "error";
  }
}

let cy = null;

function draw(network) {
  const maxCited = Math.max(1, ...network.nodes.map((n) => n.nCited || 0));
  const elements = [
    ...network.nodes.map((n) => ({
      data: {
        id: n.id, label: n.label, hops: n.hops,
        size: 14 + 30 * Math.sqrt((n.nCited || 0) / maxCited),
        color: n.hops === 0 ? "#222" : n.cluster === null ? "#bbb" : PALETTE[n.cluster % PALETTE.length],
      },
    })),
    ...network.edges.map((e, i) => ({
      data: { id: `e${i}`, source: e.source, target: e.target, kind: e.kind, width: Math.min(6, 0.8 + Math.log1p(e.weight)) },
    })),
  ];
  if (cy) cy.destroy();
  cy = cytoscape({
    container: $("graph"),
    elements,
    style: [
      { selector: "node", style: { "background-color": "data(color)", width: "data(size)", height: "data(size)",
        label: "data(label)", "font-size": 8, "text-wrap": "ellipsis", "text-max-width": 120 } },
      { selector: "edge[kind = 'CITES']", style: { width: "data(width)", "line-color": "#999", "curve-style": "bezier",
        "target-arrow-shape": "triangle", "target-arrow-color": "#999", "arrow-scale": 0.6 } },
      { selector: "edge[kind = 'CO_CITED']", style: { width: "data(width)", "line-color": "#e15759", "line-style": "dashed", opacity: 0.6 } },
    ],
    layout: { name: "cose", animate: false, randomize: false, nodeRepulsion: 8000, idealEdgeLength: 60 },
  });
  cy.on("tap", "node", (event) => showPaper(event.target.id()));
  window.citegraphGraph = { nodes: network.nodes.length, edges: network.edges.length, seed: network.seed };
}

async function showPaper(id) {
  status("Loading…");
  const url = new URL(window.location.href);
  url.searchParams.set("paper", id);
  history.replaceState(null, "", url);
  const variables = {
    id, depth: Number($("depth").value), direction: $("direction").value,
    limit: Number($("limit").value), co: $("cocitation").checked,
  };
  try {
    const [ego, cocited] = await Promise.all([graphql(EGO, variables), graphql(COCITED, { id }), showCitanceLinks(id)]);
    const network = ego.egoNetwork;
    if (network.__typename === "NotFound") {
      status(network.message, true);
      return;
    }
    const seed = network.nodes[0];
    $("seed-title").textContent = seed.title || seed.label || seed.id;
    draw(network);
    status(`${network.nodes.length} papers, ${network.edges.length} edges` +
      (network.truncated ? ` (cut to the limit; the walk reached ${network.reached})` : ""));
    const list = $("cocited");
    list.replaceChildren();
    if (cocited.coCitations.__typename === "CoCitationList") {
      for (const pair of cocited.coCitations.pairs) {
        list.append(paperItem(pair.target, `co-cited ${pair.count}×, association ${pair.association?.toFixed(2) ?? "–"}`));
      }
      if (!cocited.coCitations.pairs.length) list.textContent = "Not co-cited with any paper.";
    }
  } catch (err) {
    status(err.message, true);
  }
}

async function recommend(context) {
  const list = $("recommendations");
  const note = $("recommend-status");
  list.replaceChildren();
  note.className = "";
  note.textContent = "Ranking…";
  const year = $("year-max").value.trim();
  try {
    const data = await graphql(RECOMMEND, { context, yearMax: year ? Number(year) : null });
    const result = data.recommend;
    if (result.__typename === "RecommendUnavailable") {
      note.textContent = `${result.reason}: ${result.message}`;
      note.className = "error";
      return;
    }
    for (const item of result.items) list.append(paperItem(item.paper, `#${item.rank} · ${item.why}`));
    note.textContent = `${result.items.length} of ${result.candidates} candidates, ${(result.seconds * 1000).toFixed(0)} ms`;
  } catch (err) {
    note.textContent = err.message;
    note.className = "error";
  }
}

function selectedPaper() {
  return new URL(window.location.href).searchParams.get("paper");
}

function note(id, text, isError) {
  $(id).textContent = text;
  $(id).className = isError ? "error" : "";
}

function sentenceItem(head, text, meta, isLinked) {
  const li = document.createElement("li");
  const quote = document.createElement("div");
  quote.textContent = head ? `${head} → ${text}` : text;
  if (isLinked) quote.className = "linked";
  const detail = document.createElement("div");
  detail.className = "meta";
  detail.textContent = meta;
  li.append(quote, detail);
  return li;
}

// The stored LINKS_TO edges into the selected paper: which of its sentences other papers' citances
// point at, by whom (gold annotator, silver labeller, model).
async function showCitanceLinks(id) {
  const list = $("citance-links");
  list.replaceChildren();
  $("linkage-paper").textContent = `in ${id}`;
  try {
    const data = await graphql(CITANCE_LINKS, { id });
    const result = data.citanceLinks;
    if (result.__typename === "NotFound") {
      note("citance-links-status", result.message, true);
      return;
    }
    for (const link of result.links) {
      const score = link.score === null ? "" : ` ${link.score.toFixed(2)}`;
      const who = link.annotator ? ` by ${link.annotator}` : "";
      list.append(sentenceItem(`“${link.citingText}”`, `sentence ${link.citedSid}: ${link.citedText}`,
        `${link.method}${score}${who} · from ${link.citingPaperId ?? "unknown paper"}`, false));
    }
    note("citance-links-status", result.totalCount
      ? `${result.links.length} of ${result.totalCount} stored links` + (result.truncated ? " (first ones shown)" : "")
      : "No stored links into this paper's sentences.");
  } catch (err) {
    note("citance-links-status", err.message, true);
  }
}

async function link(sentence) {
  const list = $("linked-sentences");
  list.replaceChildren();
  const id = selectedPaper();
  if (!id) {
    note("linkage-status", "Select a paper first (search, or a node of the graph): its sentences are scored.", true);
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
      list.append(sentenceItem("", `sentence ${s.sid}: ${s.text}`,
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
$("search-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = $("search").value.trim();
  if (text) search(text);
});
for (const id of ["depth", "direction", "limit", "cocitation"]) {
  $(id).addEventListener("change", () => {
    const paper = new URL(window.location.href).searchParams.get("paper");
    if (paper) showPaper(paper);
  });
}
$("api-key").value = localStorage.getItem("citegraph-api-key") || "";
$("api-key").addEventListener("change", () => localStorage.setItem("citegraph-api-key", $("api-key").value));

const params = new URL(window.location.href).searchParams;
if (params.get("search")) { $("search").value = params.get("search"); search(params.get("search")); }
if (params.get("paper")) showPaper(params.get("paper"));
if (params.get("citance")) { $("citance").value = params.get("citance"); link(params.get("citance")); }
if (params.get("passage")) { $("passage").value = params.get("passage"); recommend(params.get("passage")); }
