// Bench Gateway: one panel's judging page. A verdict per seat (a click, or u / n on the seat
// j / k moved to), with the note and the claims marked real or false, posted as JSON with the
// CSRF token (post.js). Blind, a judged seat's model is named from the verdict's reply. Nothing else is
// fetched, nothing from elsewhere.
"use strict";

const seats = [...document.querySelectorAll("#answers [data-call]")];
const MARKS = ["real", "false"];  // a claim's marks, in the order a click goes through them
let current = -1;
// The page put the keys on the first owed seat and nothing has moved them since: the first `j`
// lands there (the seat already shown as current), not on the seat after it.
let fresh = false;

function judgeable(seat) {
  return seat.querySelector("button.verdict") !== null;
}

// The seat the keys act on; `focus`: move the focus there too (keys do; a click leaves it where
// it went, the note's box for one).
function moveTo(index, focus = true, scroll = true) {
  if (!seats.length) return;
  fresh = false;
  current = (index + seats.length) % seats.length;
  seats.forEach((seat, n) => seat.classList.toggle("current", n === current));
  const seat = seats[current];
  if (focus) seat.focus({preventScroll: true});
  if (scroll) seat.scrollIntoView({block: "nearest", inline: "nearest"});
}

function nextOwed(from) {
  for (let step = 1; step <= seats.length; step++) {
    const n = (from + step) % seats.length;
    if (seats[n].classList.contains("owed")) return n;
  }
  return -1;
}

function claimsOf(seat) {
  const marked = {real: [], false: []};
  for (const claim of seat.querySelectorAll(".claim[data-mark]")) {
    marked[claim.dataset.mark].push(claim.dataset.claim);
  }
  return marked;
}

async function judge(seat, useful) {
  const body = {call: seat.dataset.call, useful: useful};
  const note = seat.querySelector("textarea[name=note]").value.trim();
  if (note) body.note = note;
  const marked = claimsOf(seat);
  if (marked.real.length) body.real = marked.real;
  if (marked.false.length) body.false = marked.false;
  const saved = seat.querySelector(".saved");
  try {
    const reply = await post("/ui/verdict", body);
    seat.dataset.judged = useful ? "useful" : "not-useful";
    seat.classList.remove("owed", "unsaved");
    saved.textContent = reply.recorded ? "saved" : "already so";
    reveal(seat, reply);
    owedLeft();
    return true;
  } catch (error) {
    saved.textContent = error.message;
    seat.dataset.error = error.message;
    return false;
  }
}

function reveal(seat, reply) {
  const who = seat.querySelector(".who");
  if (reply.shown && !who.textContent.trim()) {  // blind until now: name it, as text only
    who.textContent = `${reply.shown.alias} · ${reply.shown.model} · ${reply.shown.connection}`;
  }
  if (reply.blind) seat.dataset.judgedBlind = "true";
}

function owedLeft() {
  const left = seats.filter((seat) => seat.classList.contains("owed")).length;
  document.getElementById("owed-here").textContent = String(left);
  const next = document.getElementById("next-owed");
  if (!left && next) next.classList.add("ready");
  return left;
}

function markClaim(claim) {
  const at = MARKS.indexOf(claim.dataset.mark);
  if (at + 1 < MARKS.length) claim.dataset.mark = MARKS[at + 1];
  else delete claim.dataset.mark;
  const seat = claim.closest("[data-call]");
  if (seat.dataset.judged) {
    seat.classList.add("unsaved");
    seat.querySelector(".saved").textContent = "marks not saved yet: save, or judge again";
  }
}

document.addEventListener("click", async (event) => {
  const seat = event.target.closest("#answers [data-call]");
  if (seat) moveTo(seats.indexOf(seat), false, false);
  const button = event.target.closest("button.verdict");
  const claim = event.target.closest(".claim");
  if (button && seat) {
    await judge(seat, button.dataset.verdict === "useful");
  } else if (claim && seat && !String(window.getSelection())) {  // selecting text marks nothing
    markClaim(claim);
  }
});

document.addEventListener("submit", async (event) => {
  event.preventDefault();
  const seat = event.target.closest("[data-call]");
  if (!seat) return;
  if (!seat.dataset.judged) {
    seat.querySelector(".saved").textContent = "choose useful or not useful first";
    return;
  }
  await judge(seat, seat.dataset.judged === "useful");
});

document.addEventListener("keydown", async (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.target.closest("textarea, input, select, [contenteditable]")) {
    if (event.key === "Escape") event.target.blur();  // back to the keys
    return;
  }
  if (event.key === "j") {
    moveTo(fresh ? current : current + 1);
  } else if (event.key === "k") {
    moveTo(current < 0 ? seats.length - 1 : current - 1);
  } else if (event.key === "u" || event.key === "n") {
    if (current < 0) moveTo(Math.max(nextOwed(seats.length - 1), 0));
    const seat = seats[current];
    if (!seat || !judgeable(seat)) return;
    event.preventDefault();
    if (await judge(seat, event.key === "u") && owedLeft()) moveTo(nextOwed(current));
    return;
  } else {
    return;
  }
  event.preventDefault();
});

// Marks a verdict already holds are shown as marked.
for (const seat of seats) {
  const marked = JSON.parse(seat.dataset.marked || "{}");
  for (const claim of seat.querySelectorAll(".claim")) {
    const mark = marked[claim.dataset.claim];
    if (MARKS.includes(mark)) claim.dataset.mark = mark;
  }
}
if (seats.length) {
  moveTo(Math.max(nextOwed(seats.length - 1), 0), true, false);
  fresh = true;
}
