// Bench Gateway dashboard: the one way its pages write. A JSON post carrying the page's CSRF
// token, same-origin only, to the page's own root (a signed-in dashboard lives under its
// session's path, /s/<id>); a refusal becomes an Error with the gateway's own message, for the
// page to show. Loaded before the page's own script (both deferred, so run in order).
"use strict";

const csrf = document.querySelector('meta[name="csrf-token"]').content;
const root = document.querySelector('meta[name="dashboard-root"]').content;

async function post(path, body) {
  const reply = await fetch(root + path, {
    method: "POST",
    headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf},
    body: JSON.stringify(body),
    credentials: "same-origin",
  });
  const data = await reply.json().catch(() => ({}));
  if (!reply.ok) {
    throw new Error((data.error && data.error.message) || ("HTTP " + reply.status));
  }
  return data;
}
