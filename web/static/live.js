// live.js runs on every signed-in page. It keeps one websocket to /ws and
// with it the count of waiting asks in the menu badge and the tab title,
// and shows a browser notification when an ask arrives while the tab is
// hidden (only after the person allowed notifications with the button).
// Other scripts (approvals.js) listen through window.toolgate.on and send
// through window.toolgate.send. The pages work without it.
(function () {
  "use strict";
  var badges = document.querySelectorAll('[data-testid="pending-badge"], [data-testid="menu-badge"]');
  var notifyBtn = document.querySelector('[data-testid="notify-button"]');
  var baseTitle = document.title.replace(/^\(\d+\) /, "");
  var pending = {};
  var listeners = [];
  var sock = null;
  var retry = 500;

  function count() { return Object.keys(pending).length; }

  function show() {
    var n = count();
    badges.forEach(function (badge) {
      badge.textContent = String(n);
      badge.hidden = n === 0;
      badge.dataset.count = String(n);
    });
    document.title = n > 0 ? "(" + n + ") " + baseTitle : baseTitle;
  }

  function emit(msg) {
    listeners.forEach(function (f) { try { f(msg); } catch (e) { /* a listener's bug stays its own */ } });
  }

  function notify(a) {
    if (!document.hidden || !("Notification" in window) || Notification.permission !== "granted") { return; }
    var req = (a && a.request) || {};
    var args = req.tool_args || {};
    var what = args.command || args.cmd || args.path || args.file_path || "";
    var n = new Notification(notifyTitle, { body: (req.tool_name || "") + (what ? ": " + what : ""), tag: a.id });
    n.onclick = function () { window.focus(); location.href = "/approvals"; };
  }
  var notifyTitle = (notifyBtn && notifyBtn.dataset.title) || "toolgate: an agent is waiting";

  function onMessage(ev) {
    var msg;
    try { msg = JSON.parse(ev.data); } catch (e) { return; }
    switch (msg.type) {
      case "hello":
        pending = {};
        (msg.pending || []).forEach(function (a) { pending[a.id] = true; });
        break;
      case "approval.requested":
        if (msg.approval && msg.approval.status === "pending" && !pending[msg.approval.id]) {
          pending[msg.approval.id] = true;
          notify(msg.approval);
        }
        break;
      case "approval.resolved":
        if (msg.approval) { delete pending[msg.approval.id]; }
        break;
      case "approval.decided":
        delete pending[msg.id];
        break;
    }
    show();
    emit(msg);
  }

  function connect() {
    var proto = location.protocol === "https:" ? "wss:" : "ws:";
    sock = new WebSocket(proto + "//" + location.host + "/ws");
    sock.onopen = function () { retry = 500; emit({ type: "live", on: true }); };
    sock.onmessage = onMessage;
    sock.onclose = function () {
      sock = null;
      emit({ type: "live", on: false });
      setTimeout(connect, retry);
      retry = Math.min(retry * 2, 10000);
    };
  }

  // The permission is asked for only when the person presses the button.
  function setupNotify() {
    if (!notifyBtn || !("Notification" in window)) { return; }
    var refresh = function () { notifyBtn.hidden = Notification.permission !== "default"; };
    notifyBtn.addEventListener("click", function () {
      var p = Notification.requestPermission(refresh);
      if (p && p.then) { p.then(refresh); }
    });
    refresh();
  }

  // localTimes shows every time[data-local] under root in the viewer's own
  // time zone; the UTC text the server wrote becomes its title (hover).
  function localTimes(root) {
    (root || document).querySelectorAll("time[data-local]").forEach(function (el) {
      if (el.dataset.localized) { return; }
      var d = new Date(el.getAttribute("datetime"));
      if (isNaN(d.getTime())) { return; }
      var opts = { hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" };
      if (el.dataset.local === "datetime") { opts.year = "numeric"; opts.month = "2-digit"; opts.day = "2-digit"; }
      el.title = el.textContent.trim() + (/UTC/.test(el.textContent) ? "" : " UTC");
      el.textContent = d.toLocaleString(undefined, opts);
      el.dataset.localized = "1";
    });
  }

  window.toolgate = {
    on: function (f) { listeners.push(f); },
    send: function (msg) {
      if (!sock || sock.readyState !== WebSocket.OPEN) { return false; }
      sock.send(JSON.stringify(msg));
      return true;
    },
    localTimes: localTimes
  };
  localTimes(document);
  // Copy buttons (the new token's secret) copy their target's text.
  document.querySelectorAll("[data-copy]").forEach(function (b) {
    var target = document.querySelector(b.dataset.copy);
    if (!target || !navigator.clipboard) { return; }
    b.hidden = false;
    b.addEventListener("click", function () {
      navigator.clipboard.writeText(target.textContent).then(function () { b.textContent = b.dataset.copied || "Copied"; });
    });
  });
  // On a phone the menu folds behind its button (the CSS does the folding
  // only when this ran, so without JavaScript the menu stays open).
  function setupMenu() {
    var toggle = document.querySelector('[data-testid="menu-toggle"]');
    var menu = document.getElementById("site-menu");
    if (!toggle || !menu) { return; }
    document.documentElement.classList.add("menu-folds");
    toggle.hidden = false;
    toggle.addEventListener("click", function () {
      var open = menu.classList.toggle("open");
      toggle.setAttribute("aria-expanded", open ? "true" : "false");
    });
  }

  setupNotify();
  setupMenu();
  connect();
})();
