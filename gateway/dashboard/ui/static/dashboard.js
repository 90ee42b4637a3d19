// Bench Gateway dashboard: verdicts, keys and sign-in as JSON posts carrying the CSRF token
// (post.js), and live updates from the gateway's own event stream. No framework, nothing from
// elsewhere.
"use strict";

// A signed-in dashboard lives under its session's path (/s/<id>/, its cookie's Path: no other
// server on this host is ever sent it). The page keeps that path in localStorage, which is this
// origin's alone, so that / (or any page's address without it) comes back to it.
const ROOT_KEPT = "bench-root";
const DEVICE_KEPT = "bench-device";

function here() {
  return location.pathname.replace(/^\/s\/[^/]+(?=\/)/, "") + location.search + location.hash;
}

if (document.getElementById("signin")) {
  const kept = localStorage.getItem(ROOT_KEPT);
  if (kept && !location.pathname.startsWith(kept)) {
    location.replace(kept.replace(/\/$/, "") + here());
  } else if (kept) {
    localStorage.removeItem(ROOT_KEPT);  // its session is over (signed out, expired)
  }
}

function seatOf(element) {
  return element.closest("[data-call]");
}

async function judge(seat, useful, note) {
  const body = {call: seat.dataset.call, useful: useful};
  if (note) body.note = note;
  const reply = await post("/ui/verdict", body);
  seat.dataset.judged = useful ? "useful" : "not-useful";
  seat.classList.remove("owed");
  if (reply.shown) seat.querySelector(".alias").textContent = reply.shown.alias;  // blind until now
}

document.addEventListener("click", async (event) => {
  const target = event.target.closest("button");
  if (!target) return;
  const seat = seatOf(target);
  if (seat && target.classList.contains("open")) {
    const answer = seat.querySelector(".answer");
    answer.hidden = !answer.hidden;
    target.setAttribute("aria-expanded", String(!answer.hidden));
  } else if (seat && target.dataset.verdict) {
    try {
      await judge(seat, target.dataset.verdict === "useful");
      const answer = seat.querySelector(".answer");
      answer.hidden = false;  // a note can follow
    } catch (error) {
      seat.dataset.error = error.message;
      seat.title = error.message;
    }
  } else if (target.classList.contains("draft")) {  // a suite draft approved or rejected
    const row = target.closest("tr");
    const id = encodeURIComponent(target.dataset.draft);
    try {
      const decided = await post(`/bench/suite/drafts/${id}/${target.dataset.action}`, {});
      row.dataset.state = decided.state;
      row.querySelector(".decide").textContent = decided.state;
    } catch (error) {
      row.title = error.message;
    }
  } else if (target.classList.contains("revoke")) {
    await keyAction(() => post("/ui/keys/revoke", {name: target.dataset.name}));
  } else if (target.classList.contains("restore")) {
    await modelAction(() => post(modelPath(target, "restore"), {}));
  } else if (target.id === "signout") {
    await post("/ui/signout", {});
    localStorage.removeItem(ROOT_KEPT);
    location.replace("/");
  }
});

document.addEventListener("submit", async (event) => {
  const form = event.target;
  if (form.id === "usage-month") return;  // an ordinary GET: the page for that month
  event.preventDefault();
  if (form.classList.contains("note")) {
    const seat = seatOf(form);
    const useful = seat.dataset.judged !== "not-useful";
    const saved = form.querySelector(".saved");
    saved.textContent = "";
    await judge(seat, useful, form.elements.note.value).then(() => {
      saved.textContent = "saved";  // the sign the judging page gives too
    }).catch((error) => {
      seat.title = error.message;
      saved.textContent = error.message;
    });
  } else if (form.id === "signin") {
    try {
      const device = localStorage.getItem(DEVICE_KEPT);  // this browser, to the sign-in count
      const signed = await post("/ui/signin", {token: form.elements.token.value, device: device});
      localStorage.setItem(DEVICE_KEPT, signed.device);
      localStorage.setItem(ROOT_KEPT, signed.root);
      location.replace(signed.root.replace(/\/$/, "") + here());
    } catch (error) {
      document.getElementById("signin-error").textContent = error.message;
    }
  } else if (form.classList.contains("retire")) {
    await modelAction(() => post(modelPath(form, "retire"), {why: form.elements.why.value}));
  } else if (form.id === "new-key") {
    const body = {name: form.elements.name.value};
    const collections = form.elements.collections.value.split(",").map((c) => c.trim());
    if (collections.some(Boolean)) body.collections = collections.filter(Boolean);
    if (form.elements.rpm.value) body.rpm = Number(form.elements.rpm.value);
    await keyAction(async () => {
      const made = await post("/ui/keys", body);
      sessionStorage.setItem("bench-new-key", made.key);
    });
  }
});

async function keyAction(action) {
  try {
    await action();
    location.hash = "keys";
    location.reload();
  } catch (error) {
    document.getElementById("key-error").textContent = error.message;
  }
}

// Retire and restore from the Models table: the page again, at the table, the model's health
// (and the banner) as the gateway now has them.
function modelPath(element, action) {
  return "/ui/models/" + encodeURIComponent(element.dataset.model) + "/" + action;
}

async function modelAction(action) {
  try {
    await action();
    location.hash = "models";
    location.reload();
  } catch (error) {
    document.getElementById("model-error").textContent = error.message;
  }
}

function showNewKey() {
  const key = sessionStorage.getItem("bench-new-key");
  const shown = document.getElementById("new-key-shown");
  if (!key || !shown) return;
  sessionStorage.removeItem("bench-new-key");  // shown once
  shown.querySelector("code").textContent = key;
  shown.hidden = false;
}

// Live updates: when the gateway writes a panel, seat or verdict, fetch the list again
// (first page only; seats left open stay open; not while a note is being typed).
const panels = document.getElementById("panels");
let refreshing = false;
let wanted = false;

async function refresh() {
  const list = document.getElementById("panel-list");
  if (refreshing || (list.contains(document.activeElement) && document.activeElement.tagName === "INPUT")) {
    wanted = true;
    return;
  }
  refreshing = true;
  wanted = false;
  try {
    const open = new Set([...list.querySelectorAll(".answer:not([hidden])")].map((a) => seatOf(a).dataset.call));
    const reply = await fetch(root + "/ui/panels" + location.search, {credentials: "same-origin"});
    if (!reply.ok) return;
    const holder = document.createElement("div");
    holder.innerHTML = await reply.text();  // the server's escaped HTML; scripts never run here
    const fresh = holder.firstElementChild;
    for (const call of open) {
      const seat = fresh.querySelector(`[data-call="${CSS.escape(call)}"]`);
      if (seat) seat.querySelector(".answer").hidden = false;
    }
    list.replaceWith(fresh);
    const owed = document.getElementById("owed");
    owed.textContent = fresh.dataset.owed + (fresh.dataset.owedCapped === "true" ? "+" : "");
  } finally {
    refreshing = false;
    if (wanted) setTimeout(refresh, 500);
  }
}

if (panels && panels.dataset.firstPage === "true" && window.EventSource) {
  const live = document.getElementById("live");
  const events = new EventSource(root + "/ui/events");
  events.addEventListener("hello", () => live.classList.add("on"));
  events.addEventListener("change", () => refresh());
  events.onerror = () => live.classList.remove("on");
  document.addEventListener("focusout", () => { if (wanted) setTimeout(refresh, 100); });
}

// Picking a month shows it at once (the form's button does the same without a script).
const usageMonth = document.getElementById("usage-month");
if (usageMonth) {
  usageMonth.elements.month.addEventListener("change", () => usageMonth.requestSubmit());
}

showNewKey();
