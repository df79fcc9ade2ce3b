// approvals.js keeps the approvals inbox live through live.js's websocket:
// an ask that arrives is fetched as a server-rendered card from
// /approvals/item, an ask answered anywhere leaves the list and joins the
// recent answers. A choice is held for a few seconds with an Undo toast,
// shown where the card was, before it is sent (over the socket, else as the form's post). Without
// JavaScript the form posts at once. An "allow for" button carries its
// ttl_seconds (data-ttl), and each button the words of its answer
// (data-done). An answer that made a grant says until when it holds. It
// also runs the expiry countdowns.
(function () {
  "use strict";
  var list = document.querySelector('[data-testid="approvals"]');
  var empty = document.querySelector('[data-testid="no-approvals"]');
  var status = document.querySelector('[data-testid="live-status"]');
  var toast = document.querySelector('[data-testid="toast"]');
  var toastText = toast && toast.querySelector('[data-field="toast-text"]');
  var undoBtn = toast && toast.querySelector('[data-testid="undo"]');
  var recent = document.querySelector('[data-testid="recent-list"]');
  var noRecent = document.querySelector('[data-testid="no-recent"]');
  var csrf = document.body.dataset.csrf;
  var UNDO_MS = 5000;
  if (!list || !window.toolgate) { return; }
  var held = null; // {li, choice, timer}
  var toastTimer = null;
  var words = { allow_once: "Allowed once", allow_session: "Allowed for this session", allow_for: "Allowed for",
    allow_while: "Allowed for a while", allow_always: "Always allowed", deny: "Denied", granteduntil: "granted until",
    elsewhere: "Answered elsewhere.", expired: "expired", "in": "in",
    nottaken: "The answer was not taken; try again.", notsent: "The answer could not be sent; try again." };
  try { Object.assign(words, JSON.parse(toast.dataset.words || "{}")); } catch (e) { /* English stays */ }

  function refreshEmpty() {
    var shown = Array.prototype.filter.call(list.children, function (li) { return !li.hidden && li !== toast; });
    empty.hidden = shown.length > 0;
  }

  function find(id) {
    if (!id) { return null; }
    for (var i = 0; i < list.children.length; i++) {
      if (list.children[i].dataset.approvalId === id) { return list.children[i]; }
    }
    return null;
  }

  // add fetches the server's card for an ask, so a live card says exactly
  // what a reloaded page would.
  function add(id) {
    if (!id || find(id)) { return; }
    fetch("/approvals/item?id=" + encodeURIComponent(id), { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : ""; })
      .then(function (html) {
        if (!html || find(id)) { return; }
        var t = document.createElement("template");
        t.innerHTML = html.trim();
        var card = t.content.firstElementChild;
        if (card) { list.appendChild(card); window.toolgate.localTimes(card); }
        tick();
        refreshEmpty();
      });
  }

  function remove(id) {
    var el = find(id);
    if (el) { el.remove(); }
    if (held && held.li.dataset.approvalId === id) {
      clearTimeout(held.timer);
      held = null;
      say(words.elsewhere, false);
    }
    refreshEmpty();
  }

  function say(text, undo) {
    clearTimeout(toastTimer);
    toastText.textContent = text;
    undoBtn.hidden = !undo;
    toast.hidden = false;
    if (!undo) { toastTimer = setTimeout(function () { toast.hidden = true; }, 4000); }
  }

  function remember(a) {
    if (!recent || !a) { return; }
    var li = document.createElement("li");
    li.dataset.testid = "recent-answer";
    var b = document.createElement("span");
    b.className = "badge " + (a.status === "allowed" ? "allow" : a.status === "denied" ? "deny" : "none");
    b.textContent = a.status;
    var req = a.request || {};
    var args = req.tool_args || {};
    var tool = document.createElement("code");
    tool.className = "id";
    tool.textContent = req.tool_name || "";
    var what = document.createElement("code");
    what.className = "id";
    what.textContent = args.command || args.cmd || args.path || args.file_path || "";
    var by = document.createElement("span");
    by.className = "hint";
    var said = a.choice === "allow_for" ? words.allow_while : words[a.choice];
    by.textContent = a.choice ? (said || a.choice.replace(/_/g, " ")) + " by " + (a.decided_by || "") + ", " : "";
    var when = document.createElement("time");
    var at = new Date(a.decided_at || Date.now());
    when.setAttribute("datetime", at.toISOString());
    when.dataset.local = "time";
    when.textContent = at.toISOString().substring(11, 19) + " UTC";
    by.append(when);
    li.append(b, " ", tool, " ", what, " ", by);
    var until = grantUntil(a);
    if (until) {
      var g = document.createElement("span");
      g.dataset.testid = "recent-grant";
      g.append(" · " + words.granteduntil + " ", timeEl(until, "datetime"));
      by.append(g);
    }
    window.toolgate.localTimes(li);
    recent.insertBefore(li, recent.firstChild);
    while (recent.children.length > 8) { recent.lastChild.remove(); }
    if (noRecent) { noRecent.hidden = true; }
  }

  // grantUntil is when the grant a scoped answer made ends, if it made one.
  function grantUntil(a) {
    var g = a && a.grant;
    return g && g.expires_at ? new Date(g.expires_at) : null;
  }

  function timeEl(at, kind) {
    var el = document.createElement("time");
    el.setAttribute("datetime", at.toISOString());
    el.dataset.local = kind;
    el.textContent = at.toISOString().substring(0, 19).replace("T", " ") + " UTC";
    return el;
  }

  function failed(msg) {
    var li = msg.id ? find(msg.id) : null;
    if (!li) { return; }
    if (msg.code === "conflict" || msg.code === "not_found") { remove(msg.id); return; }
    li.hidden = false;
    // A choice the ask never offered (no session) stays disabled.
    li.querySelectorAll("button:not([data-unavailable])").forEach(function (b) { b.disabled = false; });
    var el = li.querySelector('[data-field="error"]');
    // The hub's error codes are the protocol; the page says them in its own words.
    if (el) { el.textContent = String(words["ws_" + msg.code] || msg.message || ""); }
    refreshEmpty();
  }

  // send gives the held answer to the server: over the socket, or as the
  // form's post when the socket is down.
  function send(h) {
    var id = h.li.dataset.approvalId;
    h.li.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
    var msg = { type: "approval.decide", id: id, choice: h.choice };
    if (h.ttl) { msg.ttl_seconds = h.ttl; }
    if (window.toolgate.send(msg)) { return; }
    var body = new URLSearchParams({ csrf_token: csrf, id: id, choice: h.choice });
    if (h.ttl) { body.append("ttl_seconds", String(h.ttl)); }
    fetch("/approvals/decide", { method: "POST", credentials: "same-origin", body: body })
      .then(function (r) { if (r.ok) { remove(id); } else { failed({ id: id, message: words.nottaken }); } })
      .catch(function () { failed({ id: id, message: words.notsent }); });
  }

  function flush() {
    if (!held) { return; }
    var h = held;
    held = null;
    clearTimeout(h.timer);
    send(h);
  }

  list.addEventListener("click", function (ev) {
    var btn = ev.target.closest("button[name=choice]");
    if (!btn) { return; }
    ev.preventDefault();
    flush();
    var li = btn.closest("[data-approval-id]");
    var err = li.querySelector('[data-field="error"]');
    if (err) { err.textContent = ""; }
    var what = li.querySelector('[data-field="summary"]');
    list.insertBefore(toast, li); // the toast takes the card's place
    li.hidden = true;
    refreshEmpty();
    var done = btn.dataset.done || words[btn.value] || btn.value;
    held = { li: li, choice: btn.value, ttl: parseInt(btn.dataset.ttl || "0", 10) || 0, done: done,
      timer: setTimeout(function () { flush(); say(done + ".", false); }, UNDO_MS) };
    say(done + ": " + (what ? what.textContent.substring(0, 80) : ""), true);
  });

  undoBtn.addEventListener("click", function () {
    if (!held) { return; }
    clearTimeout(held.timer);
    held.li.hidden = false;
    held = null;
    toast.hidden = true;
    refreshEmpty();
  });

  // Leaving the page sends a held answer rather than dropping it.
  window.addEventListener("pagehide", function () {
    if (!held) { return; }
    var h = held;
    held = null;
    var body = new FormData();
    body.append("csrf_token", csrf);
    body.append("id", h.li.dataset.approvalId);
    body.append("choice", h.choice);
    if (h.ttl) { body.append("ttl_seconds", String(h.ttl)); }
    navigator.sendBeacon("/approvals/decide", body);
  });

  window.toolgate.on(function (msg) {
    switch (msg.type) {
      case "live":
        status.dataset.state = msg.on ? "on" : "off";
        status.textContent = msg.on ? (status.dataset.on || "live") : (status.dataset.off || "live updates off (reconnecting)");
        break;
      case "hello":
        var ids = {};
        (msg.pending || []).forEach(function (a) { ids[a.id] = true; add(a.id); });
        Array.prototype.slice.call(list.children).forEach(function (li) {
          if (li.dataset.approvalId && !ids[li.dataset.approvalId]) { remove(li.dataset.approvalId); }
        });
        refreshEmpty();
        break;
      case "approval.requested":
        if (msg.approval) { add(msg.approval.id); }
        break;
      case "approval.resolved":
        if (msg.approval) { remove(msg.approval.id); remember(msg.approval); }
        break;
      case "approval.decided":
        remove(msg.id);
        var until = grantUntil(msg.approval);
        if (until) {
          say((msg.approval.choice === "allow_for" ? words.allow_while : words[msg.approval.choice] || msg.approval.choice) + ", " + words.granteduntil + " " + until.toLocaleString() + ".", false);
        }
        break;
      case "error":
        failed(msg);
        break;
    }
  });

  // tick refreshes every expiry countdown.
  function tick() {
    document.querySelectorAll("[data-countdown]").forEach(function (el) {
      var left = Math.round((Date.parse(el.dataset.countdown) - Date.now()) / 1000);
      if (isNaN(left)) { return; }
      if (left <= 0) { el.textContent = words.expired; el.classList.add("soon"); return; }
      var m = Math.floor(left / 60), s = left % 60;
      el.textContent = words["in"] + " " + m + ":" + (s < 10 ? "0" : "") + s;
      el.classList.toggle("soon", left < 60);
    });
  }
  tick();
  setInterval(tick, 1000);
})();
