// approvals.js keeps the approvals inbox live over the websocket at /ws:
// the hello message replaces the list, approval.requested adds an ask,
// approval.resolved removes it (in every tab). A choice is sent as
// approval.decide when the socket is open; otherwise the form posts.
(function () {
  "use strict";
  var list = document.querySelector('[data-testid="approvals"]');
  var tmpl = document.getElementById("approval-template");
  var empty = document.querySelector('[data-testid="no-approvals"]');
  var status = document.querySelector('[data-testid="live-status"]');
  if (!list || !tmpl) { return; }
  var sock = null;
  var retry = 500;

  function setLive(on) {
    status.dataset.state = on ? "on" : "off";
    status.textContent = on ? "live" : "live updates off (reconnecting)";
  }

  function refreshEmpty() { empty.hidden = list.children.length > 0; }

  function text(v) { return v === undefined || v === null ? "" : String(v); }

  function summary(args) {
    if (!args) { return ""; }
    if (args.command) { return text(args.command).trim(); }
    if (args.cmd) { return text(args.cmd).trim(); }
    var keys = ["path", "file_path", "target_file", "file", "directory", "dir"];
    for (var i = 0; i < keys.length; i++) { if (args[keys[i]]) { return text(args[keys[i]]); } }
    return "";
  }

  function render(a) {
    var li = tmpl.content.firstElementChild.cloneNode(true);
    var req = a.request || {};
    li.dataset.approvalId = a.id;
    li.id = a.id; // the target of the link in approval notifications
    var set = function (field, value) {
      var el = li.querySelector('[data-field="' + field + '"]');
      if (!el) { return; }
      if (el.tagName === "INPUT") { el.value = value; } else { el.textContent = value; }
    };
    set("id", a.id);
    set("tool", text(req.tool_name));
    set("summary", summary(req.tool_args));
    set("args", JSON.stringify(req.tool_args || {}, null, 2));
    set("channel", text(req.channel_id) || "web");
    set("session", text(req.session_id) || "–");
    set("reason", text(a.asked && a.asked.reason));
    set("rule", text(a.asked && a.asked.matched_rule));
    var ext = (a.asked && a.asked.external_paths) || [];
    set("external", ext.length ? ext.join(", ") : "none");
    set("expires", text(a.expires_at));
    return li;
  }

  function find(id) {
    for (var i = 0; i < list.children.length; i++) {
      if (list.children[i].dataset.approvalId === id) { return list.children[i]; }
    }
    return null;
  }

  function add(a) { if (a && a.id && !find(a.id)) { list.appendChild(render(a)); } refreshEmpty(); }
  function remove(id) { var el = find(id); if (el) { el.remove(); } refreshEmpty(); }

  // failed shows why an answer was refused and lets the person try again;
  // an ask someone else answered first simply leaves the list.
  function failed(msg) {
    var li = msg.id ? find(msg.id) : null;
    if (!li) { return; }
    if (msg.code === "conflict" || msg.code === "not_found") { remove(msg.id); return; }
    li.querySelectorAll("button").forEach(function (b) { b.disabled = false; });
    var el = li.querySelector('[data-field="error"]');
    if (el) { el.textContent = text(msg.message); }
  }

  function onMessage(ev) {
    var msg;
    try { msg = JSON.parse(ev.data); } catch (e) { return; }
    switch (msg.type) {
      case "hello":
        list.innerHTML = "";
        (msg.pending || []).forEach(add);
        refreshEmpty();
        break;
      case "approval.requested":
        add(msg.approval);
        break;
      case "approval.resolved":
        if (msg.approval) { remove(msg.approval.id); }
        break;
      case "approval.decided":
        remove(msg.id);
        break;
      case "error":
        failed(msg);
        break;
    }
  }

  function connect() {
    var proto = location.protocol === "https:" ? "wss:" : "ws:";
    sock = new WebSocket(proto + "//" + location.host + "/ws");
    sock.onopen = function () { retry = 500; setLive(true); };
    sock.onmessage = onMessage;
    sock.onclose = function () {
      setLive(false);
      sock = null;
      setTimeout(connect, retry);
      retry = Math.min(retry * 2, 10000);
    };
  }

  // A choice goes over the socket when it is open; the ask then leaves the
  // list with the approval.resolved event. Otherwise the form posts.
  list.addEventListener("click", function (ev) {
    var btn = ev.target.closest("button[name=choice]");
    if (!btn || !sock || sock.readyState !== WebSocket.OPEN) { return; }
    ev.preventDefault();
    var li = btn.closest("[data-approval-id]");
    var err = li.querySelector('[data-field="error"]');
    if (err) { err.textContent = ""; }
    sock.send(JSON.stringify({ type: "approval.decide", id: li.dataset.approvalId, choice: btn.value }));
    li.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
  });

  connect();
})();
